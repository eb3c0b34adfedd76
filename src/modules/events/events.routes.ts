import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { ApiPluginOptions } from '../../context.js';
import { acceptCursorAliases } from '../../lib/pagination.js';
import { operation, operationErrors } from '../../lib/api-operations.js';
import * as schemas from './events.schemas.js';
import * as service from './events.service.js';

/** GET /events and GET /events/{eventId}: integrators reconcile what webhooks told them (EVT-6, ORD-10). */
export const eventRoutes: FastifyPluginAsyncTypebox<ApiPluginOptions> = async (app, { ctx }) => {
  app.get(
    '/events',
    {
      preValidation: acceptCursorAliases,
      schema: {
        ...operation('listEvents'),
        summary: 'List events',
        description:
          'Every event of this environment, newest first, exactly as webhooks deliver it (whether or not an endpoint was subscribed). Page with limit and startingAfter.',
        querystring: schemas.ListEventsQuery,
        response: { 200: schemas.EventList, ...operationErrors('listEvents') },
      },
    },
    async (request) => {
      return service.listEventPage(ctx.pool, request.tenant, request.query);
    },
  );

  app.get(
    '/events/:eventId',
    {
      schema: {
        ...operation('getEvent'),
        summary: 'Retrieve an event',
        description:
          'One event, exactly as webhooks deliver it. Events of other organizations or environments answer 404.',
        params: schemas.EventParams,
        response: { 200: schemas.EventSchema, ...operationErrors('getEvent') },
      },
    },
    async (request) => {
      return service.getEvent(ctx.pool, request.tenant, request.params.eventId);
    },
  );
};

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { ApiPluginOptions } from '../../context.js';
import { notFound } from '../../lib/errors.js';
import { acceptCursorAliases, toPage } from '../../lib/pagination.js';
import { operation, operationErrors } from '../../lib/api-operations.js';
import * as repo from './events.repo.js';
import * as schemas from './events.schemas.js';
import type { EventEnvelope } from './events.service.js';

/** GET /events and GET /events/{eventId}: integrators reconcile what webhooks told them (issue 4 item 5). */
export const eventRoutes: FastifyPluginAsyncTypebox<ApiPluginOptions> = async (app, { ctx }) => {
  app.get('/events', {
    preValidation: acceptCursorAliases,
    schema: {
      ...operation('listEvents'),
      summary: 'List events',
      description: 'Every event of this environment, newest first, exactly as webhooks deliver it (whether or not an endpoint was subscribed). Page with limit and startingAfter.',
      querystring: schemas.ListEventsQuery,
      response: { 200: schemas.EventList, ...operationErrors('listEvents') },
    },
  }, async (request) => {
    const limit = request.query.limit ?? 20;
    const rows = await repo.listEvents(ctx.pool, request.tenant, { ...request.query, limit });
    return toPage(rows, limit, toEnvelope);
  });

  app.get('/events/:eventId', {
    schema: {
      ...operation('getEvent'),
      summary: 'Retrieve an event',
      description: 'One event, exactly as webhooks deliver it. Events of other organizations or environments answer 404.',
      params: schemas.EventParams,
      response: { 200: schemas.EventSchema, ...operationErrors('getEvent') },
    },
  }, async (request) => {
    const row = await repo.findEvent(ctx.pool, request.tenant, request.params.eventId);
    if (!row) throw notFound('event', request.params.eventId);
    return toEnvelope(row);
  });
};

/** An events row as the envelope `{id, type, createdAt (ISO 8601, ms, UTC), data}`. */
export function toEnvelope(row: repo.EventRow): EventEnvelope {
  return { id: row.id, type: row.type, createdAt: row.created_at.toISOString(), data: row.data };
}

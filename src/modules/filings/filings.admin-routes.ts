import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { errorResponses } from '../../lib/schemas.js';
import * as schemas from './filings.schemas.js';
import * as service from './filings.service.js';

/** Operator routes of the filing team (FIL-11), under /admin/v1. The actor recorded is `operator`. */
export const filingsAdminRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.post(
    '/orders/:orderId/transitions',
    {
      schema: {
        tags: ['Filings'],
        summary: 'Move an order to another filing status',
        description:
          'Guards the transition, updates the order, records the status history and emits filing.status_changed in one transaction. Cancelling a balance-billed order reverses its debits; filing a formation sets the company formationDate; filing an EIN order sets the company ein.',
        params: schemas.OrderIdParams,
        body: schemas.TransitionBody,
        response: { 200: schemas.AdminOrderSchema, ...errorResponses(404, 409) },
      },
    },
    async (request) => {
      await service.transitionOrder(ctx, null, request.params.orderId, request.body, 'operator');
      return service.getOrderDetail(ctx, request.params.orderId);
    },
  );

  app.get(
    '/orders/:orderId',
    {
      schema: {
        tags: ['Filings'],
        summary: 'An order with its status history and documents',
        params: schemas.OrderIdParams,
        response: { 200: schemas.AdminOrderSchema, ...errorResponses(404) },
      },
    },
    async (request) => service.getOrderDetail(ctx, request.params.orderId),
  );

  app.get(
    '/orders',
    {
      schema: {
        tags: ['Filings'],
        summary: 'The filing queue: orders of every tenant, oldest first',
        querystring: schemas.AdminOrderListQuery,
        response: { 200: schemas.AdminOrderList, ...errorResponses() },
      },
    },
    async (request) => {
      const q = request.query;
      return service.listOrderQueue(ctx.pool, {
        filingStatus: q.status,
        filingState: q.state,
        orderType: q.orderType,
        environment: q.environment,
        organizationId: q.organizationId,
        limit: q.limit,
        startingAfter: q.startingAfter,
      });
    },
  );
};

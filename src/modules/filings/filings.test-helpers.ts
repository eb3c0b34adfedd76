import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { ApiPluginOptions } from '../../context.js';
import { operation, operationErrors } from '../../lib/api-operations.js';
import * as schemas from './filings.schemas.js';
import { transitionOrder } from './filings.service.js';
import { orderStatusView } from './filings.views.js';

/** POST /test_helpers/orders/{orderId}/advance (TEN-4, TEN-5): mounted only at the test base address. */
export const filingTestHelperRoutes: FastifyPluginAsyncTypebox<ApiPluginOptions> = async (
  app,
  { ctx, environment },
) => {
  // Defence in depth: app.ts mounts helpers only for test; a live mount would register nothing (404).
  if (environment !== 'test') return;
  app.post(
    '/orders/:orderId/advance',
    {
      schema: {
        ...operation('advanceTestOrder'),
        summary: 'Move a test order to another filing status (test only)',
        description:
          'In test, filings never advance on their own; this plays the filing team. Same rules as live: submitted -> pending; any non-terminal -> exception (exceptionCode required), filed (filingDate defaults to today) or cancelled (balance-billed debits reversed); exception -> submitted or pending; filed and cancelled are terminal (409). Emits filing.status_changed. A filed EIN order gets a fake EIN 00-NNNNNNN. Only at the test base address; the live address answers 404.',
        params: schemas.OrderIdParams,
        body: schemas.AdvanceBody,
        response: { 200: schemas.OrderStatusSchema, ...operationErrors('advanceTestOrder') },
      },
    },
    async (request) => {
      const { order, event } = await transitionOrder(
        ctx,
        request.tenant,
        request.params.orderId,
        request.body,
        'test_helper',
      );
      return orderStatusView(order, event.id);
    },
  );
};

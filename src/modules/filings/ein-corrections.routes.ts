import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { ApiPluginOptions } from '../../context.js';
import { operation, operationErrors } from '../../lib/api-operations.js';
import { attachedNonBodyErrors } from '../../lib/validation.js';
import { ResponsiblePartySchema } from '../orders/ein.schemas.js';
import { OrderItemSchema } from '../orders/orders.schemas.js';
import { toItemView } from '../orders/order-placement.js';
import { orderItemView } from '../orders/orders.views.js';
import { correctResponsibleParty, validResponsibleParty } from './ein-corrections.js';
import { OrderIdParams } from './filings.schemas.js';

/** PUT /orders/{orderId}/ein-responsible-party (ORD-EIN-8), at both base addresses; Idempotency-Key as on POSTs (IDEM-1). */
export const einCorrectionRoutes: FastifyPluginAsyncTypebox<ApiPluginOptions> = async (app, { ctx }) => {
  app.put(
    '/orders/:orderId/ein-responsible-party',
    {
      attachValidation: true,
      schema: {
        ...operation('correctEinResponsibleParty'),
        summary: "Correct an EIN order's responsible party",
        description: `When the IRS refuses an EIN application's responsible party, the order goes to filingStatus exception
with exceptionCode 483 (EIN SSN rejected) or 484 (EIN SSN does not match the person's name), reported by a
filing.status_changed event. Send the corrected party here: the same object as ein.responsibleParty of POST /orders, with
the same validation (SSN and ITIN ranges included). The new tax id replaces the old one, which is destroyed; it is
stored encrypted for the filing team and never returned. The order goes back to pending (a filing.status_changed event)
and is filed again; the answer is its order item.

Your customer can do the same in the dashboard: a magic link (POST /auth/magic-link with the order's companyId) opens
the company's page, where the order in exception offers "Correct the responsible party" (the page
<dashboard>/orders/{orderId}/responsible-party).

Errors: 400 validation (every bad field named; messages never repeat the tax id); 404 not_found for an order that is
not one of this environment's; 409 invalid_transition unless the order is an EIN order in exception 483 or 484 (a
retry after the first correction succeeded answers 409 too: send an Idempotency-Key to get the first answer back).`,
        params: OrderIdParams,
        body: ResponsiblePartySchema,
        response: { 200: OrderItemSchema, ...operationErrors('correctEinResponsibleParty') },
      },
    },
    async (request) => {
      const party = validResponsibleParty(request.body, attachedNonBodyErrors(request));
      const { order } = await correctResponsibleParty(ctx, request.tenant, request.params.orderId, party, 'api');
      return orderItemView(toItemView(order));
    },
  );
};

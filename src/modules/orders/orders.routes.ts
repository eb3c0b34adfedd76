import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { ApiPluginOptions } from '../../context.js';
import { operation, operationErrors } from '../../lib/api-operations.js';
import { attachedNonBodyErrors } from '../../lib/validation.js';
import { OrderBody, OrderResultSchema, QuoteSchema } from './orders.schemas.js';
import { checkedOrderBody, placeOrder, quoteOrder } from './orders.service.js';
import { orderItemView, quoteView } from './orders.views.js';

const ERRORS_DOC = `Errors: 400 validation (every bad field named with its rule, e.g. "formation rule 2"; expedited
formation outside LLCs in AZ, DE, FL, NV, NY, WY has the message 'Expedited formation is not available for the
selected state and entity type'); 404 not_found when userId or companyId is not one of this environment's (ids of
other organizations and environments included; \`errors\` names the field); 403 forbidden when userId is not an admin of the existing company; 409 ein_already_requested
(the company has an EIN or a non-cancelled EIN order) and 409 qualification_already_paid (a paid, non-cancelled
foreign qualification in filingState; a cancelled or unpaid one does not block).`;

/** POST /orders and POST /orders/quote (ORD-1 to ORD-13, ORD-9 for quotes, IDEM-1). No GET: there is no order-polling endpoint (ORD-10). */
export const orderRoutes: FastifyPluginAsyncTypebox<ApiPluginOptions> = async (app, { ctx }) => {
  app.post(
    '/orders',
    {
      attachValidation: true,
      schema: {
        ...operation('createOrder'),
        summary: 'Place orders',
        description: `Places one order item per product object, all for one company in one filingState, and debits the prepaid
balance of this environment at wholesale plus state fees, line by line (billing rules 1-7; see GET /balance-transactions).
The whole request is placed or nothing is: when the balance cannot cover the total the answer is 402 insufficient_balance
and nothing is written. A formation creates the company (the user becomes its admin). Items start at filingStatus
submitted; progress is reported only by filing.status_changed webhooks (there is no order-polling endpoint).

Answers 201 with one item per product. A registeredAgent for a company that already has active registered agent service
in filingState is a no-op (registeredAgent rule 4): the order succeeds (still 201, the same answer as placing it) with
the existing service's item, and nothing is created or charged for it. Use POST /orders/quote to see the priced lines
first. Cross-product rule 5 defines no idempotency-key mechanism; this service adds an optional Idempotency-Key
header (see its description) so retries after a timeout are safe. Without the header every request is placed anew.

Subscriptions: registeredAgent and annualReport items are yearly subscriptions (subscriptionStatus active) whose year
starts on the placement date (UTC). When the year ends, the renewal is debited from this environment's balance at the
then-current wholesale price (annual report: plus the state's current annual report fee), as ledger entries carrying
the orderId. If the balance is short nothing is debited and subscriptionStatus becomes past_due; renewal is retried
daily, and once the balance covers every year owed it is charged and the subscription is active again. Dashboard
orders paid by card become past_due at year end (no card is stored: order again). A cancelled order (subscriptionStatus
canceled) never renews, and a past_due registered agent is canceled once newer active service in the same state exists.
Every subscriptionStatus change is reported by a filing.status_changed event. Test-environment subscriptions renew the
same way from the test balance.

${ERRORS_DOC}`,
        body: OrderBody,
        response: { 201: OrderResultSchema, ...operationErrors('createOrder') },
      },
    },
    async (request, reply) => {
      // The request's one check of its schema and rules; placing takes only a checked body.
      const body = checkedOrderBody(request.body, attachedNonBodyErrors(request));
      const placed = await placeOrder(ctx, request.tenant, body, {
        source: 'api',
        billing: 'balance',
        actor: 'api',
        idempotencyKey: request.idempotencyKey,
      });
      // ORD-7: always 201, also for a pure registered-agent no-op (it "succeeds", ORD-RA-4), and one success status for
      // every placement keeps clients simple (the item returned is the existing one).
      return reply.status(201).send({ companyId: placed.companyId, items: placed.items.map(orderItemView) });
    },
  );

  app.post(
    '/orders/quote',
    {
      attachValidation: true,
      schema: {
        ...operation('quoteOrder'),
        summary: 'Quote orders',
        description: `Takes the same body as POST /orders and returns the lines it would debit (wholesale service prices and state
fees, dollars) and their total, without placing or writing anything. It runs the same rules, so it fails where the order
would, except that it never answers 402: compare total with your balance (GET /organization).

${ERRORS_DOC}`,
        body: OrderBody,
        response: { 200: QuoteSchema, ...operationErrors('quoteOrder') },
      },
    },
    async (request) => {
      const body = checkedOrderBody(request.body, attachedNonBodyErrors(request));
      return quoteView(await quoteOrder(ctx.pool, request.tenant, body, {}, ctx.prices));
    },
  );
};

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { ApiPluginOptions } from '../../context.js';
import { operation, operationErrors } from '../../lib/api-operations.js';
import { PageQuery } from '../../lib/schemas.js';
import { CreateTopUpBody, TopUpList, TopUpParams, TopUpSchema } from './top-ups.schemas.js';
import { createTopUp, getTopUp, listTopUpPage } from './top-ups.service.js';
import { topUpView } from './top-ups.views.js';

/** POST /balance/top-ups, GET /balance/top-ups, GET /balance/top-ups/{topUpId} (FUND-1..FUND-4, FUND-7, FUND-8). */
export const topUpRoutes: FastifyPluginAsyncTypebox<ApiPluginOptions> = async (app, { ctx }) => {
  app.post(
    '/balance/top-ups',
    {
      schema: {
        ...operation('createTopUp'),
        summary: 'Top up the balance',
        description:
          'Live: opens a Stripe Checkout page (card or US bank account / ACH debit) for `amount` dollars and answers the top-up `pending` with its `checkoutUrl`; the balance is credited only once Stripe confirms the money is there (a card at once, a bank debit after a few business days), with a `balance.top_up_succeeded` event, or not at all (`balance.top_up_failed`). Test: the same call credits the test balance at once and answers `succeeded` with `checkoutUrl` null; Stripe is never called. An amount outside the configured bounds answers 400 naming `amount` before anything is charged.',
        body: CreateTopUpBody,
        response: { 201: TopUpSchema, ...operationErrors('createTopUp') },
      },
    },
    async (request, reply) =>
      reply
        .status(201)
        .send(topUpView(await createTopUp(ctx, request.tenant, request.body.amount, request.idempotencyKey))),
  );

  app.get(
    '/balance/top-ups',
    {
      schema: {
        ...operation('listTopUps'),
        summary: 'List top-ups',
        description:
          "Top-ups of the key's environment, newest first. A `startingAfter` id that is not yours answers 404.",
        querystring: PageQuery,
        response: { 200: TopUpList, ...operationErrors('listTopUps') },
      },
    },
    async (request) => listTopUpPage(ctx.pool, request.tenant, request.query),
  );

  app.get(
    '/balance/top-ups/:topUpId',
    {
      schema: {
        ...operation('getTopUp'),
        summary: 'Retrieve a top-up',
        description: 'One top-up of this environment, with its status.',
        params: TopUpParams,
        response: { 200: TopUpSchema, ...operationErrors('getTopUp') },
      },
    },
    async (request) => topUpView(await getTopUp(ctx.pool, request.tenant, request.params.topUpId)),
  );
};

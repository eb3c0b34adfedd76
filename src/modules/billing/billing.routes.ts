import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { ApiPluginOptions } from '../../context.js';
import { operation, operationErrors } from '../../lib/api-operations.js';
import { PageQuery } from '../../lib/schemas.js';
import { addCredit, listBalanceTransactions } from './balance.service.js';
import { balanceTransactionView, priceRowView } from './billing.views.js';
import * as s from './billing.schemas.js';
import { deleteTenantPrice, listPriceRows, updateTenantPrice } from './prices.service.js';
import { withFields } from '../../lib/objects.js';

/** Integrator routes: prices (PRICE-2, PRICE-4 to PRICE-6) and the ledger (BILL-15); the test-mode credit (TEN-7). */
export const billingRoutes: FastifyPluginAsyncTypebox<ApiPluginOptions> = async (app, { ctx }) => {
  app.get(
    '/organization/prices',
    {
      schema: {
        ...operation('listPrices'),
        summary: 'List your prices',
        description:
          'Every product type (all nine, catalogue order) with its wholesaleAmount, retailAmount and defaultAmount, wrapped as `{object: "list", data, hasMore: false}`. Not paginated. Retail prices and enabled flags are per environment; wholesale prices are per organization.',
        response: { 200: s.PriceListSchema, ...operationErrors('listPrices') },
      },
    },
    async (request) => ({
      object: 'list' as const,
      data: (await listPriceRows(ctx.pool, request.tenant)).map(priceRowView),
      hasMore: false,
    }),
  );

  app.put(
    '/organization/prices/:type',
    {
      schema: {
        ...operation('updatePrice'),
        summary: 'Set a retail price or enable/disable a formation tier',
        description:
          "retailAmount is whole dollars and at least the wholesale floor (your organization's wholesale price for the type); below it answers 400 `price_below_floor` with `minimumAmount` (dollars). enabled false is accepted only for formation_tier_1/2/3, and at least one tier must stay enabled (400 otherwise). Disabling a tier hides it from dashboard checkout only; API orders are never blocked. An unknown type answers 404.",
        params: s.PriceTypeParams,
        body: s.UpdatePriceBody,
        response: { 200: s.PriceRowSchema, ...operationErrors('updatePrice') },
      },
    },
    async (request) =>
      priceRowView(await updateTenantPrice(ctx.pool, request.tenant, request.params.type, request.body)),
  );

  app.delete(
    '/organization/prices/:type',
    {
      schema: {
        ...operation('deletePrice'),
        summary: 'Revert a product to the list price',
        description:
          "Removes the custom retailAmount, so checkout uses defaultAmount again; answers the resulting Price row. A tier's enabled flag is kept. 404 when no custom price is set or the type is unknown.",
        params: s.PriceTypeParams,
        response: { 200: s.PriceRowSchema, ...operationErrors('deletePrice') },
      },
    },
    async (request) => priceRowView(await deleteTenantPrice(ctx.pool, request.tenant, request.params.type)),
  );

  app.get(
    '/balance-transactions',
    {
      schema: {
        ...operation('listBalanceTransactions'),
        summary: 'List balance transactions',
        description:
          "The prepaid balance ledger of the key's environment, newest first: credits, one debit per priced line of an order (service lines by product type, state fees as `state_fee`), and reversals when an order is cancelled. Amounts in dollars, debits negative. A `startingAfter` id that is not yours answers 404.",
        querystring: PageQuery,
        response: { 200: s.BalanceTransactionListSchema, ...operationErrors('listBalanceTransactions') },
      },
    },
    async (request) => {
      const page = await listBalanceTransactions(ctx.pool, request.tenant, request.query);
      return withFields(page, { data: page.data.map(balanceTransactionView) });
    },
  );
};

/** Test helper: POST /test_helpers/balance-credits adds test money (test environment only). */
export const billingTestHelperRoutes: FastifyPluginAsyncTypebox<ApiPluginOptions> = async (app, { ctx }) => {
  app.post(
    '/balance-credits',
    {
      schema: {
        ...operation('createTestBalanceCredit'),
        summary: 'Add test money to the balance',
        description:
          'Credits the test balance with `amount` dollars (> 0, at most two decimals). Answers the credit as a balance transaction; `balanceAfter` is the new balance.',
        body: s.TestCreditBody,
        response: { 201: s.BalanceTransactionSchema, ...operationErrors('createTestBalanceCredit') },
      },
    },
    async (request, reply) =>
      reply
        .status(201)
        .send(
          balanceTransactionView(
            await addCredit(ctx.pool, request.tenant, request.body.amount, 'Test credit', 'test_helper'),
          ),
        ),
  );
};

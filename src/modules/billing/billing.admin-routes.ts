import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { errorResponses } from '../../lib/schemas.js';
import { operatorTokenActor } from '../audit/audit.service.js';
import { addCredit } from './balance.service.js';
import * as s from './billing.schemas.js';
import {
  balanceTransactionView,
  catalogChangeView,
  catalogView,
  orgWholesaleChangeView,
  orgWholesaleView,
  stateFeeView,
} from './billing.views.js';
import { listStateFees, updateStateFee } from './state-fees.service.js';
import {
  listCatalog,
  listOrgWholesale,
  removeOrgWholesale,
  setCatalogPrice,
  setOrgWholesale,
} from './wholesale.service.js';

// The admin API authenticates one operator token, so changes are recorded as made by 'operator'.
const ACTOR = 'operator';

/** Operator routes (/admin/v1): wholesale prices (PRICE-7), state fees (BILL-16), balance credits (BILL-14). */
export const billingAdminRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.get('/wholesale-prices', { schema: { tags: ['Billing'] } }, async () => ({
    object: 'list' as const,
    data: (await listCatalog(ctx.pool)).map(catalogView),
    hasMore: false,
  }));

  app.put(
    '/wholesale-prices/:type',
    {
      schema: { tags: ['Billing'], params: s.PriceTypeParams, body: s.CatalogPriceBody, response: errorResponses(404) },
    },
    async (request) => catalogChangeView(await setCatalogPrice(ctx.pool, request.params.type, request.body)),
  );

  app.get(
    '/organizations/:id/wholesale-prices',
    {
      schema: { tags: ['Billing'], params: s.OrgIdParams, response: errorResponses(404) },
    },
    async (request) => ({
      object: 'list' as const,
      data: (await listOrgWholesale(ctx.pool, request.params.id)).map(orgWholesaleView),
      hasMore: false,
    }),
  );

  app.put(
    '/organizations/:id/wholesale-prices/:type',
    {
      schema: { tags: ['Billing'], params: s.OrgTypeParams, body: s.OrgWholesaleBody, response: errorResponses(404) },
    },
    async (request) =>
      orgWholesaleChangeView(
        await setOrgWholesale(
          ctx.pool,
          request.params.id,
          request.params.type,
          request.body.wholesaleAmount,
          operatorTokenActor(request),
        ),
      ),
  );

  app.delete(
    '/organizations/:id/wholesale-prices/:type',
    {
      schema: { tags: ['Billing'], params: s.OrgTypeParams, response: errorResponses(404) },
    },
    async (request) =>
      orgWholesaleChangeView(
        await removeOrgWholesale(ctx.pool, request.params.id, request.params.type, operatorTokenActor(request)),
      ),
  );

  app.get('/state-fees', { schema: { tags: ['Billing'] } }, async () => ({
    object: 'list' as const,
    data: (await listStateFees(ctx.pool)).map(stateFeeView),
    hasMore: false,
  }));

  app.put(
    '/state-fees/:state',
    {
      schema: { tags: ['Billing'], params: s.StateParams, body: s.StateFeeBody, response: errorResponses(404) },
    },
    async (request) => stateFeeView(await updateStateFee(ctx.pool, request.params.state, request.body, ACTOR)),
  );

  app.post(
    '/organizations/:id/balance-credits',
    {
      schema: { tags: ['Billing'], params: s.OrgIdParams, body: s.AdminCreditBody, response: errorResponses(404) },
    },
    async (request, reply) => {
      const { environment, amount, note } = request.body;
      const tenant = { organizationId: request.params.id, environment };
      const entry = await addCredit(ctx.pool, tenant, amount, note ?? 'Operator credit', ACTOR);
      return reply.status(201).send(balanceTransactionView(entry));
    },
  );
};

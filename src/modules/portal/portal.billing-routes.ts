import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { sendCsv } from '../../lib/csv.js';
import { AppError, ValidationError } from '../../lib/errors.js';
import { ledgerEntriesOf } from '../billing/balance.service.js';
import { LEDGER_CSV_HEADER, ledgerCsvLine } from '../billing/billing.views.js';
import { deleteTenantPrice, updateTenantPrice } from '../billing/prices.service.js';
import { parseDollars } from '../console/console.forms.js';
import { field } from '../console/console.web.js';
import { balancePageView, ledgerFilterOf, pricesPageView, type Query } from './business.service.js';
import { auditActorOf, PORTAL_PREFIX, redirectWith, render, requireTenant } from './portal.web.js';
import { askedForStepUp } from './step-up.js';

const PRICES = `${PORTAL_PREFIX}/prices`;

/**
 * The balance with its ledger and CSV export (PORTAL-33, PORTAL-34) and the retail prices of dashboard checkout
 * (PORTAL-35), for owners and admins only (billing.read, prices.read, prices.write). Prices change through the
 * service of PUT /organization/prices/{type}, with its validations (PRICE-4), in the session's environment only.
 */
export async function portalBillingRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  app.get<{ Querystring: Query }>('/balance', { schema: { hide: true } }, async (request, reply) => {
    const tenant = requireTenant(request, 'billing.read');
    const view = await balancePageView(ctx, tenant, request.query);
    return render(ctx, request, reply, 'balance', { title: 'Balance', section: 'balance', ...view });
  });

  // PORTAL-34: every entry of the filter (not one page), read in keyset batches and streamed, dollars at this edge.
  app.get<{ Querystring: Query }>('/balance/ledger.csv', { schema: { hide: true } }, async (request, reply) => {
    const tenant = requireTenant(request, 'billing.read');
    const { filter, problems } = ledgerFilterOf(request.query);
    const [first] = Object.entries(problems);
    if (first) throw new ValidationError([{ field: first[0], message: first[1] }]);
    async function* lines() {
      yield LEDGER_CSV_HEADER;
      for await (const entry of ledgerEntriesOf(ctx.pool, tenant, filter)) yield ledgerCsvLine(entry);
    }
    return sendCsv(reply, `ledger-${tenant.environment}-${new Date().toISOString().slice(0, 10)}.csv`, lines());
  });

  app.get('/prices', { schema: { hide: true } }, async (request, reply) => {
    const tenant = requireTenant(request, 'prices.read');
    return renderPrices(ctx, request, reply, await pricesPageView(ctx, tenant), {});
  });

  app.post<{ Params: { type: string } }>('/prices/:type', { schema: { hide: true } }, async (request, reply) => {
    const tenant = requireTenant(request, 'prices.write');
    // A live price is a live setting: it asks for a recent second factor (PORTAL-10).
    if (askedForStepUp(request, reply, PRICES)) return reply;
    const { type } = request.params;
    const typed = field(request.body, 'retailAmount');
    try {
      const price = await updateTenantPrice(
        ctx.pool,
        tenant,
        type,
        { retailAmount: parseDollars(typed, 'retailAmount') },
        auditActorOf(request),
      );
      return redirectWith(ctx, request, reply, PRICES, {
        kind: 'ok',
        text: `${price.name}: the ${tenant.environment} retail price is saved.`,
      });
    } catch (err) {
      if (!(err instanceof AppError) || err.status >= 500 || err.status === 404) throw err;
      // The refusal is shown beside the product's field, with what was typed kept (PRICE-4).
      reply.status(err.status);
      return renderPrices(ctx, request, reply, await pricesPageView(ctx, tenant), {
        [type]: { message: err.message, value: typed },
      });
    }
  });

  app.post<{ Params: { type: string } }>('/prices/:type/revert', { schema: { hide: true } }, async (request, reply) => {
    const tenant = requireTenant(request, 'prices.write');
    if (askedForStepUp(request, reply, PRICES)) return reply;
    const price = await deleteTenantPrice(ctx.pool, tenant, request.params.type, auditActorOf(request));
    return redirectWith(ctx, request, reply, PRICES, {
      kind: 'ok',
      text: `${price.name}: back to the list price in ${tenant.environment}.`,
    });
  });
}

function renderPrices(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  view: Awaited<ReturnType<typeof pricesPageView>>,
  errors: Record<string, { message: string; value: string }>,
) {
  return render(ctx, request, reply, 'prices', { title: 'Retail prices', section: 'prices', ...view, errors });
}

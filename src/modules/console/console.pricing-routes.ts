import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.js';
import { notFound } from '../../lib/errors.js';
import { FEE_FIELDS, listStateFees, updateStateFee, type StateFeeUpdate } from '../billing/state-fees.service.js';
import {
  catalogChangeView,
  catalogView,
  orgWholesaleChangeView,
  orgWholesaleView,
  stateFeeView,
} from '../billing/billing.views.js';
import {
  listCatalog,
  listOrgWholesale,
  removeOrgWholesale,
  setCatalogPrice,
  setOrgWholesale,
} from '../billing/wholesale.service.js';
import { listOrganizations } from '../organizations/organizations.service.js';
import { formAction, parseDollars } from './console.forms.js';
import { actorOf, auditActorOf, CONSOLE_PREFIX, field, render } from './console.web.js';

/** Labels of the fee fields of the state fee schedule, in table order. */
const FEE_LABELS: Record<string, string> = {
  llcFormation: 'LLC formation',
  corpFormation: 'Corporation formation',
  llcForeignQualification: 'Foreign LLC qualification',
  corpForeignQualification: 'Foreign corporation qualification',
  llcAnnualReport: 'LLC annual report',
  corpAnnualReport: 'Corporation annual report',
  expeditedFormation: 'Expedited LLC formation',
};

/**
 * Wholesale prices (the catalogue default and per-organization overrides) and the state fee schedule
 * (CONS-5). Every change goes through the billing services, which also apply PRICE-7.
 */
export async function consolePricingRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  app.get<{ Querystring: Record<string, string | undefined> }>(
    '/prices',
    { schema: { hide: true } },
    async (request, reply) => {
      const orgId = request.query.organizationId || '';
      const [catalogRows, organizations] = await Promise.all([listCatalog(ctx.pool), listOrganizations(ctx.pool)]);
      const catalog = catalogRows.map(catalogView);
      const orgPrices = orgId ? (await listOrgWholesale(ctx.pool, orgId)).map(orgWholesaleView) : null;
      const org = orgId ? (organizations.find((o) => o.id === orgId) ?? null) : null;
      return render(ctx, request, reply, 'prices', {
        title: 'Wholesale prices',
        section: 'prices',
        catalog,
        organizations,
        orgPrices,
        org,
      });
    },
  );

  app.post<{ Params: { type: string } }>('/prices/:type', { schema: { hide: true } }, async (request, reply) => {
    const { type } = request.params;
    return formAction(ctx, request, reply, `${CONSOLE_PREFIX}/prices`, async () => {
      const wholesale = field(request.body, 'wholesaleAmount');
      const list = field(request.body, 'defaultAmount');
      const result = catalogChangeView(
        await setCatalogPrice(ctx.pool, type, {
          wholesaleAmount: wholesale ? parseDollars(wholesale, 'wholesaleAmount') : undefined,
          defaultAmount: list ? parseDollars(list, 'defaultAmount') : undefined,
        }),
      );
      request.log.info({ type, operator: actorOf(request) }, 'catalogue price changed in the console');
      return `${result.price.name}: wholesale $${result.price.wholesaleAmount}, list $${result.price.defaultAmount}.${raisedText(result.retailPricesRaised.length)}`;
    });
  });

  app.post<{ Params: { id: string; type: string } }>(
    '/prices/organizations/:id/:type',
    { schema: { hide: true } },
    async (request, reply) => {
      const { id, type } = request.params;
      const back = `${CONSOLE_PREFIX}/prices?organizationId=${encodeURIComponent(id)}`;
      return formAction(ctx, request, reply, back, async () => {
        if (field(request.body, 'remove') === 'yes') {
          const result = orgWholesaleChangeView(await removeOrgWholesale(ctx.pool, id, type, auditActorOf(request)));
          return `${type}: override removed; the default wholesale $${result.wholesaleAmount} applies.${raisedText(result.retailPricesRaised.length)}`;
        }
        const result = orgWholesaleChangeView(
          await setOrgWholesale(
            ctx.pool,
            id,
            type,
            parseDollars(field(request.body, 'wholesaleAmount'), 'wholesaleAmount'),
            auditActorOf(request),
          ),
        );
        request.log.info(
          { organizationId: id, type, operator: actorOf(request) },
          'organization wholesale price changed in the console',
        );
        return `${type}: this organization's wholesale price is $${result.wholesaleAmount}.${raisedText(result.retailPricesRaised.length)}`;
      });
    },
  );

  app.get('/fees', { schema: { hide: true } }, async (request, reply) =>
    render(ctx, request, reply, 'fees', {
      title: 'State fee schedule',
      section: 'fees',
      fees: (await listStateFees(ctx.pool)).map(stateFeeView),
      feeFields: FEE_FIELDS,
      feeLabels: FEE_LABELS,
    }),
  );

  app.get<{ Params: { state: string } }>('/fees/:state', { schema: { hide: true } }, async (request, reply) => {
    const state = request.params.state.toUpperCase();
    const fee = (await listStateFees(ctx.pool)).map(stateFeeView).find((f) => f.state === state);
    if (!fee) throw notFound('state fee schedule', state);
    return render(ctx, request, reply, 'fee-edit', {
      title: `State fees · ${fee.name}`,
      section: 'fees',
      fee,
      feeFields: FEE_FIELDS,
      feeLabels: FEE_LABELS,
    });
  });

  app.post<{ Params: { state: string } }>('/fees/:state', { schema: { hide: true } }, async (request, reply) => {
    const state = request.params.state.toUpperCase();
    const back = `${CONSOLE_PREFIX}/fees/${encodeURIComponent(state)}`;
    return formAction(ctx, request, reply, back, async () => {
      const update: StateFeeUpdate = { note: field(request.body, 'note') || undefined };
      for (const f of FEE_FIELDS) {
        if ((request.body as Record<string, unknown> | undefined)?.[f] === undefined) continue;
        const raw = field(request.body, f);
        if (f === 'expeditedFormation' && (raw === '' || raw.toLowerCase() === 'none'))
          update[f] = field(request.body, 'expeditedWas') ? null : undefined;
        // Every other fee the form sends is required: an emptied field is refused, never read as "leave it as it was".
        else update[f] = parseDollars(raw, FEE_LABELS[f] ?? f);
      }
      const row = await updateStateFee(ctx.pool, state, update, actorOf(request));
      return `${row.name} fee schedule saved.`;
    });
  });
}

function raisedText(n: number): string {
  return n ? ` ${n} retail price${n === 1 ? ' was' : 's were'} raised to the new floor (billing rule 11).` : '';
}

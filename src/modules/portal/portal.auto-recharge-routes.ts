import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext, Tenant } from '../../context.js';
import { AppError, FieldErrors, ValidationError } from '../../lib/errors.js';
import { parseDollars } from '../console/console.forms.js';
import { field } from '../console/console.web.js';
import { AUTO_RECHARGE_PORTAL_PATH } from '../funding/auto-recharge.routes.js';
import { getAutoRecharge, startMethodSetup, updateAutoRecharge } from '../funding/auto-recharge.service.js';
import { autoRechargeSettingsView } from '../funding/auto-recharge.views.js';
import { auditActorOf, PORTAL_PREFIX, redirectWith, render, requireRole, requireTenant } from './portal.web.js';
import { askedForStepUp } from './step-up.js';

/** The page's address in the portal. */
const PAGE = `${PORTAL_PREFIX}${AUTO_RECHARGE_PORTAL_PATH}`;

/**
 * Auto-recharge in the portal (FUND-37): owners and admins see the settings, the saved method and the newest recharge
 * with why it failed; only owners, while the session shows live, change the settings (through the service of
 * PUT /balance/auto-recharge, recorded in the audit log as the member) or open Stripe's setup page to save a card or
 * US bank account.
 */
export async function portalAutoRechargeRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  app.get<{ Querystring: { autoRecharge?: string } }>(
    PAGE.slice(PORTAL_PREFIX.length),
    { schema: { hide: true } },
    async (request, reply) => {
      const tenant = requireTenant(request, 'billing.read');
      const notice =
        request.query.autoRecharge === 'saved'
          ? 'Stripe is confirming the payment method; it shows here as saved once Stripe has told us (usually within seconds).'
          : request.query.autoRecharge === 'cancelled'
            ? 'No payment method was saved.'
            : null;
      return renderPage(ctx, request, reply, tenant, {}, notice);
    },
  );

  app.post(PAGE.slice(PORTAL_PREFIX.length), { schema: { hide: true } }, async (request, reply) => {
    const tenant = ownerTenant(request);
    if (askedForStepUp(request, reply, PAGE)) return reply;
    const typed = (name: string) => field(request.body, name);
    try {
      const errors = new FieldErrors();
      const dollars = (name: string) => {
        try {
          return parseDollars(typed(name), name);
        } catch (err) {
          errors.add(name, err instanceof ValidationError ? err.errors[0]!.message : String(err));
          return 0;
        }
      };
      const input = { enabled: typed('enabled') === 'on', threshold: dollars('threshold'), amount: dollars('amount') };
      errors.throwIfAny();
      await updateAutoRecharge(ctx, tenant, input, auditActorOf(request));
      return redirectWith(ctx, request, reply, PAGE, { kind: 'ok', text: 'Auto-recharge is saved.' });
    } catch (err) {
      if (!(err instanceof AppError) || err.status >= 500 || err.status === 403) throw err;
      const listed = (err.extra.errors ?? []) as Array<{ field: string; message: string }>;
      reply.status(err.status);
      return renderPage(
        ctx,
        request,
        reply,
        tenant,
        Object.fromEntries(listed.map((e) => [e.field, e.message])),
        null,
        {
          threshold: typed('threshold'),
          amount: typed('amount'),
        },
      );
    }
  });

  app.post(`${PAGE.slice(PORTAL_PREFIX.length)}/setup`, { schema: { hide: true } }, async (request, reply) => {
    const tenant = ownerTenant(request);
    if (askedForStepUp(request, reply, PAGE)) return reply;
    const page = await startMethodSetup(ctx, tenant, `${ctx.config.portalBaseUrl}${AUTO_RECHARGE_PORTAL_PATH}`);
    return reply.redirect(page.url, 303);
  });
}

/**
 * The tenant of auto-recharge's forms: an owner (FUND-37) whose session shows live.
 * @throws AppError forbidden naming who may, or the switch to use.
 */
function ownerTenant(request: FastifyRequest): Tenant {
  const org = requireRole(request, 'billing.write');
  if (org.role !== 'owner')
    throw new AppError('forbidden', `Your role (${org.role}) may not change auto-recharge: only owners do.`);
  const tenant = requireTenant(request, 'billing.write');
  if (tenant.environment !== 'live')
    throw new AppError('forbidden', 'Auto-recharge refills the live balance: switch to Live to change it.');
  return tenant;
}

async function renderPage(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  tenant: Tenant,
  errors: Record<string, string>,
  notice: string | null,
  typed: { threshold: string; amount: string } | null = null,
) {
  const view = autoRechargeSettingsView(await getAutoRecharge(ctx.pool, tenant.organizationId));
  return render(ctx, request, reply, 'auto-recharge', {
    title: 'Auto-recharge',
    section: 'balance',
    settings: view,
    isOwner: request.portalSession?.organization?.role === 'owner',
    errors,
    notice,
    form: typed ?? {
      threshold: view.threshold === null ? '' : view.threshold.toFixed(2),
      amount: view.amount === null ? '' : view.amount.toFixed(2),
    },
  });
}

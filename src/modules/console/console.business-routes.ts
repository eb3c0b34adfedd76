import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext, Environment } from '../../context.js';
import { ValidationError } from '../../lib/errors.js';
import { formatDollars } from '../../lib/money.js';
import { addCredit } from '../billing/balance.service.js';
import { balanceTransactionView } from '../billing/billing.views.js';
import {
  addApiKey,
  createOrganization,
  normalizeContactEmail,
  revokeKey,
  type NewApiKey,
} from '../organizations/organizations.service.js';
import { formAction, parseDollars } from './console.forms.js';
import { actorOf, auditActorOf, CONSOLE_PREFIX, field, redirectWith, render } from './console.web.js';
import {
  listOrganizationSummaries,
  organizationDetail,
  recentLedger,
  setWhiteLabelDomain,
  verifyDomainForOperator,
} from './organizations.console.js';
import { deliveryBacklog, disabledEndpoints, organizationWebhookHealth, webhookOverview } from './webhook-health.js';

/**
 * Organizations (create with an optional technical contact, balances, live credit, keys, white-label domain) and
 * webhook health with disabled endpoints first (CONS-5; WH-6, WH-19).
 */
export async function consoleBusinessRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  app.get('/organizations', { schema: { hide: true } }, async (request, reply) =>
    render(ctx, request, reply, 'organizations', {
      title: 'Organizations',
      section: 'organizations',
      organizations: await listOrganizationSummaries(ctx.pool),
    }),
  );

  app.post('/organizations', { schema: { hide: true } }, async (request, reply) => {
    const name = field(request.body, 'name');
    if (!name)
      return redirectWith(ctx, request, reply, `${CONSOLE_PREFIX}/organizations`, {
        kind: 'error',
        text: 'Give the organization a name.',
      });
    let contactEmail: string | null;
    try {
      contactEmail = normalizeContactEmail(field(request.body, 'contactEmail'));
    } catch (err) {
      if (err instanceof ValidationError)
        return redirectWith(ctx, request, reply, `${CONSOLE_PREFIX}/organizations`, {
          kind: 'error',
          text: err.message,
        });
      throw err;
    }
    const { organization, apiKeys } = await createOrganization(ctx.pool, name.slice(0, 200), { contactEmail });
    request.log.info(
      { organizationId: organization.id, operator: actorOf(request) },
      'organization created in the console',
    );
    return renderOrganization(ctx, request, reply.status(201), organization.id, [apiKeys.live, apiKeys.test]);
  });

  app.get<{ Params: { id: string } }>('/organizations/:id', { schema: { hide: true } }, async (request, reply) =>
    renderOrganization(ctx, request, reply, request.params.id, []),
  );

  app.post<{ Params: { id: string } }>(
    '/organizations/:id/credit',
    { schema: { hide: true } },
    async (request, reply) => {
      const { id } = request.params;
      const back = orgUrl(id);
      if (field(request.body, 'confirm') !== 'yes')
        return redirectWith(ctx, request, reply, back, {
          kind: 'error',
          text: 'Tick the confirmation box to credit the balance.',
        });
      const note = field(request.body, 'note');
      if (!note)
        return redirectWith(ctx, request, reply, back, {
          kind: 'error',
          text: 'A note is required: say why the balance is credited (e.g. wire received, reference).',
        });
      return formAction(ctx, request, reply, back, async () => {
        const txn = balanceTransactionView(
          await addCredit(
            ctx.pool,
            { organizationId: id, environment: 'live' },
            parseDollars(field(request.body, 'amount'), 'amount'),
            note,
            actorOf(request),
          ),
        );
        return `Credited ${formatDollars(txn.amount)} to the live balance; it is now ${formatDollars(txn.balanceAfter)} (${txn.id}).`;
      });
    },
  );

  app.post<{ Params: { id: string } }>(
    '/organizations/:id/keys',
    { schema: { hide: true } },
    async (request, reply) => {
      const { id } = request.params;
      const environment = field(request.body, 'environment') as Environment;
      if (environment !== 'live' && environment !== 'test')
        throw new ValidationError([{ field: 'environment', message: 'must be live or test' }]);
      const key = await addApiKey(ctx.pool, id, environment, undefined, auditActorOf(request));
      request.log.info(
        { organizationId: id, keyId: key.id, operator: actorOf(request) },
        'API key created in the console',
      );
      return renderOrganization(ctx, request, reply.status(201), id, [key]);
    },
  );

  app.post<{ Params: { id: string; keyId: string } }>(
    '/organizations/:id/keys/:keyId/revoke',
    { schema: { hide: true } },
    async (request, reply) => {
      const { id, keyId } = request.params;
      if (field(request.body, 'confirm') !== 'yes')
        return redirectWith(ctx, request, reply, orgUrl(id), {
          kind: 'error',
          text: 'Tick the confirmation box to revoke the key.',
        });
      return formAction(ctx, request, reply, orgUrl(id), async () => {
        const key = await revokeKey(ctx.pool, id, keyId, undefined, auditActorOf(request));
        request.log.info({ organizationId: id, keyId, operator: actorOf(request) }, 'API key revoked in the console');
        return `Revoked ${key.id} (${key.redacted}). Requests with it now get 401.`;
      });
    },
  );

  app.post<{ Params: { id: string } }>(
    '/organizations/:id/domain',
    { schema: { hide: true } },
    async (request, reply) => {
      const { id } = request.params;
      return formAction(ctx, request, reply, orgUrl(id), async () => {
        const verified = field(request.body, 'verified') === 'yes';
        const org = await setWhiteLabelDomain(ctx, id, field(request.body, 'whiteLabelDomain') || null, {
          verified,
          audit: auditActorOf(request),
        });
        if (verified && org.whiteLabelDomain)
          request.log.info(
            { organizationId: id, domain: org.whiteLabelDomain, operator: actorOf(request) },
            'white-label domain vouched for in the console',
          );
        const v = org.whiteLabelDomainVerification;
        if (!org.whiteLabelDomain || !v) return 'White-label domain removed; links use the default dashboard address.';
        return v.status === 'verified'
          ? `White-label domain ${org.whiteLabelDomain} is in effect.`
          : `White-label domain ${org.whiteLabelDomain} is pending: it takes effect once the TXT record ${v.recordName} holds ${v.recordValue} and is verified.`;
      });
    },
  );

  app.post<{ Params: { id: string } }>(
    '/organizations/:id/domain/verify',
    { schema: { hide: true } },
    async (request, reply) => {
      const { id } = request.params;
      return formAction(ctx, request, reply, orgUrl(id), async () => {
        const org = await verifyDomainForOperator(ctx, id, auditActorOf(request));
        return `White-label domain ${org.whiteLabelDomain} is verified and in effect.`;
      });
    },
  );

  app.get<{ Querystring: Record<string, string | undefined> }>(
    '/webhooks',
    { schema: { hide: true } },
    async (request, reply) => {
      const orgId = request.query.organizationId;
      if (orgId) return reply.redirect(`${CONSOLE_PREFIX}/webhooks/${encodeURIComponent(orgId)}`);
      const [overview, disabled, backlog] = await Promise.all([
        webhookOverview(ctx.pool),
        disabledEndpoints(ctx.pool),
        deliveryBacklog(ctx.pool),
      ]);
      return render(ctx, request, reply, 'webhooks', {
        title: 'Webhook health',
        section: 'webhooks',
        overview,
        disabled,
        backlog,
      });
    },
  );

  app.get<{ Params: { id: string } }>('/webhooks/:id', { schema: { hide: true } }, async (request, reply) => {
    const health = await organizationWebhookHealth(ctx.pool, request.params.id);
    return render(ctx, request, reply, 'webhook-health', {
      title: `Webhooks · ${health.organization.name}`,
      section: 'webhooks',
      health,
    });
  });
}

function orgUrl(id: string): string {
  return `${CONSOLE_PREFIX}/organizations/${encodeURIComponent(id)}`;
}

async function renderOrganization(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  id: string,
  newKeys: NewApiKey[],
) {
  const org = await organizationDetail(ctx, id);
  const [liveLedger, health] = await Promise.all([
    recentLedger(ctx.pool, id, 'live'),
    organizationWebhookHealth(ctx.pool, id, 0),
  ]);
  return render(ctx, request, reply, 'organization', {
    title: org.name,
    section: 'organizations',
    org,
    newKeys,
    liveLedger,
    endpoints: health.endpoints,
  });
}

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext, Tenant } from '../../context.js';
import { AppError } from '../../lib/errors.js';
import { validated } from '../../lib/validation.js';
import { field } from '../console/console.web.js';
import { verifyWhiteLabelDomain } from '../organizations/domain-verification.js';
import { updateOrganizationSettings } from '../organizations/organization-settings.js';
import { UpdateOrganizationBody } from '../organizations/organizations.schemas.js';
import { brandingPageView } from './business.service.js';
import { auditActorOf, PORTAL_PREFIX, redirectWith, render, requireTenant } from './portal.web.js';
import { askedForStepUp } from './step-up.js';

/** Where the branding page sends its forms back to. */
const BRANDING = `${PORTAL_PREFIX}/branding`;

/**
 * The dashboard's branding and the white-label domain (PORTAL-36): read by every member, changed by owners and
 * admins through the services of PATCH /organization and POST /organization/white-label-domain/verify (ORG-3, ORG-4).
 * They are one set per organization that reaches live customers, so they change only while the session shows live
 * (PORTAL-37), as they change only with a live key.
 */
export async function portalSettingsRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  app.get('/branding', { schema: { hide: true } }, async (request, reply) => {
    const tenant = requireTenant(request, 'settings.read');
    return renderBranding(ctx, request, reply, tenant, {});
  });

  app.post('/branding', { schema: { hide: true } }, async (request, reply) => {
    const tenant = writableTenant(request);
    if (askedForStepUp(request, reply, BRANDING)) return reply;
    const value = (name: string) => field(request.body, name) || null;
    const sent = {
      branding: { logoUrl: value('logoUrl'), primaryColor: value('primaryColor'), accentColor: value('accentColor') },
    };
    return settingsForm(ctx, request, reply, tenant, 'The branding is saved.', async () => {
      // The body PATCH /organization validates, checked by the same schema (an empty field clears its setting).
      await saveSettings(ctx, request, tenant, sent);
    });
  });

  app.post('/branding/domain', { schema: { hide: true } }, async (request, reply) => {
    const tenant = writableTenant(request);
    if (askedForStepUp(request, reply, BRANDING)) return reply;
    const domain = field(request.body, 'whiteLabelDomain') || null;
    const done = domain ? 'The domain is requested: publish its TXT record, then verify it.' : 'The domain is removed.';
    return settingsForm(ctx, request, reply, tenant, done, async () => {
      await saveSettings(ctx, request, tenant, { whiteLabelDomain: domain });
    });
  });

  app.post('/branding/domain/verify', { schema: { hide: true } }, async (request, reply) => {
    const tenant = writableTenant(request);
    if (askedForStepUp(request, reply, BRANDING)) return reply;
    return settingsForm(ctx, request, reply, tenant, 'The domain is verified and in use.', async () => {
      await verifyWhiteLabelDomain(ctx, tenant.organizationId, auditActorOf(request));
    });
  });
}

/**
 * Saves a settings form's body as PATCH /organization would: checked by the same schema (UpdateOrganizationBody),
 * changed by the same service, recorded in the audit log as the member (AUDIT-1).
 * @throws ValidationError naming the field, AppError as updateOrganizationSettings.
 */
async function saveSettings(ctx: AppContext, request: FastifyRequest, tenant: Tenant, body: unknown): Promise<void> {
  await updateOrganizationSettings(
    ctx,
    tenant.organizationId,
    validated(UpdateOrganizationBody, body),
    { environment: tenant.environment },
    auditActorOf(request),
  );
}

/**
 * The tenant of a settings form: an owner or admin (settings.write) whose session shows live (PORTAL-37).
 * @throws AppError forbidden naming the switch to use.
 */
function writableTenant(request: FastifyRequest): Tenant {
  const tenant = requireTenant(request, 'settings.write');
  if (tenant.environment !== 'live')
    throw new AppError(
      'forbidden',
      'Branding and the white-label domain are shared by live and test and reach live customers: switch to Live to change them.',
    );
  return tenant;
}

/** Runs a settings change; a refusal (4xx) shows the page again with each bad field's message beside it. */
async function settingsForm(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  tenant: Tenant,
  done: string,
  change: () => Promise<void>,
): Promise<FastifyReply> {
  try {
    await change();
    return redirectWith(ctx, request, reply, BRANDING, { kind: 'ok', text: done });
  } catch (err) {
    if (!(err instanceof AppError) || err.status >= 500) throw err;
    const listed = (err.extra.errors ?? []) as Array<{ field: string; message: string }>;
    const errors: Record<string, string> = Object.fromEntries(listed.map((e) => [e.field, e.message]));
    reply.status(err.status);
    return renderBranding(ctx, request, reply, tenant, errors, listed.length ? null : err.message, request.body);
  }
}

async function renderBranding(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  tenant: Tenant,
  errors: Record<string, string>,
  problem: string | null = null,
  typed: unknown = null,
) {
  const view = await brandingPageView(ctx, tenant);
  const sent = (typed ?? {}) as Record<string, unknown>;
  const keep = (name: keyof typeof view.branding) => (name in sent ? field(sent, name) : view.branding[name]);
  return render(ctx, request, reply, 'branding', {
    title: 'Branding',
    section: 'branding',
    ...view,
    form: {
      logoUrl: keep('logoUrl'),
      primaryColor: keep('primaryColor'),
      accentColor: keep('accentColor'),
      whiteLabelDomain:
        'whiteLabelDomain' in sent ? field(sent, 'whiteLabelDomain') : (view.organization.white_label_domain ?? ''),
    },
    errors,
    problem,
  });
}

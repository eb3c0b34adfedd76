import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext, Tenant } from '../../context.js';
import { field } from '../console/console.web.js';
import { addApiKey, listTenantKeys, revokeKey, rollKey } from '../organizations/organizations.service.js';
import { auditActorOf, fieldErrorsOf, PORTAL_PREFIX, redirectWith, render, requireRole } from './portal.web.js';
import { redirectToSecretOnce, takeSecretOnce } from './secret-views.js';
import { askedForStepUp, needsStepUp } from './step-up.js';

const KEYS_PAGE = `${PORTAL_PREFIX}/keys`;

/** How long a rolled key may keep working beside its replacement, as the roll form offers it (PORTAL-12), hours. */
const OVERLAP_CHOICES: ReadonlyArray<{ hours: number; label: string }> = [
  { hours: 0, label: 'Stop it now' },
  { hours: 1, label: '1 hour' },
  { hours: 24, label: '1 day' },
  { hours: 72, label: '3 days' },
  { hours: 168, label: '7 days' },
];

/** A key just made or rolled, as its one-time view keeps it (PORTAL-46). */
interface CreatedKey {
  name: string;
  key: string;
  environment: string;
  replacedEndsAt: string | null;
}

/** What the keys page shows besides the list: a key just made (shown this once) and a form's field errors. */
interface KeysPageExtra {
  created?: CreatedKey;
  /** The page was opened again for a key it showed already (PORTAL-46). */
  secretGone?: boolean;
  errors?: Record<string, string>;
  name?: string;
}

/**
 * The API keys page (PORTAL-11): the keys of the session's organization and environment only, listed to every role
 * without their secret; developers, admins and owners create, roll (PORTAL-12) and revoke them through the same
 * organizations service the admin API and CLI use, so a revocation ends the key's event streams too (EVT-9). A live
 * write needs a recent second factor (PORTAL-10).
 */
export async function portalKeysRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  const tenantOf = (request: FastifyRequest, action: 'keys.read' | 'keys.write'): Tenant => ({
    organizationId: requireRole(request, action).id,
    environment: request.portalSession!.environment,
  });

  const keysPage = async (request: FastifyRequest, reply: FastifyReply, tenant: Tenant, extra: KeysPageExtra = {}) =>
    render(ctx, request, reply, 'keys', {
      title: 'API keys',
      section: 'keys',
      keys: await listTenantKeys(ctx.pool, tenant),
      overlapChoices: OVERLAP_CHOICES,
      stepUpNeeded: needsStepUp(request.portalSession!),
      created: extra.created ?? null,
      secretGone: extra.secretGone ?? false,
      errors: extra.errors ?? {},
      name: extra.name ?? '',
      now: new Date(),
    });

  // A new or rolled key is shown on the GET its form redirects to, once (PORTAL-46): a reload shows it no more.
  app.get('/keys', { schema: { hide: true } }, async (request, reply) => {
    const tenant = tenantOf(request, 'keys.read');
    const view = await takeSecretOnce<CreatedKey>(ctx, request, 'api_key');
    return keysPage(request, reply, tenant, {
      created: view.state === 'shown' ? view.secret : undefined,
      secretGone: view.state === 'gone',
    });
  });

  app.post('/keys', { schema: { hide: true } }, async (request, reply) => {
    const tenant = tenantOf(request, 'keys.write');
    if (askedForStepUp(request, reply, KEYS_PAGE)) return reply;
    const name = field(request.body, 'name');
    try {
      const created = await addApiKey(ctx.pool, tenant.organizationId, tenant.environment, name, auditActorOf(request));
      // The key is shown once, on the page this redirects to: only its hash is kept (AUTH-3, PORTAL-46).
      return redirectToSecretOnce(ctx, request, reply, KEYS_PAGE, 'api_key', {
        name: name.trim(),
        key: created.key,
        environment: created.environment,
        replacedEndsAt: null,
      } satisfies CreatedKey);
    } catch (err) {
      return keysPage(request, reply.status(400), tenant, { errors: fieldErrorsOf(err), name });
    }
  });

  app.post<{ Params: { keyId: string } }>('/keys/:keyId/roll', { schema: { hide: true } }, async (request, reply) => {
    const tenant = tenantOf(request, 'keys.write');
    if (askedForStepUp(request, reply, KEYS_PAGE)) return reply;
    const hours = field(request.body, 'overlapHours');
    try {
      const rolled = await rollKey(
        ctx.pool,
        tenant,
        request.params.keyId,
        hours === '' ? Number.NaN : Number(hours),
        auditActorOf(request),
      );
      return redirectToSecretOnce(ctx, request, reply, KEYS_PAGE, 'api_key', {
        name: rolled.key.name,
        key: rolled.key.key,
        environment: rolled.key.environment,
        replacedEndsAt: rolled.replacedEndsAt,
      } satisfies CreatedKey);
    } catch (err) {
      const errors = fieldErrorsOf(err);
      return keysPage(request, reply.status(400), tenant, {
        errors: { [`roll-${request.params.keyId}`]: errors.overlapHours ?? Object.values(errors)[0]! },
      });
    }
  });

  app.post<{ Params: { keyId: string } }>('/keys/:keyId/revoke', { schema: { hide: true } }, async (request, reply) => {
    const tenant = tenantOf(request, 'keys.write');
    if (askedForStepUp(request, reply, KEYS_PAGE)) return reply;
    await revokeKey(ctx.pool, tenant.organizationId, request.params.keyId, tenant.environment, auditActorOf(request));
    return redirectWith(ctx, request, reply, KEYS_PAGE, { kind: 'ok', text: 'The key is revoked: it works no more.' });
  });
}

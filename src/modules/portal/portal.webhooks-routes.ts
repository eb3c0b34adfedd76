import type { TSchema } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext, Tenant } from '../../context.js';
import { AppError, ValidationError } from '../../lib/errors.js';
import { bodyField, validated } from '../../lib/validation.js';
import { field } from '../console/console.web.js';
import { EVENT_TYPES } from '../events/events.service.js';
import { tenantActionLimit } from '../rate-limits/rate-limits.js';
import { CreateEndpointBody, UpdateEndpointBody } from '../webhooks/webhooks.schemas.js';
import {
  createEndpoint,
  deleteEndpoint,
  type EndpointView,
  getEndpoint,
  listEndpoints,
  rotateSecret,
  sendTestEvent,
  updateEndpoint,
} from '../webhooks/webhooks.service.js';
import { auditActorOf, fieldErrorsOf, PORTAL_PREFIX, redirectWith, render, requireRole } from './portal.web.js';
import { redirectToSecretOnce, takeSecretOnce } from './secret-views.js';
import { askedForStepUp, needsStepUp } from './step-up.js';

const LIST_PAGE = `${PORTAL_PREFIX}/webhooks`;
const pageOf = (id: string) => `${LIST_PAGE}/${encodeURIComponent(id)}`;

/** What a URL and event types form sent: the URL trimmed, the ticked event types in the order sent. */
interface EndpointForm {
  url: string;
  eventTypes: string[];
}

function endpointFormOf(body: unknown): EndpointForm {
  const ticked = bodyField(body, 'eventTypes');
  const eventTypes = (Array.isArray(ticked) ? ticked : ticked === undefined ? [] : [ticked]).map(String);
  return { url: field(body, 'url'), eventTypes };
}

/**
 * Checks a form with the integrator API's own body validator and schema of the same action (WH-1, WH-8), so the
 * portal accepts exactly what the API accepts, and words what fails for a person.
 * @throws ValidationError naming `url`, `eventTypes`.
 */
function checkAgainst(schema: TSchema, form: EndpointForm): void {
  validated(schema, form, [], {
    raise: (failed) => {
      const fields = new Set(failed.map((e) => e.field.split('.')[0]));
      const errors = [];
      if (fields.has('url'))
        errors.push({ field: 'url', message: 'Enter the address events go to (at most 2048 characters).' });
      if (fields.has('eventTypes'))
        errors.push({
          field: 'eventTypes',
          message: form.eventTypes.length
            ? 'Choose only event types from the list, each once.'
            : 'Choose at least one event type.',
        });
      throw new ValidationError(errors.length ? errors : failed);
    },
  });
}

/** A signing secret just made, as its one-time view keeps it (PORTAL-46), with the endpoint it was made for. */
interface NewSecret {
  endpoint: { id: string; url: string };
  secret: string;
}

/** The detail page's extras: a new signing secret (shown this once), a form's field errors and what it sent. */
interface EndpointPageExtra {
  secret?: string;
  /** The page was opened again for a secret it showed already (PORTAL-46). */
  secretGone?: boolean;
  errors?: Record<string, string>;
  form?: EndpointForm;
}

/**
 * The webhook endpoints page (PORTAL-13): the endpoints of the session's organization and environment, listed to every
 * role without their secrets; developers, admins and owners create them, change their URL and event types, disable
 * and (re-)enable them, roll their signing secret (with the API's overlap, WH-3) and send a test event, all through the
 * webhooks service the integrator API uses, with its checks. A live write needs a recent second factor (PORTAL-10).
 */
export async function portalWebhooksRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  const tenantOf = (request: FastifyRequest, action: 'webhooks.read' | 'webhooks.write'): Tenant => ({
    organizationId: requireRole(request, action).id,
    environment: request.portalSession!.environment,
  });
  // SEC-4: test sends share the API's per-tenant allowance.
  const testLimit = tenantActionLimit('webhook-test', ctx.config.rateLimits.webhookTestsPerMinute, 'test events');

  const listPage = async (
    request: FastifyRequest,
    reply: FastifyReply,
    tenant: Tenant,
    extra: EndpointPageExtra & { created?: Pick<EndpointView, 'id' | 'url'> } = {},
  ) =>
    render(ctx, request, reply, 'webhooks', {
      title: 'Webhooks',
      section: 'webhooks',
      endpoints: (await listEndpoints(ctx, tenant, { limit: ctx.config.webhookEndpointsMax })).data,
      eventTypes: EVENT_TYPES,
      stepUpNeeded: needsStepUp(request.portalSession!),
      created: extra.created ?? null,
      secret: extra.secret ?? null,
      secretGone: extra.secretGone ?? false,
      errors: extra.errors ?? {},
      form: extra.form ?? { url: '', eventTypes: [] },
    });

  const endpointPage = async (
    request: FastifyRequest,
    reply: FastifyReply,
    tenant: Tenant,
    id: string,
    extra: EndpointPageExtra = {},
  ) => {
    const endpoint = await getEndpoint(ctx, tenant, id);
    return render(ctx, request, reply, 'webhook', {
      title: 'Webhook endpoint',
      section: 'webhooks',
      endpoint,
      eventTypes: EVENT_TYPES,
      stepUpNeeded: needsStepUp(request.portalSession!),
      secret: extra.secret ?? null,
      secretGone: extra.secretGone ?? false,
      errors: extra.errors ?? {},
      form: extra.form ?? { url: endpoint.url, eventTypes: endpoint.eventTypes },
    });
  };

  // A signing secret is shown on the GET its form redirects to, once (PORTAL-46): a reload shows it no more.
  app.get('/webhooks', { schema: { hide: true } }, async (request, reply) => {
    const tenant = tenantOf(request, 'webhooks.read');
    const view = await takeSecretOnce<NewSecret>(ctx, request, 'webhook_secret');
    if (view.state !== 'shown') return listPage(request, reply, tenant, { secretGone: view.state === 'gone' });
    return listPage(request, reply, tenant, { created: view.secret.endpoint, secret: view.secret.secret });
  });

  app.post('/webhooks', { schema: { hide: true } }, async (request, reply) => {
    const tenant = tenantOf(request, 'webhooks.write');
    if (askedForStepUp(request, reply, LIST_PAGE)) return reply;
    const form = endpointFormOf(request.body);
    try {
      checkAgainst(CreateEndpointBody, form);
      const { secret, ...created } = await createEndpoint(ctx, tenant, form, auditActorOf(request));
      // The signing secret is shown once, on the page this redirects to (WH-1, PORTAL-46).
      return redirectToSecretOnce(ctx, request, reply, LIST_PAGE, 'webhook_secret', {
        endpoint: { id: created.id, url: created.url },
        secret,
      } satisfies NewSecret);
    } catch (err) {
      if (err instanceof AppError && err.code === 'webhook_endpoint_limit_reached')
        return listPage(request, reply.status(409), tenant, { errors: { form: err.message }, form });
      return listPage(request, reply.status(400), tenant, { errors: fieldErrorsOf(err), form });
    }
  });

  app.get<{ Params: { id: string } }>('/webhooks/:id', { schema: { hide: true } }, async (request, reply) => {
    const tenant = tenantOf(request, 'webhooks.read');
    const view = await takeSecretOnce<NewSecret>(ctx, request, 'webhook_secret');
    // A view of another endpoint's secret shows nothing here, and is spent like any other.
    const shown = view.state === 'shown' && view.secret.endpoint.id === request.params.id;
    return endpointPage(request, reply, tenant, request.params.id, {
      secret: shown ? view.secret.secret : undefined,
      secretGone: view.state !== 'none' && !shown,
    });
  });

  app.post<{ Params: { id: string } }>('/webhooks/:id', { schema: { hide: true } }, async (request, reply) => {
    const tenant = tenantOf(request, 'webhooks.write');
    const { id } = request.params;
    if (askedForStepUp(request, reply, pageOf(id))) return reply;
    const form = endpointFormOf(request.body);
    try {
      checkAgainst(UpdateEndpointBody, form);
      await updateEndpoint(ctx, tenant, id, form, auditActorOf(request));
    } catch (err) {
      return endpointPage(request, reply.status(400), tenant, id, { errors: fieldErrorsOf(err), form });
    }
    return redirectWith(ctx, request, reply, pageOf(id), { kind: 'ok', text: 'The endpoint is saved.' });
  });

  for (const [action, disabled, text] of [
    ['disable', true, 'The endpoint is disabled: nothing is delivered to it until it is enabled.'],
    ['enable', false, 'The endpoint is enabled, its failure clock started again.'],
  ] as const) {
    app.post<{ Params: { id: string } }>(
      `/webhooks/:id/${action}`,
      { schema: { hide: true } },
      async (request, reply) => {
        const tenant = tenantOf(request, 'webhooks.write');
        const { id } = request.params;
        if (askedForStepUp(request, reply, pageOf(id))) return reply;
        await updateEndpoint(ctx, tenant, id, { disabled }, auditActorOf(request));
        return redirectWith(ctx, request, reply, pageOf(id), { kind: 'ok', text });
      },
    );
  }

  // As DELETE /webhook-endpoints/{id}: the endpoint goes, its waiting deliveries end as failed. Asks for a ticked box.
  app.post<{ Params: { id: string } }>('/webhooks/:id/delete', { schema: { hide: true } }, async (request, reply) => {
    const tenant = tenantOf(request, 'webhooks.write');
    const { id } = request.params;
    if (askedForStepUp(request, reply, pageOf(id))) return reply;
    if (field(request.body, 'confirm') !== 'yes')
      return redirectWith(ctx, request, reply, pageOf(id), {
        kind: 'error',
        text: 'Tick the box to confirm that the endpoint is to be deleted.',
      });
    await deleteEndpoint(ctx, tenant, id, auditActorOf(request));
    return redirectWith(ctx, request, reply, `${PORTAL_PREFIX}/webhooks`, {
      kind: 'ok',
      text: 'The endpoint is deleted; deliveries still waiting for it end as failed.',
    });
  });

  app.post<{ Params: { id: string } }>(
    '/webhooks/:id/roll-secret',
    { schema: { hide: true } },
    async (request, reply) => {
      const tenant = tenantOf(request, 'webhooks.write');
      const { id } = request.params;
      if (askedForStepUp(request, reply, pageOf(id))) return reply;
      const endpoint = await rotateSecret(ctx, tenant, id, auditActorOf(request));
      return redirectToSecretOnce(ctx, request, reply, pageOf(id), 'webhook_secret', {
        endpoint: { id, url: endpoint.url },
        secret: endpoint.secret,
      } satisfies NewSecret);
    },
  );

  app.post<{ Params: { id: string } }>('/webhooks/:id/test', { schema: { hide: true } }, async (request, reply) => {
    const tenant = tenantOf(request, 'webhooks.write');
    const { id } = request.params;
    if (askedForStepUp(request, reply, pageOf(id))) return reply;
    testLimit(request, reply, tenant);
    try {
      const delivery = await sendTestEvent(ctx, tenant, id);
      return redirectWith(ctx, request, reply, pageOf(id), {
        kind: 'ok',
        text: `A test event is on its way (delivery ${delivery.id}).`,
      });
    } catch (err) {
      if (!(err instanceof AppError && err.code === 'conflict')) throw err;
      return redirectWith(ctx, request, reply, pageOf(id), {
        kind: 'error',
        text: 'The endpoint is disabled: enable it before sending a test event.',
      });
    }
  });
}

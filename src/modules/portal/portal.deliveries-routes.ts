import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.js';
import { EVENT_TYPES, TEST_EVENT_TYPE } from '../events/events.service.js';
import { perTenantActionLimit } from '../rate-limits/rate-limits.js';
import { resendDelivery } from '../webhooks/deliveries.service.js';
import { deliveryDetail, listDeliveryLog } from '../webhooks/delivery-log.service.js';
import { getRecovery, listRecoveries, requestRecovery } from '../webhooks/recoveries.service.js';
import { listEndpoints } from '../webhooks/webhooks.service.js';
import { LOG_PAGE_SIZE, LogQuery, portalTenant } from './log-filters.js';
import { PORTAL_PREFIX, redirectWith, render } from './portal.web.js';

const STATUSES = ['pending', 'succeeded', 'failed'] as const;
/** Every type a delivery can carry: the subscribable ones and the test ping. */
const DELIVERY_EVENT_TYPES = [...EVENT_TYPES, TEST_EVENT_TYPE];

/**
 * The delivery log (PORTAL-20, PORTAL-21), resend (PORTAL-21) and recovery of an endpoint's failed deliveries
 * (PORTAL-22), always of the session's organization and environment. Reading is for every role; resend and recovery
 * are writes (`webhooks.write`), refused to viewers on the server whatever the page showed.
 */
export async function portalDeliveriesRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  // SEC-4: resends from the portal count against the same per-tenant cap as the API's.
  const resendLimit = perTenantActionLimit('webhook-resend', ctx.config.rateLimits.webhookResendsPerMinute, 'resends');
  const endpointsOf = async (tenant: ReturnType<typeof portalTenant>) =>
    (await listEndpoints(ctx, tenant, { limit: 100 })).data.map((e) => ({ id: e.id, url: e.url }));

  app.get('/deliveries', { schema: { hide: true } }, async (request, reply) => {
    const tenant = portalTenant(request, 'webhooks.read');
    const q = new LogQuery(request.query);
    const filters = {
      endpointId: q.id('endpoint', 'we'),
      status: q.oneOf('status', STATUSES),
      eventType: q.oneOf('type', DELIVERY_EVENT_TYPES),
      ...q.momentRange(),
      before: q.id('before', 'wd'),
    };
    const page = q.failed
      ? { items: [], hasMore: false }
      : await listDeliveryLog(ctx, tenant, { ...filters, limit: LOG_PAGE_SIZE });
    return render(ctx, request, reply.status(q.failed ? 400 : 200), 'deliveries', {
      title: 'Webhook deliveries',
      section: 'deliveries',
      q,
      page,
      endpoints: await endpointsOf(tenant),
      statuses: STATUSES,
      eventTypes: DELIVERY_EVENT_TYPES,
    });
  });

  app.get('/deliveries/recoveries', { schema: { hide: true } }, async (request, reply) => {
    const tenant = portalTenant(request, 'webhooks.read');
    return render(ctx, request, reply, 'recoveries', {
      title: 'Recover failed deliveries',
      section: 'deliveries',
      recoveries: await listRecoveries(ctx, tenant),
      endpoints: await endpointsOf(tenant),
      form: { endpoint: '', since: '' },
      errors: {},
    });
  });

  app.post('/deliveries/recoveries', { schema: { hide: true } }, async (request, reply) => {
    const tenant = portalTenant(request, 'webhooks.write');
    const q = new LogQuery(request.body);
    const endpointId = q.id('endpoint', 'we');
    if (!endpointId && !q.errors.endpoint) q.errors.endpoint = 'choose an endpoint';
    const since = q.moment('since');
    if (!since && !q.errors.since) q.errors.since = 'give the moment to recover from';
    if (q.failed || !endpointId || !since) {
      return render(ctx, request, reply.status(400), 'recoveries', {
        title: 'Recover failed deliveries',
        section: 'deliveries',
        recoveries: await listRecoveries(ctx, tenant),
        endpoints: await endpointsOf(tenant),
        form: { endpoint: q.values.endpoint ?? '', since: q.values.since ?? '' },
        errors: q.errors,
      });
    }
    const recovery = await requestRecovery(ctx, tenant, {
      endpointId,
      since,
      requestedBy: `member:${request.portalSession!.member.id}`,
    });
    return redirectWith(ctx, request, reply, `${PORTAL_PREFIX}/deliveries/recoveries/${recovery.id}`, {
      kind: 'ok',
      text: 'The recovery has started. This page shows its progress; reload it to see more.',
    });
  });

  app.get<{ Params: { id: string } }>(
    '/deliveries/recoveries/:id',
    { schema: { hide: true } },
    async (request, reply) => {
      const tenant = portalTenant(request, 'webhooks.read');
      return render(ctx, request, reply, 'recovery', {
        title: 'Recovery',
        section: 'deliveries',
        recovery: await getRecovery(ctx, tenant, request.params.id),
      });
    },
  );

  app.get<{ Params: { id: string } }>('/deliveries/:id', { schema: { hide: true } }, async (request, reply) => {
    const tenant = portalTenant(request, 'webhooks.read');
    return render(ctx, request, reply, 'delivery', {
      title: `Delivery ${request.params.id}`,
      section: 'deliveries',
      detail: await deliveryDetail(ctx, tenant, request.params.id),
    });
  });

  app.post<{ Params: { id: string } }>('/deliveries/:id/resend', { schema: { hide: true } }, async (request, reply) => {
    const tenant = portalTenant(request, 'webhooks.write');
    request.tenant = tenant;
    await resendLimit(request, reply);
    await resendDelivery(ctx, tenant, request.params.id);
    return redirectWith(ctx, request, reply, `${PORTAL_PREFIX}/deliveries/${encodeURIComponent(request.params.id)}`, {
      kind: 'ok',
      text: 'Resent: a new attempt is on its way. Reload this page to see it.',
    });
  });
}

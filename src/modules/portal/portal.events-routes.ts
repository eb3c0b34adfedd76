import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.js';
import { notFound } from '../../lib/errors.js';
import { findEvent, listEvents } from '../events/events.repo.js';
import { EVENT_TYPES, TEST_EVENT_TYPE } from '../events/events.service.js';
import { eventDeliveries } from '../webhooks/delivery-log.service.js';
import { LOG_PAGE_SIZE, LogQuery, portalTenant } from './log-filters.js';
import { render } from './portal.web.js';

const TYPES = [...EVENT_TYPES, TEST_EVENT_TYPE];

/**
 * The events explorer (PORTAL-23): the session's tenant's events filtered by type, id and the object they concern
 * (an order_ or comp_ id), keyset pages through the events indexes; an event's page with its payload and deliveries.
 * Every role may read.
 */
export async function portalEventsRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  app.get('/events', { schema: { hide: true } }, async (request, reply) => {
    const tenant = portalTenant(request, 'events.read');
    const q = new LogQuery(request.query);
    const type = q.oneOf('type', TYPES);
    const id = q.id('id', 'evt');
    const object = q.text('object', 100);
    if (object && !/^(order|comp)_[0-9a-z]{26}$/.test(object)) q.errors.object = 'must be an order_ or comp_ id';
    const before = q.id('before', 'evt');
    const rows = q.failed
      ? []
      : await listEvents(ctx.pool, tenant, {
          type,
          id,
          orderId: object.startsWith('order_') ? object : undefined,
          companyId: object.startsWith('comp_') ? object : undefined,
          startingAfter: before,
          limit: LOG_PAGE_SIZE,
        });
    return render(ctx, request, reply.status(q.failed ? 400 : 200), 'events', {
      title: 'Events',
      section: 'events',
      q,
      types: TYPES,
      events: rows.slice(0, LOG_PAGE_SIZE),
      hasMore: rows.length > LOG_PAGE_SIZE,
    });
  });

  app.get<{ Params: { id: string } }>('/events/:id', { schema: { hide: true } }, async (request, reply) => {
    const tenant = portalTenant(request, 'events.read');
    const event = await findEvent(ctx.pool, tenant, request.params.id);
    if (!event) throw notFound('event', request.params.id);
    return render(ctx, request, reply, 'event', {
      title: `Event ${event.id}`,
      section: 'events',
      event,
      deliveries: await eventDeliveries(ctx, tenant, event.id),
    });
  });
}

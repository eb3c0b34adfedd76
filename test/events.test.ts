import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrderRow, tenantOf } from './factories.js';
import { createTestApp, type TestApp, type TestTenant } from './harness.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const advance = (tenant: TestTenant, orderId: string, body: Record<string, unknown>) =>
  tenant.api('POST', `/test_helpers/orders/${orderId}/advance`, body);

describe('GET /events', () => {
  it('lists the envelopes newest first with cursor pagination', async () => {
    const tenant = await t.newTenant();
    const { orderId } = await createOrderRow(t.ctx, tenantOf(tenant));
    await advance(tenant, orderId, { filingStatus: 'pending' });
    await advance(tenant, orderId, { filingStatus: 'exception', exceptionCode: '487' });
    await advance(tenant, orderId, { filingStatus: 'submitted' });
    await tenant.api('POST', `/test_helpers/orders/${orderId}/documents`, { documentType: 'company' });

    const all = await tenant.api('GET', '/events');
    expect(all.statusCode).toBe(200);
    const events = all.json().data;
    expect(events.map((e: { type: string; data: { filingStatus?: string } }) => e.data.filingStatus ?? e.type)).toEqual(
      ['document.uploaded', 'submitted', 'exception', 'pending', 'submitted'],
    );
    for (const e of events) {
      expect(Object.keys(e).sort()).toEqual(['createdAt', 'data', 'id', 'type']);
      expect(e.id).toMatch(/^evt_/);
      expect(e.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    }

    const first = (await tenant.api('GET', '/events?limit=2')).json();
    expect(first.hasMore).toBe(true);
    const second = (await tenant.api('GET', `/events?limit=3&startingAfter=${first.data[1].id}`)).json();
    expect(second.hasMore).toBe(false);
    expect([...first.data, ...second.data].map((e: { id: string }) => e.id)).toEqual(
      events.map((e: { id: string }) => e.id),
    );
    // A spelling whose value cannot be a cursor is named as sent.
    for (const [param, value] of [
      ['cursor', 'x'.repeat(300)],
      ['starting_after', ''],
    ]) {
      const bad = await tenant.api('GET', `/events?${param}=${value}`);
      expect(bad.statusCode).toBe(400);
      expect(bad.json().errors.map((e: { field: string }) => e.field)).toEqual([param]);
    }
    // Stripe's spelling and a plain `cursor` page the same way.
    for (const param of ['starting_after', 'cursor']) {
      const page = await tenant.api('GET', `/events?limit=3&${param}=${first.data[1].id}`);
      expect(page.statusCode, page.body).toBe(200);
      expect(page.json().data.map((e: { id: string }) => e.id)).toEqual(second.data.map((e: { id: string }) => e.id));
    }
  });

  it('filters by type and by order', async () => {
    const tenant = await t.newTenant();
    const a = await createOrderRow(t.ctx, tenantOf(tenant));
    const b = await createOrderRow(t.ctx, tenantOf(tenant));
    await advance(tenant, a.orderId, { filingStatus: 'pending' });
    await advance(tenant, b.orderId, { filingStatus: 'cancelled' });
    await tenant.api('POST', `/test_helpers/orders/${a.orderId}/documents`, { documentType: 'company' });

    const statuses = (await tenant.api('GET', '/events?type=filing.status_changed')).json().data;
    expect(statuses.map((e: { data: { orderId: string } }) => e.data.orderId)).toEqual([
      b.orderId,
      a.orderId,
      b.orderId,
      a.orderId,
    ]);
    const ofA = (await tenant.api('GET', `/events?orderId=${a.orderId}`)).json().data;
    expect(ofA.map((e: { type: string }) => e.type)).toEqual([
      'document.uploaded',
      'filing.status_changed',
      'filing.status_changed',
    ]);
    const bad = await tenant.api('GET', '/events?type=order.created');
    expect(bad.statusCode).toBe(400);
    // One error for the field, naming every type it may be.
    expect(bad.json().errors).toHaveLength(1);
    expect(bad.json().errors[0].field).toContain('type');
    expect(bad.json().errors[0].message).toMatch(
      /^must be one of: filing\.status_changed, document\.uploaded, .*webhook\.test$/,
    );
  });

  it('filters the endpoint test pings it lists, by their type webhook.test', async () => {
    const tenant = await t.newTenant();
    const { orderId } = await createOrderRow(t.ctx, tenantOf(tenant));
    await advance(tenant, orderId, { filingStatus: 'pending' });
    const endpoint = await tenant.api('POST', '/webhook-endpoints', {
      url: 'http://127.0.0.1:9/hooks',
      eventTypes: ['filing.status_changed'],
    });
    expect(endpoint.statusCode, endpoint.body).toBe(201);
    expect((await tenant.api('POST', `/webhook-endpoints/${endpoint.json().id}/test`)).statusCode).toBe(202);

    const pings = await tenant.api('GET', '/events?type=webhook.test');
    expect(pings.statusCode, pings.body).toBe(200);
    expect(
      pings.json().data.map((e: { type: string; data: { endpointId: string } }) => [e.type, e.data.endpointId]),
    ).toEqual([['webhook.test', endpoint.json().id]]);
  });

  it('keeps tenants and environments apart', async () => {
    const owner = await t.newTenant();
    const { orderId } = await createOrderRow(t.ctx, tenantOf(owner));
    const eventId = (await advance(owner, orderId, { filingStatus: 'pending' })).json().eventId;
    const stranger = await t.newTenant();
    expect((await stranger.api('GET', '/events')).json().data).toEqual([]);
    expect((await stranger.api('GET', `/events/${eventId}`)).statusCode).toBe(404);
    expect((await owner.api('GET', `/events/${eventId}`, undefined, { env: 'live' })).statusCode).toBe(404);
    expect((await owner.api('GET', '/events', undefined, { env: 'live' })).json().data).toEqual([]);
  });
});

describe('GET /events/{eventId}', () => {
  it('returns the envelope as it was emitted', async () => {
    const tenant = await t.newTenant();
    const { orderId, companyId } = await createOrderRow(t.ctx, tenantOf(tenant), {
      orderType: 'registered_agent',
      filingType: 'change_of_agent',
    });
    const eventId = (
      await advance(tenant, orderId, {
        filingStatus: 'exception',
        exceptionCode: '469',
        exceptionMessage: 'Agent address is a PO box',
      })
    ).json().eventId;
    const res = await tenant.api('GET', `/events/${eventId}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      id: eventId,
      type: 'filing.status_changed',
      createdAt: expect.any(String),
      data: {
        orderId,
        companyId,
        orderType: 'registered_agent',
        filingStatus: 'exception',
        filingDate: null,
        filingType: 'change_of_agent',
        subscriptionStatus: 'active',
        exceptionCode: '469',
        exceptionReason: 'Bad or missing registered agent information',
        exceptionMessage: 'Agent address is a PO box',
      },
    });
  });
});

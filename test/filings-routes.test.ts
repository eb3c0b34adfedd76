import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrderRow, tenantOf } from './factories.js';
import { createTestApp, type TestApp } from './harness.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe('POST /test_helpers/orders/{orderId}/advance', () => {
  it('moves a test order and reports it like the event does', async () => {
    const tenant = await t.newTenant();
    const { orderId, companyId } = await createOrderRow(t.ctx, tenantOf(tenant));
    const res = await tenant.api('POST', `/test_helpers/orders/${orderId}/advance`, {
      filingStatus: 'exception',
      exceptionCode: '465',
      exceptionMessage: 'Name taken',
    });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      orderId,
      companyId,
      orderType: 'formation',
      filingStatus: 'exception',
      filingDate: null,
      exceptionCode: '465',
      exceptionReason: 'Entity name not available',
      exceptionMessage: 'Name taken',
      eventId: expect.stringMatching(/^evt_/),
    });
    const event = await tenant.api('GET', `/events/${body.eventId}`);
    expect(event.json()).toMatchObject({
      type: 'filing.status_changed',
      data: { orderId, filingStatus: 'exception', exceptionCode: '465' },
    });

    const before = new Date().toISOString().slice(0, 10);
    const filed = await tenant.api('POST', `/test_helpers/orders/${orderId}/advance`, { filingStatus: 'filed' });
    const after = new Date().toISOString().slice(0, 10);
    expect(filed.json()).toMatchObject({ filingStatus: 'filed', exceptionCode: null });
    // Filed today: the day before or after the call (the same unless the call crosses midnight).
    expect([before, after]).toContain(filed.json().filingDate);
  });

  it('answers 409 with a clear message for a move out of a terminal status', async () => {
    const tenant = await t.newTenant();
    const { orderId } = await createOrderRow(t.ctx, tenantOf(tenant));
    await tenant.api('POST', `/test_helpers/orders/${orderId}/advance`, { filingStatus: 'filed' });
    const res = await tenant.api('POST', `/test_helpers/orders/${orderId}/advance`, { filingStatus: 'pending' });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({
      code: 'invalid_transition',
      message: `Order ${orderId} is filed, a terminal status; it cannot move to pending`,
      requestId: expect.any(String),
    });
  });

  it('validates the body, naming the fields', async () => {
    const tenant = await t.newTenant();
    const { orderId } = await createOrderRow(t.ctx, tenantOf(tenant));
    const res = await tenant.api('POST', `/test_helpers/orders/${orderId}/advance`, { filingStatus: 'exception' });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors).toEqual([expect.objectContaining({ field: 'exceptionCode' })]);
    const bad = await tenant.api('POST', `/test_helpers/orders/${orderId}/advance`, {
      filingStatus: 'approved',
      color: 'red',
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors.map((e: { field: string }) => e.field)).toEqual(
      expect.arrayContaining(['filingStatus', 'color']),
    );
    const unknownCode = await tenant.api('POST', `/test_helpers/orders/${orderId}/advance`, {
      filingStatus: 'exception',
      exceptionCode: 465.5,
    });
    expect(unknownCode.statusCode).toBe(400);
    expect(unknownCode.json().errors[0].field).toBe('exceptionCode');
  });

  it('takes the exception code as the number 465 too, and reports it as the string "465"', async () => {
    const tenant = await t.newTenant();
    const { orderId } = await createOrderRow(t.ctx, tenantOf(tenant));
    const res = await tenant.api('POST', `/test_helpers/orders/${orderId}/advance`, {
      filingStatus: 'exception',
      exceptionCode: 465,
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ exceptionCode: '465', exceptionReason: 'Entity name not available' });
    const event = (await tenant.api('GET', `/events/${res.json().eventId}`)).json();
    expect(event.data).toMatchObject({
      filingStatus: 'exception',
      exceptionCode: '465',
      exceptionReason: 'Entity name not available',
    });
    const admin = await t.admin('POST', `/orders/${orderId}/transitions`, {
      filingStatus: 'exception',
      exceptionCode: 487,
    });
    expect(admin.json()).toMatchObject({ filingStatus: 'exception', exceptionCode: '487' });
    const notInTable = await tenant.api('POST', `/test_helpers/orders/${orderId}/advance`, {
      filingStatus: 'exception',
      exceptionCode: 475,
    });
    expect(notInTable.statusCode).toBe(400);
    expect(notInTable.json().errors).toEqual([
      { field: 'exceptionCode', message: expect.stringContaining("'475' is not a filing exception code") },
    ]);
  });

  it('files a test EIN order with the EIN it is given, and sets it on the company', async () => {
    const tenant = await t.newTenant();
    const { orderId, companyId } = await createOrderRow(t.ctx, tenantOf(tenant), { orderType: 'ein' });
    const res = await tenant.api('POST', `/test_helpers/orders/${orderId}/advance`, {
      filingStatus: 'filed',
      ein: '98-7654321',
    });
    expect(res.statusCode, res.body).toBe(200);
    expect((await tenant.api('GET', `/companies/${companyId}`)).json().ein).toBe('98-7654321');
  });

  it("answers 404 for another tenant's order", async () => {
    const owner = await t.newTenant();
    const { orderId } = await createOrderRow(t.ctx, tenantOf(owner));
    const stranger = await t.newTenant();
    const res = await stranger.api('POST', `/test_helpers/orders/${orderId}/advance`, { filingStatus: 'pending' });
    expect(res.statusCode).toBe(404);
  });

  it('does not exist at the live base address', async () => {
    const tenant = await t.newTenant();
    const { orderId } = await createOrderRow(t.ctx, tenantOf(tenant, 'live'));
    for (const [path, body] of [
      [`/test_helpers/orders/${orderId}/advance`, { filingStatus: 'pending' }],
      [`/test_helpers/orders/${orderId}/documents`, { documentType: 'company' }],
    ] as const) {
      const res = await tenant.api('POST', path, body, { env: 'live' });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ code: 'not_found' });
    }
    const [row] = (await t.ctx.pool.query('SELECT filing_status FROM orders WHERE id = $1', [orderId])).rows;
    expect(row.filing_status).toBe('submitted');
  });

  it('is documented in OpenAPI as a test helper at the test server only', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/test/v1/openapi.json' })).json();
    const op = doc.paths['/test_helpers/orders/{orderId}/advance']?.post;
    expect(op.tags).toEqual(['Test helpers']);
    expect(doc.servers.map((s: { url: string }) => s.url)).toEqual(['/test/v1']);
    expect(doc.paths['/test_helpers/orders/{orderId}/documents']?.post.tags).toEqual(['Test helpers']);
    const live = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    expect(live.paths['/test_helpers/orders/{orderId}/advance']).toBeUndefined();
  });
});

describe('operator routes', () => {
  it('refuses calls without the operator token', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/orders/order_x/transitions',
      payload: { filingStatus: 'pending' },
    });
    expect(res.statusCode).toBe(401);
  });

  it("transitions any tenant's order and returns it with its history", async () => {
    const tenant = await t.newTenant();
    const { orderId, companyId } = await createOrderRow(t.ctx, tenantOf(tenant, 'live'), { orderType: 'ein' });
    const missingEin = await t.admin('POST', `/orders/${orderId}/transitions`, { filingStatus: 'filed' });
    expect(missingEin.statusCode).toBe(400);
    expect(missingEin.json().errors[0].field).toBe('ein');

    const res = await t.admin('POST', `/orders/${orderId}/transitions`, {
      filingStatus: 'filed',
      filingDate: '2025-02-03',
      ein: '84-7654321',
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      orderId,
      companyId,
      environment: 'live',
      orderType: 'ein',
      filingStatus: 'filed',
      filingDate: '2025-02-03',
      history: [
        { toStatus: 'submitted', actor: 'api' },
        { fromStatus: 'submitted', toStatus: 'filed', filingDate: '2025-02-03', actor: 'operator' },
      ],
    });
    const company = await tenant.api('GET', `/companies/${companyId}`, undefined, { env: 'live' });
    // The EIN the operator filed is the company's from now on (the integrator reads it back).
    expect(company.statusCode, company.body).toBe(200);
    expect(company.json().ein).toBe('84-7654321');

    expect((await t.admin('GET', `/orders/${orderId}`)).json().filingStatus).toBe('filed');
    expect((await t.admin('GET', '/orders/order_missing')).statusCode).toBe(404);
  });

  it('lists the queue oldest first, filtered by status, state, type and environment', async () => {
    const tenant = await t.newTenant();
    const a = await createOrderRow(t.ctx, tenantOf(tenant), { filingState: 'NV', orderType: 'formation' });
    const b = await createOrderRow(t.ctx, tenantOf(tenant), { filingState: 'NV', orderType: 'formation' });
    const c = await createOrderRow(t.ctx, tenantOf(tenant), { filingState: 'NV', orderType: 'ein' });
    await t.admin('POST', `/orders/${c.orderId}/transitions`, { filingStatus: 'pending' });
    const res = await t.admin(
      'GET',
      `/orders?status=submitted&state=NV&orderType=formation&environment=test&organizationId=${tenant.organizationId}`,
    );
    expect(res.statusCode).toBe(200);
    expect(res.json().data.map((o: { orderId: string }) => o.orderId)).toEqual([a.orderId, b.orderId]);
    const page = await t.admin(
      'GET',
      `/orders?organizationId=${tenant.organizationId}&limit=1&startingAfter=${a.orderId}`,
    );
    expect(page.json()).toMatchObject({ hasMore: true, data: [{ orderId: b.orderId }] });
  });
});

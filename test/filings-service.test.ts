import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tenant } from '../src/context.js';
import { transitionOrder } from '../src/modules/filings/filings.service.js';
import { createOrderRow } from './factories.js';
import { createTestApp, type TestApp } from './harness.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

async function newTestTenant(env: 'live' | 'test' = 'test'): Promise<Tenant> {
  const tenant = await t.newTenant();
  return { organizationId: tenant.organizationId, environment: env };
}

const q = async <T = any>(sql: string, params: unknown[] = []): Promise<T[]> =>
  (await t.ctx.pool.query(sql, params)).rows as T[];
const eventsOf = (orderId: string) =>
  q(`SELECT type, data FROM events WHERE data->>'orderId' = $1 ORDER BY id`, [orderId]);
const historyOf = (orderId: string) =>
  q(
    `SELECT from_status, to_status, exception_code, filing_date, actor FROM order_status_history WHERE order_id = $1 ORDER BY created_at, id`,
    [orderId],
  );
const balanceOf = async (tenant: Tenant) =>
  (
    await q(`SELECT balance_cents FROM balances WHERE organization_id = $1 AND environment = $2`, [
      tenant.organizationId,
      tenant.environment,
    ])
  )[0]?.balance_cents ?? 0;

describe('transitionOrder', () => {
  it('walks a formation through pending, exception 465 and back to filed, recording history and events', async () => {
    const tenant = await newTestTenant();
    const { orderId, companyId } = await createOrderRow(t.ctx, tenant, { orderType: 'formation', filingState: 'WY' });
    await transitionOrder(t.ctx, tenant, orderId, { filingStatus: 'pending' }, 'test_helper');
    await transitionOrder(
      t.ctx,
      tenant,
      orderId,
      { filingStatus: 'exception', exceptionCode: '465', exceptionMessage: 'Acme Holdings LLC is taken' },
      'operator',
    );
    await transitionOrder(t.ctx, tenant, orderId, { filingStatus: 'pending' }, 'cli');
    const { order } = await transitionOrder(
      t.ctx,
      null,
      orderId,
      { filingStatus: 'filed', filingDate: '2025-01-15' },
      'operator:op_1',
    );
    expect(order).toMatchObject({ filing_status: 'filed', filing_date: '2025-01-15', exception_code: null });

    expect(await historyOf(orderId)).toEqual([
      { from_status: null, to_status: 'submitted', exception_code: null, filing_date: null, actor: 'api' },
      { from_status: 'submitted', to_status: 'pending', exception_code: null, filing_date: null, actor: 'test_helper' },
      { from_status: 'pending', to_status: 'exception', exception_code: '465', filing_date: null, actor: 'operator' },
      { from_status: 'exception', to_status: 'pending', exception_code: null, filing_date: null, actor: 'cli' },
      {
        from_status: 'pending',
        to_status: 'filed',
        exception_code: null,
        filing_date: '2025-01-15',
        actor: 'operator:op_1',
      },
    ]);
    const events = await eventsOf(orderId);
    expect(events.map((e) => [e.type, e.data.filingStatus])).toEqual([
      ['filing.status_changed', 'submitted'],
      ['filing.status_changed', 'pending'],
      ['filing.status_changed', 'exception'],
      ['filing.status_changed', 'pending'],
      ['filing.status_changed', 'filed'],
    ]);
    events.shift(); // the placement's own event
    expect(events[1].data).toMatchObject({
      orderId,
      orderType: 'formation',
      filingStatus: 'exception',
      exceptionCode: '465',
      exceptionReason: 'Entity name not available',
      exceptionMessage: 'Acme Holdings LLC is taken',
      filingDate: null,
    });
    expect(events[2].data).not.toHaveProperty('exceptionCode');
    expect(events[3].data).toMatchObject({ filingStatus: 'filed', filingDate: '2025-01-15', subscriptionStatus: null });

    const [company] = await q(`SELECT formation_date, formation_state FROM companies WHERE id = $1`, [companyId]);
    expect(company).toEqual({ formation_date: '2025-01-15', formation_state: 'WY' });
  });

  it('refuses to move a terminal order, leaving no history or event behind', async () => {
    const tenant = await newTestTenant();
    const { orderId } = await createOrderRow(t.ctx, tenant);
    await transitionOrder(t.ctx, tenant, orderId, { filingStatus: 'cancelled' }, 'test_helper');
    const before = [(await historyOf(orderId)).length, (await eventsOf(orderId)).length];
    await expect(
      transitionOrder(t.ctx, tenant, orderId, { filingStatus: 'pending' }, 'test_helper'),
    ).rejects.toMatchObject({ status: 409, code: 'invalid_transition' });
    expect([(await historyOf(orderId)).length, (await eventsOf(orderId)).length]).toEqual(before);
  });

  it('reverses every debit of a cancelled balance-billed order in the same transaction', async () => {
    const tenant = await newTestTenant();
    const { orderId } = await createOrderRow(t.ctx, tenant, {
      orderType: 'formation',
      debitLines: [
        { amountCents: 29900, lineType: 'formation_tier_1' },
        { amountCents: 11000, lineType: 'state_fee' },
      ],
    });
    const other = await createOrderRow(t.ctx, tenant, {
      orderType: 'ein',
      debitLines: [{ amountCents: 7900, lineType: 'ein' }],
    });
    const balanceBefore = await balanceOf(tenant);

    const { reversals, order } = await transitionOrder(
      t.ctx,
      tenant,
      orderId,
      { filingStatus: 'cancelled' },
      'test_helper',
    );
    expect(order.filing_status).toBe('cancelled');
    expect(reversals).toHaveLength(2);

    const entries = await q(
      `SELECT id, type, amount_cents, line_type, reverses_entry_id, created_by FROM ledger_entries WHERE order_id = $1 ORDER BY id`,
      [orderId],
    );
    const debits = entries.filter((e) => e.type === 'debit');
    const reversalRows = entries.filter((e) => e.type === 'reversal');
    expect(debits.map((d) => d.amount_cents).sort()).toEqual([-29900, -11000].sort());
    expect(reversalRows.map((r) => [r.reverses_entry_id, r.amount_cents, r.line_type, r.created_by]).sort()).toEqual(
      debits.map((d) => [d.id, -d.amount_cents, d.line_type, 'test_helper']).sort(),
    );
    expect(await balanceOf(tenant)).toBe(balanceBefore + 29900 + 11000);
    // The other order's debit is untouched.
    expect(
      await q(`SELECT 1 FROM ledger_entries WHERE order_id = $1 AND type = 'reversal'`, [other.orderId]),
    ).toHaveLength(0);
  });

  it('does not touch the ledger when a checkout-paid order is cancelled, and stops a cancelled subscription', async () => {
    const tenant = await newTestTenant();
    const { orderId } = await createOrderRow(t.ctx, tenant, { orderType: 'registered_agent', billing: 'checkout' });
    const { order, event } = await transitionOrder(t.ctx, tenant, orderId, { filingStatus: 'cancelled' }, 'operator');
    expect(order.subscription_status).toBe('canceled');
    expect(event.data).toMatchObject({ filingStatus: 'cancelled', subscriptionStatus: 'canceled' });
    expect(await q(`SELECT 1 FROM ledger_entries WHERE order_id = $1`, [orderId])).toHaveLength(0);
  });

  it('keeps a filed registered agent subscription active and reports change_of_agent filings', async () => {
    const tenant = await newTestTenant();
    const { orderId } = await createOrderRow(t.ctx, tenant, {
      orderType: 'registered_agent',
      filingType: 'change_of_agent',
    });
    const { event } = await transitionOrder(t.ctx, tenant, orderId, { filingStatus: 'filed' }, 'test_helper');
    expect(event.data).toMatchObject({
      orderType: 'registered_agent',
      filingType: 'change_of_agent',
      subscriptionStatus: 'active',
      filingStatus: 'filed',
    });
  });

  it("sets the company's EIN when an EIN order is filed: supplied in live, a fake 00- number in test", async () => {
    const live = await newTestTenant('live');
    const liveOrder = await createOrderRow(t.ctx, live, { orderType: 'ein' });
    await expect(
      transitionOrder(t.ctx, null, liveOrder.orderId, { filingStatus: 'filed' }, 'operator'),
    ).rejects.toMatchObject({ status: 400 });
    await transitionOrder(t.ctx, null, liveOrder.orderId, { filingStatus: 'filed', ein: '84-1234567' }, 'operator');
    expect((await q(`SELECT ein FROM companies WHERE id = $1`, [liveOrder.companyId]))[0].ein).toBe('84-1234567');

    const test = await newTestTenant();
    const testOrder = await createOrderRow(t.ctx, test, { orderType: 'ein' });
    await transitionOrder(t.ctx, test, testOrder.orderId, { filingStatus: 'filed' }, 'test_helper');
    expect((await q(`SELECT ein FROM companies WHERE id = $1`, [testOrder.companyId]))[0].ein).toMatch(/^00-\d{7}$/);
  });

  it("answers 404 for another tenant's order, and for the same organization's other environment", async () => {
    const owner = await newTestTenant();
    const { orderId } = await createOrderRow(t.ctx, owner);
    const stranger = await newTestTenant();
    await expect(
      transitionOrder(t.ctx, stranger, orderId, { filingStatus: 'pending' }, 'test_helper'),
    ).rejects.toMatchObject({ status: 404 });
    await expect(
      transitionOrder(t.ctx, { ...owner, environment: 'live' }, orderId, { filingStatus: 'pending' }, 'test_helper'),
    ).rejects.toMatchObject({ status: 404 });
  });

  it('writes the change and its event in one transaction: when the event cannot be written, nothing changes', async () => {
    const tenant = await newTestTenant();
    const { orderId } = await createOrderRow(t.ctx, tenant, {
      debitLines: [{ amountCents: 5000, lineType: 'formation_tier_1' }],
    });
    await t.ctx.pool.query(`CREATE OR REPLACE FUNCTION test_refuse_event() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.data->>'orderId' = '${orderId}' THEN RAISE EXCEPTION 'event store unavailable'; END IF; RETURN NEW; END $$`);
    await t.ctx.pool.query(
      `CREATE TRIGGER test_refuse_event BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION test_refuse_event()`,
    );
    try {
      const balance = await balanceOf(tenant);
      await expect(
        transitionOrder(t.ctx, tenant, orderId, { filingStatus: 'cancelled' }, 'test_helper'),
      ).rejects.toThrow('event store unavailable');
      expect((await q(`SELECT filing_status FROM orders WHERE id = $1`, [orderId]))[0].filing_status).toBe('submitted');
      expect(await historyOf(orderId)).toHaveLength(1);
      expect(await q(`SELECT 1 FROM ledger_entries WHERE order_id = $1 AND type = 'reversal'`, [orderId])).toHaveLength(
        0,
      );
      expect(await balanceOf(tenant)).toBe(balance);
    } finally {
      await t.ctx.pool.query(`DROP TRIGGER test_refuse_event ON events`);
    }
  });

  it('serializes concurrent transitions of one order: exactly one of filed and cancelled wins', async () => {
    const tenant = await newTestTenant();
    const { orderId } = await createOrderRow(t.ctx, tenant, {
      debitLines: [{ amountCents: 5000, lineType: 'formation_tier_1' }],
    });
    const results = await Promise.allSettled([
      transitionOrder(t.ctx, tenant, orderId, { filingStatus: 'filed' }, 'operator'),
      transitionOrder(t.ctx, tenant, orderId, { filingStatus: 'cancelled' }, 'operator'),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const rejected = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(rejected.reason).toMatchObject({ status: 409, code: 'invalid_transition' });
    expect(await eventsOf(orderId)).toHaveLength(2); // placement + the one winning transition
    expect(await historyOf(orderId)).toHaveLength(2);
  });
});

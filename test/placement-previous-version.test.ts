import { afterAll, beforeAll, expect, it } from 'vitest';
import { newId } from '../src/lib/ids.js';
import { creditBalance } from '../src/modules/billing/ledger.js';
import { createOrderRow } from './factories.js';
import { createTestApp, type TestApp, type TestTenant } from './harness.js';

// During a rolling deploy, processes of the previous version still run beside the new ones on the migrated database
// (README, "Deploying"). They send the placement statement in migration 093's shape, to `place_order_groups`, whose
// `emit_events` and `post_ledger_entries` now take their rows as arrays (migration 097): their orders must still be
// written whole, events and money included.

let t: TestApp;
let tenant: TestTenant;
beforeAll(async () => {
  t = await createTestApp();
  tenant = await t.newTenant('Previous Version Co');
});
afterAll(() => t.close());

it("places an order sent in the previous version's shape, with its history, event and debit (migration 097)", async () => {
  const scope = { organizationId: tenant.organizationId, environment: 'test' as const };
  const a = await createOrderRow(t.ctx, scope, { filingState: 'DE' });
  await creditBalance(t.ctx.pool, scope, 10_000, 'test credit', 'test');
  const before = await balanceCents();
  const groupId = newId('orderGroup');
  const orderId = newId('order');
  const eventId = newId('event');
  const payload = {
    organization_id: tenant.organizationId,
    environment: 'test',
    idempotency_key_ttl_hours: 24,
    groups: [
      {
        n: 1,
        id: groupId,
        user_id: a.userId,
        company_id: a.companyId,
        forms: false,
        filing_state: 'DE',
        source: 'api',
        billing: 'balance',
        request: { annualReport: { filingYear: 2026 } },
        total_cents: 2500,
        idempotency_key: null,
        min_balance_cents: 2500,
      },
    ],
    companies: [],
    orders: [
      {
        n: 1,
        id: orderId,
        group_id: groupId,
        company_id: a.companyId,
        user_id: a.userId,
        order_type: 'annual_report',
        filing_state: 'DE',
        filing_type: null,
        subscription_status: 'active',
        details: { filingYear: 2026 },
        billing: 'balance',
        amount_cents: 2500,
        retail_cents: null,
        margin_cents: null,
      },
    ],
    history: [{ n: 1, id: newId('statusChange'), order_id: orderId, actor: 'api' }],
    events: [{ n: 1, id: eventId, type: 'filing.status_changed', data: { orderId, filingStatus: 'submitted' } }],
    debits: [
      {
        n: 1,
        type: 'debit',
        amount_cents: -2500,
        line_type: 'annual_report',
        description: 'Annual report 2026 (DE), previous version',
        order_id: orderId,
        reverses_entry_id: null,
        created_by: 'api',
      },
    ],
  };
  const { rows } = await t.ctx.pool.query('SELECT place_order_groups($1::jsonb) AS r', [JSON.stringify(payload)]);
  expect(rows[0].r.outcomes).toEqual(['placed']);

  const { rows: written } = await t.ctx.pool.query(
    `SELECT (SELECT row_to_json(o) FROM (SELECT group_id, order_type, filing_status, subscription_status, details,
                                                amount_cents, current_period_end IS NOT NULL AS renews
                                           FROM orders WHERE id = $1) o) AS "order",
            (SELECT count(*)::int FROM order_status_history WHERE order_id = $1 AND to_status = 'submitted') AS history,
            (SELECT data FROM events WHERE id = $2) AS event,
            (SELECT row_to_json(l) FROM (SELECT amount_cents, balance_after_cents, line_type
                                           FROM ledger_entries WHERE order_id = $1) l) AS debit`,
    [orderId, eventId],
  );
  expect(written[0]).toEqual({
    order: {
      group_id: groupId,
      order_type: 'annual_report',
      filing_status: 'submitted',
      subscription_status: 'active',
      details: { filingYear: 2026 },
      amount_cents: 2500,
      renews: true,
    },
    history: 1,
    event: { orderId, filingStatus: 'submitted' },
    debit: { amount_cents: -2500, balance_after_cents: before - 2500, line_type: 'annual_report' },
  });
  expect(await balanceCents()).toBe(before - 2500);
});

async function balanceCents(): Promise<number> {
  const { rows } = await t.ctx.pool.query(
    `SELECT balance_cents::int AS b FROM balances WHERE organization_id = $1 AND environment = 'test'`,
    [tenant.organizationId],
  );
  return rows[0].b;
}

import { afterAll, beforeAll, expect, it } from 'vitest';
import { newId } from '../src/lib/ids.js';
import { creditBalance } from '../src/modules/billing/ledger.js';
import { insertPlacements, type PlacementWrite } from '../src/modules/orders/placements.repo.js';
import { createOrderRow } from './factories.js';
import { createTestApp, type TestApp, type TestTenant } from './harness.js';

// The placement statement (ORD-13, ORD-17) reads its rows by name: what it writes for a placement of a batch must
// not depend on the other placements of that batch, nor on what else their rows carry.

let t: TestApp;
let tenant: TestTenant;
beforeAll(async () => {
  t = await createTestApp();
  tenant = await t.newTenant('Placement Statement Co');
});
afterAll(() => t.close());

/** An annual report (a yearly subscription) for an existing company, with its history row, event and debit. */
function annualReport(a: { companyId: string; userId: string }, cents: number): PlacementWrite {
  const groupId = newId('orderGroup');
  const orderId = newId('order');
  return {
    rows: {
      company: null,
      group: {
        id: groupId,
        userId: a.userId,
        companyId: a.companyId,
        filingState: 'DE',
        source: 'api',
        billing: 'balance',
        request: { annualReport: { filingYear: 2026 } },
        totalCents: cents,
        idempotencyKey: null,
      },
      orders: [
        {
          id: orderId,
          company_id: a.companyId,
          user_id: a.userId,
          order_type: 'annual_report',
          filing_state: 'DE',
          filing_type: null,
          subscription_status: 'active',
          details: { filingYear: 2026 },
          billing: 'balance',
          amount_cents: cents,
          retail_cents: null,
          margin_cents: null,
        },
      ],
      actor: 'api',
    },
    historyIds: [newId('statusChange')],
    events: [{ id: newId('event'), type: 'filing.status_changed', data: { orderId, filingStatus: 'submitted' } }],
    debits: [
      {
        type: 'debit',
        amount_cents: -cents,
        line_type: 'annual_report',
        description: `Annual report 2026 (DE) ${orderId}`,
        order_id: orderId,
        reverses_entry_id: null,
        created_by: 'api',
      },
    ],
    minBalanceCents: cents,
  };
}

it("writes a batch's placed placements whole, history, event and debit included, and nothing of a refused one", async () => {
  const scope = { organizationId: tenant.organizationId, environment: 'test' as const };
  const a = await createOrderRow(t.ctx, scope, { filingState: 'DE' });
  await creditBalance(t.ctx.pool, scope, 10_000, 'test credit', 'test');
  const before = await balanceCents();
  const placed = annualReport(a, 2500);
  const refused = annualReport({ companyId: a.companyId, userId: newId('user') }, 1500);
  const outcomes = await insertPlacements(t.ctx.pool, scope, [refused, placed]);
  expect(outcomes.map((o) => o.outcome)).toEqual(['unknown_user', 'placed']);

  const written = async (w: PlacementWrite) => {
    const order = w.rows.orders[0]!;
    const { rows } = await t.ctx.pool.query(
      `SELECT (SELECT row_to_json(o) FROM (SELECT group_id, order_type, filing_status, subscription_status, details,
                                                  amount_cents, current_period_end IS NOT NULL AS renews
                                             FROM orders WHERE id = $1) o) AS "order",
              (SELECT count(*)::int FROM order_status_history WHERE id = $2 AND order_id = $1 AND to_status = 'submitted')
                AS history,
              (SELECT data FROM events WHERE id = $3) AS event,
              (SELECT row_to_json(l) FROM (SELECT amount_cents, balance_after_cents, line_type
                                             FROM ledger_entries WHERE order_id = $1) l) AS debit`,
      [order.id, w.historyIds[0], w.events[0]!.id],
    );
    return rows[0];
  };
  expect(await written(placed)).toEqual({
    order: {
      group_id: placed.rows.group.id,
      order_type: 'annual_report',
      filing_status: 'submitted',
      subscription_status: 'active',
      details: { filingYear: 2026 },
      amount_cents: 2500,
      renews: true,
    },
    history: 1,
    event: placed.events[0]!.data,
    debit: { amount_cents: -2500, balance_after_cents: before - 2500, line_type: 'annual_report' },
  });
  expect(await written(refused)).toEqual({ order: null, history: 0, event: null, debit: null });
  expect(await balanceCents()).toBe(before - 2500);
});

async function balanceCents(): Promise<number> {
  const { rows } = await t.ctx.pool.query(
    `SELECT balance_cents::int AS b FROM balances WHERE organization_id = $1 AND environment = 'test'`,
    [tenant.organizationId],
  );
  return rows[0].b;
}

import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyLedger } from '../src/modules/ledger-audit/ledger-verify.js';
import { createUser } from './factories.js';
import {
  balanceOf,
  deliverStripeEvent,
  dispute,
  fundingSuite,
  openLiveTopUp,
  payByCard,
  refundedCharge,
  topUpSession,
} from './funding-helpers.js';
import type { TestApp, TestTenant } from './harness.js';
import { formationBody } from './orders-fixtures.js';

/*
 * Monthly balance statements (FUND-21, FUND-22): over several months of top-ups, orders, a cancellation's reversal,
 * a dispute, an operator credit and a refund, each month's closing balance is the ledger's sum at the month's end and
 * the next month opens with it. The ledger is append-only, so the test dates each new entry into its month through a
 * superuser connection with triggers off (created_at only; amounts and order are the service's).
 */

const suite = fundingSuite();
const { stripe } = suite;
let t: TestApp;
let owner: pg.Client;
beforeAll(async () => {
  t = suite.t;
  owner = new pg.Client({ connectionString: t.ctx.config.databaseUrl! });
  await owner.connect();
});
afterAll(async () => {
  await owner?.end();
});

const dated = new Set<string>();

/** Dates the tenant's live entries written since the last call at `at`, one millisecond apart, in ledger order. */
async function dateNewEntries(tenant: TestTenant, at: string): Promise<number> {
  const { rows } = await owner.query<{ id: string }>(
    `SELECT id FROM ledger_entries WHERE organization_id = $1 AND environment = 'live' ORDER BY id`,
    [tenant.organizationId],
  );
  const fresh = rows.map((r) => r.id).filter((id) => !dated.has(id));
  await owner.query('BEGIN');
  await owner.query('SET LOCAL session_replication_role = replica');
  for (const [i, id] of fresh.entries()) {
    await owner.query(
      'UPDATE ledger_entries SET created_at = $2::timestamptz + $3 * interval $$1 millisecond$$ WHERE id = $1',
      [id, at, i],
    );
    dated.add(id);
  }
  await owner.query('COMMIT');
  return fresh.length;
}

/** The ledger's own sum of the tenant's live entries dated before `at`, in dollars. */
async function ledgerSumBefore(tenant: TestTenant, at: string): Promise<number> {
  const { rows } = await owner.query(
    `SELECT coalesce(sum(amount_cents), 0)::int AS cents FROM ledger_entries
      WHERE organization_id = $1 AND environment = 'live' AND created_at < $2`,
    [tenant.organizationId, at],
  );
  return rows[0].cents / 100;
}

const statement = (tenant: TestTenant, month: string, env: 'live' | 'test' = 'live') =>
  tenant.api('GET', `/balance/statements/${month}`, undefined, { env });

describe('monthly balance statements', () => {
  it('close each month at the ledger’s sum at its end, over top-ups, orders, a reversal, a dispute and a refund', async () => {
    const tenant = await t.newTenant('Statement Co');
    const user = await createUser(tenant, 'live');
    const place = async () => {
      const res = await tenant.api('POST', '/orders', formationBody(user.id, 'DE'), { env: 'live' });
      expect(res.statusCode, res.body).toBe(201);
    };

    // January: a card top-up, then an order.
    const jan = await openLiveTopUp(tenant, stripe, 1000);
    await payByCard(t, jan, 'pi_statement_jan');
    expect(await dateNewEntries(tenant, '2025-01-05T10:00:00Z')).toBe(1);
    await place();
    await dateNewEntries(tenant, '2025-01-20T15:00:00Z');
    // February: an order cancelled by the operators (its debits reversed), then a bank-debit top-up.
    await place();
    await dateNewEntries(tenant, '2025-02-03T09:00:00Z');
    const { rows: last } = await owner.query(
      `SELECT order_id FROM ledger_entries WHERE organization_id = $1 AND type = 'debit' ORDER BY id DESC LIMIT 1`,
      [tenant.organizationId],
    );
    const cancel = await t.admin('POST', `/orders/${last[0].order_id}/transitions`, { filingStatus: 'cancelled' });
    expect(cancel.statusCode, cancel.body).toBe(200);
    expect(await dateNewEntries(tenant, '2025-02-04T09:00:00Z')).toBeGreaterThan(0);
    const feb = await openLiveTopUp(tenant, stripe, 500);
    await deliverStripeEvent(
      t,
      'checkout.session.async_payment_succeeded',
      topUpSession(feb.sessionId, feb.topUp.id, 50000, { payment_status: 'paid', payment_intent: 'pi_statement_feb' }),
    );
    await dateNewEntries(tenant, '2025-02-28T23:59:59.000Z');
    // March: the January top-up is disputed (the balance may go below zero), and the operators credit $200 in the
    // month's last millisecond.
    await deliverStripeEvent(t, 'charge.dispute.created', dispute('dp_statement_1', 'pi_statement_jan', 100000));
    await dateNewEntries(tenant, '2025-03-10T12:00:00Z');
    expect(
      (
        await t.admin('POST', `/organizations/${tenant.organizationId}/balance-credits`, {
          amount: 200,
          environment: 'live',
        })
      ).statusCode,
    ).toBeLessThan(300);
    await dateNewEntries(tenant, '2025-03-31T23:59:59.999Z');
    // April: nothing. May: part of February's top-up refunded, dated at the month's first instant.
    await deliverStripeEvent(t, 'charge.refunded', refundedCharge('pi_statement_feb', 50000, 5000, ['re_statement_1']));
    expect(await dateNewEntries(tenant, '2025-05-01T00:00:00.000Z')).toBe(1);

    const months = ['2024-12', '2025-01', '2025-02', '2025-03', '2025-04', '2025-05', '2025-06'];
    const seenTypes = new Set<string>();
    let previousClosing = 0;
    for (const month of months) {
      const res = await statement(tenant, month);
      expect(res.statusCode, res.body).toBe(200);
      const s = res.json();
      const [y, m] = month.split('-').map(Number);
      const start = new Date(Date.UTC(y, m - 1, 1)).toISOString();
      const end = new Date(Date.UTC(y, m, 1)).toISOString();
      expect(s).toMatchObject({
        object: 'balance_statement',
        month,
        environment: 'live',
        currency: 'usd',
        periodStart: start,
        periodEnd: end,
        final: true,
      });
      expect(s.openingBalance, month).toBe(previousClosing);
      expect(s.openingBalance, month).toBe(await ledgerSumBefore(tenant, start));
      expect(s.closingBalance, month).toBe(await ledgerSumBefore(tenant, end));
      const sum = s.transactions.reduce((a: number, x: { amount: number }) => a + Math.round(x.amount * 100), 0);
      expect(Math.round(s.closingBalance * 100), month).toBe(Math.round(s.openingBalance * 100) + sum);
      expect(Math.round((s.totalCredits - s.totalDebits) * 100)).toBe(sum);
      for (const x of s.transactions) {
        seenTypes.add(x.type);
        expect(x.createdAt >= start && x.createdAt < end, `${month}: ${x.createdAt}`).toBe(true);
        // Each names its order or its payment (an operator credit names neither).
        if (x.type === 'debit' || x.type === 'reversal') expect(x.orderId).toMatch(/^order_/);
        if (x.type === 'clawback' || x.lineType === 'top_up') expect(x.reference).toBeTruthy();
      }
      previousClosing = s.closingBalance;
    }
    expect([...seenTypes].sort()).toEqual(['clawback', 'credit', 'debit', 'reversal']);

    const byMonth = async (month: string) => (await statement(tenant, month)).json();
    expect((await byMonth('2024-12')).transactions).toEqual([]);
    expect((await byMonth('2025-01')).transactions[0]).toMatchObject({
      type: 'credit',
      amount: 1000,
      reference: jan.topUp.id,
    });
    const march = await byMonth('2025-03');
    expect(march.transactions.map((x: { type: string; reference: string | null }) => [x.type, x.reference])).toEqual([
      ['clawback', 'dp_statement_1'],
      ['credit', null],
    ]);
    const april = await byMonth('2025-04');
    expect(april.transactions).toEqual([]);
    expect(april.openingBalance).toBe(april.closingBalance);
    expect((await byMonth('2025-05')).transactions).toEqual([
      expect.objectContaining({ type: 'clawback', lineType: 'refund', amount: -50, reference: 're_statement_1' }),
    ]);
    // The current month closes, so far, at the balance itself.
    const current = new Date().toISOString().slice(0, 7);
    const now = (await statement(tenant, current)).json();
    expect(now).toMatchObject({ final: false, transactions: [] });
    expect(now.closingBalance).toBe(await balanceOf(tenant, 'live'));
    expect(now.closingBalance).toBe(previousClosing);
    // The test balance has a statement of its own.
    expect((await statement(tenant, '2025-01', 'test')).json()).toMatchObject({
      environment: 'test',
      openingBalance: 0,
      closingBalance: 0,
      transactions: [],
    });
    expect(await verifyLedger(t.ctx)).toEqual([]);

    // The same statement as CSV, by format or by Accept.
    for (const ask of [
      { url: '/balance/statements/2025-03?format=csv', headers: {} as Record<string, string> },
      { url: '/balance/statements/2025-03', headers: { accept: 'text/csv' } },
    ]) {
      const csv = await tenant.api('GET', ask.url, undefined, { env: 'live', headers: ask.headers });
      expect(csv.statusCode).toBe(200);
      expect(csv.headers['content-type']).toMatch(/^text\/csv/);
      expect(csv.headers['content-disposition']).toContain('balance-statement-live-2025-03.csv');
      const lines = csv.body.split('\r\n').filter(Boolean);
      expect(lines[0]).toBe('id,createdAt,type,lineType,description,orderId,reference,amount,balanceAfter,currency');
      expect(lines[1]).toMatch(
        new RegExp(`^,2025-03-01T00:00:00.000Z,opening_balance,.*,${march.openingBalance.toFixed(2)},USD$`),
      );
      expect(lines[2]).toContain(',clawback,dispute,');
      expect(lines[2]).toContain(',dp_statement_1,-1000.00,');
      expect(lines.at(-1)).toMatch(
        new RegExp(`^,2025-04-01T00:00:00.000Z,closing_balance,.*,${march.closingBalance.toFixed(2)},USD$`),
      );
      expect(lines).toHaveLength(5);
    }
  });

  it('refuses a malformed or future month with 400 naming month', async () => {
    const tenant = await t.newTenant('Statement Errors Co');
    const now = new Date();
    const next = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString().slice(0, 7);
    for (const month of ['2025-13', '2025-1', 'march', '1999-12', next, '2025-03-01']) {
      for (const env of ['live', 'test'] as const) {
        const res = await statement(tenant, month, env);
        expect(res.statusCode, `${month}: ${res.body}`).toBe(400);
        expect(res.json().errors.map((e: { field: string }) => e.field)).toEqual(['month']);
      }
    }
    const bad = await tenant.api('GET', '/balance/statements/2025-01?format=pdf');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors[0].field).toBe('format');
  });
});

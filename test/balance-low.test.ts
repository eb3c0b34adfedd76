import { beforeAll, describe, expect, it } from 'vitest';
import { verifyLedger } from '../src/modules/ledger-audit/ledger-verify.js';
import { createUser } from './factories.js';
import {
  balanceOf,
  deliverStripeEvent,
  dispute,
  eventsOf,
  fundingSuite,
  openLiveTopUp,
  payByCard,
} from './funding-helpers.js';
import type { TestApp, TestTenant } from './harness.js';
import { formationBody, stateFee, wholesale } from './orders-fixtures.js';

/*
 * The low-balance alert (FUND-15..FUND-19): PATCH /organization sets lowBalanceThreshold; a debit that takes a balance
 * from at or above it to below it emits balance.low once per crossing, in the debit's own transaction.
 */

const suite = fundingSuite();
let t: TestApp;
beforeAll(() => {
  t = suite.t;
});

/** What one Delaware LLC formation with a supplied agent debits (cents), from the data files the service seeds from. */
const FORMATION = wholesale('formation_tier_1') + stateFee('DE', 'Formation', 'LLC');
const dollars = (cents: number) => Math.round(cents) / 100;

const setThreshold = (tenant: TestTenant, lowBalanceThreshold: number | null) =>
  tenant.api('PATCH', '/organization', { lowBalanceThreshold }, { env: 'live' });

describe('lowBalanceThreshold', () => {
  it('is set with a live key in dollars, shown by GET /organization, removed with null, and validated', async () => {
    const tenant = await t.newTenant('Threshold Settings Co');
    const set = await setThreshold(tenant, 250.75);
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json().lowBalanceThreshold).toBe(250.75);
    expect((await tenant.api('GET', '/organization')).json().lowBalanceThreshold).toBe(250.75);
    for (const bad of [-1, 1.234, 10_000_000.01]) {
      const res = await setThreshold(tenant, bad);
      expect(res.statusCode, String(bad)).toBe(400);
      expect(res.json().errors.map((e: { field: string }) => e.field)).toEqual(['lowBalanceThreshold']);
    }
    const fromTest = await tenant.api('PATCH', '/organization', { lowBalanceThreshold: 5 });
    expect(fromTest.statusCode).toBe(403);
    expect((await setThreshold(tenant, null)).json().lowBalanceThreshold).toBeNull();
  });
});

describe('balance.low', () => {
  it('is emitted once per crossing by the debit that crosses, and again only after the balance was back at or above', async () => {
    const tenant = await t.newTenant('Low Balance Co');
    const threshold = 10 * FORMATION;
    expect((await setThreshold(tenant, dollars(threshold))).statusCode).toBe(200);
    const endpoint = await tenant.api('POST', '/webhook-endpoints', {
      url: 'http://127.0.0.1:9/hooks',
      eventTypes: ['balance.low'],
    });
    expect(endpoint.statusCode, endpoint.body).toBe(201);
    const user = await createUser(tenant);
    const topUp = async (cents: number) =>
      expect((await tenant.api('POST', '/balance/top-ups', { amount: dollars(cents) })).statusCode).toBe(201);
    const order = async () => {
      const res = await tenant.api('POST', '/orders', formationBody(user.id, 'DE'));
      expect(res.statusCode, res.body).toBe(201);
    };
    const alerts = () => eventsOf(t, tenant, 'test', 'balance.low');

    await topUp(threshold + 1.5 * FORMATION);
    await order(); // threshold + 0.5 F: still above
    expect(await alerts()).toEqual([]);
    await order(); // threshold - 0.5 F: crossed
    const [first] = await alerts();
    expect(first).toEqual({
      balance: dollars(threshold - 0.5 * FORMATION),
      threshold: dollars(threshold),
      balanceTransactionId: expect.stringMatching(/^txn_/),
    });
    // The event names the debit that crossed, written with it, and its delivery is queued for the endpoint.
    const crossing = await t.ctx.pool.query(
      'SELECT type, balance_after_cents::int AS after FROM ledger_entries WHERE id = $1',
      [first.balanceTransactionId],
    );
    expect(crossing.rows).toEqual([{ type: 'debit', after: threshold - 0.5 * FORMATION }]);
    const deliveries = await t.ctx.pool.query(
      `SELECT count(*)::int AS n FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
        WHERE e.organization_id = $1 AND e.type = 'balance.low'`,
      [tenant.organizationId],
    );
    expect(deliveries.rows[0].n).toBe(1);

    await order(); // further below: no new alert
    await topUp(0.5 * FORMATION); // still below: not re-armed
    await order();
    expect(await alerts()).toHaveLength(1);
    await topUp(3 * FORMATION); // threshold + F: re-armed
    await order(); // exactly at the threshold: not below
    expect(await alerts()).toHaveLength(1);
    await order(); // below again: the second alert
    expect((await alerts()).map((a) => a.balance)).toEqual([
      dollars(threshold - 0.5 * FORMATION),
      dollars(threshold - FORMATION),
    ]);
    // A refused order (402) debits nothing and alerts nothing.
    expect(await balanceOf(tenant, 'live')).toBe(0);
    const liveUser = await createUser(tenant, 'live');
    const refused = await tenant.api('POST', '/orders', formationBody(liveUser.id, 'DE'), { env: 'live' });
    expect(refused.statusCode).toBe(402);
    expect(await eventsOf(t, tenant, 'live', 'balance.low')).toEqual([]);
    expect(await verifyLedger(t.ctx)).toEqual([]);
  });

  it('comes from a clawback too, in the environment whose balance crossed, and never without a threshold', async () => {
    const tenant = await t.newTenant('Low Balance Dispute Co');
    expect((await setThreshold(tenant, 50)).statusCode).toBe(200);
    const opened = await openLiveTopUp(tenant, suite.stripe, 100);
    await payByCard(t, opened, 'pi_low_dispute');
    await deliverStripeEvent(t, 'charge.dispute.created', dispute('dp_low_1', 'pi_low_dispute', 10000));
    expect(await balanceOf(tenant, 'live')).toBe(0);
    expect(await eventsOf(t, tenant, 'live', 'balance.low')).toEqual([
      { balance: 0, threshold: 50, balanceTransactionId: expect.stringMatching(/^txn_/) },
    ]);
    expect(await eventsOf(t, tenant, 'test', 'balance.low')).toEqual([]);

    const quiet = await t.newTenant('No Threshold Co');
    const other = await openLiveTopUp(quiet, suite.stripe, 100);
    await payByCard(t, other, 'pi_quiet');
    await deliverStripeEvent(t, 'charge.dispute.created', dispute('dp_quiet', 'pi_quiet', 10000));
    expect(await eventsOf(t, quiet, 'live', 'balance.low')).toEqual([]);
  });
});

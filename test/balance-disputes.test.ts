import { beforeAll, describe, expect, it } from 'vitest';
import { withTransaction } from '../src/lib/db.js';
import { appendLedgerEntry } from '../src/modules/billing/ledger.js';
import { verifyLedger } from '../src/modules/ledger-audit/ledger-verify.js';
import { createUser } from './factories.js';
import {
  balanceOf,
  deliverStripeEvent,
  dispute,
  eventsOf,
  fundingSuite,
  ledgerOf,
  openLiveTopUp,
  payByCard,
  refundedCharge,
} from './funding-helpers.js';
import type { TestApp, TestTenant } from './harness.js';
import { formationBody } from './orders-fixtures.js';

/*
 * A top-up whose payment is disputed or refunded is taken back from the balance (FUND-10..FUND-14): one clawback
 * entry naming the dispute or refund, even below zero, once however Stripe sends it; orders answer 402 until the
 * balance is funded again, and every other debit is still refused below zero.
 */

const suite = fundingSuite();
const { stripe } = suite;
let t: TestApp;
beforeAll(() => {
  t = suite.t;
});

/** A live tenant with a paid card top-up of `amount` dollars (PaymentIntent `paymentIntent`). */
async function fundedTenant(name: string, amount: number, paymentIntent: string) {
  const tenant = await t.newTenant(name);
  const opened = await openLiveTopUp(tenant, stripe, amount);
  expect((await payByCard(t, opened, paymentIntent)).res.statusCode).toBe(200);
  expect(await balanceOf(tenant, 'live')).toBe(amount);
  return { tenant, topUp: opened.topUp };
}

const placeFormation = async (tenant: TestTenant, userId: string) =>
  tenant.api('POST', '/orders', formationBody(userId, 'DE'), { env: 'live' });

describe('disputes and refunds of a top-up', () => {
  it('a dispute takes the top-up back even below zero; orders answer 402 until the balance is funded again', async () => {
    const { tenant, topUp } = await fundedTenant('Dispute Co', 1000, 'pi_disputed_1');
    const user = await createUser(tenant, 'live');
    const placed = await placeFormation(tenant, user.id);
    expect(placed.statusCode, placed.body).toBe(201);
    const afterOrder = await balanceOf(tenant, 'live');
    expect(afterOrder).toBeLessThan(1000);

    const { res } = await deliverStripeEvent(
      t,
      'charge.dispute.created',
      dispute('dp_full_1', 'pi_disputed_1', 100000),
    );
    expect(res.statusCode, res.body).toBe(200);
    const negative = Math.round((afterOrder - 1000) * 100) / 100;
    expect(await balanceOf(tenant, 'live')).toBe(negative);
    expect((await ledgerOf(t, tenant, 'live')).at(-1)).toMatchObject({
      type: 'clawback',
      amount: -100000,
      lineType: 'dispute',
      reference: 'dp_full_1',
      description: expect.stringContaining(topUp.id),
    });
    expect(await eventsOf(t, tenant, 'live', 'balance.top_up_reversed')).toEqual([
      {
        topUpId: topUp.id,
        reason: 'dispute',
        reference: 'dp_full_1',
        amount: 1000,
        balance: negative,
        balanceTransactionId: expect.stringMatching(/^txn_/),
      },
    ]);
    // Operators are told in the log.
    expect(t.logs.some((l) => l.includes('"notice":"top_up_taken_back"') && l.includes('dp_full_1'))).toBe(true);
    const txns = (await tenant.api('GET', '/balance-transactions', undefined, { env: 'live' })).json().data;
    expect(txns[0]).toMatchObject({ type: 'clawback', amount: -1000, reference: 'dp_full_1', balanceAfter: negative });

    // Below zero, every order is refused with 402 and writes nothing.
    const refused = await placeFormation(tenant, user.id);
    expect(refused.statusCode).toBe(402);
    expect(refused.json()).toMatchObject({ code: 'insufficient_balance', balance: negative });
    expect(await balanceOf(tenant, 'live')).toBe(negative);

    // Funded again, orders go through.
    const again = await openLiveTopUp(tenant, stripe, 1000);
    await payByCard(t, again, 'pi_refund_after_dispute');
    expect(await balanceOf(tenant, 'live')).toBe(Math.round((negative + 1000) * 100) / 100);
    expect((await placeFormation(tenant, user.id)).statusCode).toBe(201);
    expect(await verifyLedger(t.ctx)).toEqual([]);
  });

  it('takes a dispute back once for racing duplicates and redeliveries', async () => {
    const { tenant } = await fundedTenant('Dispute Race Co', 300, 'pi_dispute_race');
    const object = dispute('dp_race_1', 'pi_dispute_race', 12000);
    const id = 'evt_1DisputeRaceSameId';
    const results = await Promise.all([
      ...Array.from({ length: 4 }, () => deliverStripeEvent(t, 'charge.dispute.created', object, { id })),
      deliverStripeEvent(t, 'charge.dispute.created', object),
      deliverStripeEvent(t, 'charge.dispute.created', object),
    ]);
    expect(results.map((r) => r.res.statusCode)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(await balanceOf(tenant, 'live')).toBe(180);
    expect((await ledgerOf(t, tenant, 'live')).filter((e) => e.type === 'clawback')).toHaveLength(1);
    expect(await eventsOf(t, tenant, 'live', 'balance.top_up_reversed')).toHaveLength(1);
  });

  it('takes refunds back by what each adds to the charge’s refunded total, never more than the top-up', async () => {
    const { tenant, topUp } = await fundedTenant('Refund Co', 200, 'pi_refunded_1');
    await deliverStripeEvent(t, 'charge.refunded', refundedCharge('pi_refunded_1', 20000, 5000, ['re_first']));
    expect(await balanceOf(tenant, 'live')).toBe(150);
    // The same refund again under another event id, and an older state arriving late: nothing more.
    await deliverStripeEvent(t, 'charge.refunded', refundedCharge('pi_refunded_1', 20000, 5000, ['re_first']));
    await deliverStripeEvent(
      t,
      'charge.refunded',
      refundedCharge('pi_refunded_1', 20000, 20000, ['re_second', 're_first']),
    );
    await deliverStripeEvent(t, 'charge.refunded', refundedCharge('pi_refunded_1', 20000, 5000, ['re_first']));
    expect(await balanceOf(tenant, 'live')).toBe(0);
    const clawbacks = (await ledgerOf(t, tenant, 'live')).filter((e) => e.type === 'clawback');
    expect(clawbacks).toEqual([
      expect.objectContaining({ amount: -5000, lineType: 'refund', reference: 're_first' }),
      expect.objectContaining({ amount: -15000, lineType: 'refund', reference: 're_second' }),
    ]);
    // A dispute after a full refund has nothing left to take.
    await deliverStripeEvent(t, 'charge.dispute.created', dispute('dp_after_refund', 'pi_refunded_1', 20000));
    expect(await balanceOf(tenant, 'live')).toBe(0);
    const events = await eventsOf(t, tenant, 'live', 'balance.top_up_reversed');
    expect(events.map((e) => [e.topUpId, e.reason, e.amount])).toEqual([
      [topUp.id, 'refund', 50],
      [topUp.id, 'refund', 150],
    ]);
  });

  it('leaves the ledger exact for a payment that is no top-up, a forged signature and a top-up never credited', async () => {
    const { tenant } = await fundedTenant('Dispute Exact Co', 100, 'pi_exact_1');
    const before = await ledgerOf(t, tenant, 'live');
    const unknown = await deliverStripeEvent(
      t,
      'charge.dispute.created',
      dispute('dp_not_ours', 'pi_not_a_top_up', 5000),
    );
    expect(unknown.res.statusCode).toBe(200);
    const forged = await deliverStripeEvent(t, 'charge.dispute.created', dispute('dp_forged', 'pi_exact_1', 10000), {
      secret: 'whsec_forged_secret',
    });
    expect(forged.res.statusCode).toBe(400);
    const pending = await openLiveTopUp(tenant, stripe, 50);
    await deliverStripeEvent(t, 'charge.refunded', refundedCharge('pi_never_paid', 5000, 5000, ['re_x']));
    expect(await ledgerOf(t, tenant, 'live')).toEqual(before);
    expect(await balanceOf(tenant, 'live')).toBe(100);
    const still = await tenant.api('GET', `/balance/top-ups/${pending.topUp.id}`, undefined, { env: 'live' });
    expect(still.json().status).toBe('pending');
    expect(await verifyLedger(t.ctx)).toEqual([]);
  });

  it('refuses every other debit that would take the balance below zero (the database check)', async () => {
    const tenant = await t.newTenant('Overdraft Co');
    const live = { organizationId: tenant.organizationId, environment: 'live' as const };
    await expect(
      withTransaction(t.ctx.pool, (tx) =>
        appendLedgerEntry(tx, live, { type: 'debit', amountCents: -100, lineType: 'ein', description: 'Overdraft' }),
      ),
    ).rejects.toThrow(/ledger_entries_no_overdraft/);
    expect(await ledgerOf(t, tenant, 'live')).toEqual([]);
    expect(await balanceOf(tenant, 'live')).toBe(0);
  });
});

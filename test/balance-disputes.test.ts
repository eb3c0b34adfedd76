import fs from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { sendTopUpReversalEmailTask } from '../src/modules/funding/reversal-email.task.js';
import { outboxDir } from '../src/modules/notifications/mailer.js';
import { taskDefinitions } from '../src/tasks.js';
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
  paymentIntent,
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

  it('gives a won dispute back once, naming the dispute; a lost one changes nothing more', async () => {
    const { tenant, topUp } = await fundedTenant('Dispute Won Co', 400, 'pi_won_1');
    await deliverStripeEvent(t, 'charge.dispute.created', dispute('dp_won_1', 'pi_won_1', 15000));
    expect(await balanceOf(tenant, 'live')).toBe(250);
    const closed = dispute('dp_won_1', 'pi_won_1', 15000, 'won');
    const id = 'evt_1DisputeWonSameId';
    const results = await Promise.all([
      ...Array.from({ length: 3 }, () => deliverStripeEvent(t, 'charge.dispute.closed', closed, { id })),
      deliverStripeEvent(t, 'charge.dispute.closed', closed),
      deliverStripeEvent(t, 'charge.dispute.closed', closed),
    ]);
    expect(results.map((r) => r.res.statusCode)).toEqual([200, 200, 200, 200, 200]);
    expect(await balanceOf(tenant, 'live')).toBe(400);
    expect((await ledgerOf(t, tenant, 'live')).at(-1)).toMatchObject({
      type: 'credit',
      amount: 15000,
      lineType: 'dispute_won',
      reference: 'dp_won_1',
      description: expect.stringContaining(topUp.id),
    });
    expect(await eventsOf(t, tenant, 'live', 'balance.top_up_reinstated')).toEqual([
      {
        topUpId: topUp.id,
        reason: 'dispute_won',
        reference: 'dp_won_1',
        amount: 150,
        balance: 400,
        balanceTransactionId: expect.stringMatching(/^txn_/),
      },
    ]);
    expect(t.logs.some((l) => l.includes('"notice":"top_up_dispute_won"') && l.includes('dp_won_1'))).toBe(true);
    // What was given back can be disputed again (a second dispute) and refunded in full.
    await deliverStripeEvent(t, 'charge.refunded', refundedCharge('pi_won_1', 40000, 40000, null));
    expect(await balanceOf(tenant, 'live')).toBe(0);

    // A lost dispute: taken back when opened, nothing more when closed; a won one that took nothing gives nothing.
    const lost = await fundedTenant('Dispute Lost Co', 100, 'pi_lost_1');
    await deliverStripeEvent(t, 'charge.dispute.created', dispute('dp_lost_1', 'pi_lost_1', 10000));
    await deliverStripeEvent(t, 'charge.dispute.closed', dispute('dp_lost_1', 'pi_lost_1', 10000, 'lost'));
    await deliverStripeEvent(t, 'charge.dispute.closed', dispute('dp_never_opened', 'pi_lost_1', 10000, 'won'));
    expect(await balanceOf(lost.tenant, 'live')).toBe(0);
    expect(await eventsOf(t, lost.tenant, 'live', 'balance.top_up_reinstated')).toEqual([]);
    expect(await verifyLedger(t.ctx)).toEqual([]);
  });

  it('emails the organization’s contact and owners, and the operators, of each clawback and give-back', async () => {
    const { tenant, topUp } = await fundedTenant('Dispute Mail Co', 250, 'pi_mail_1');
    await t.ctx.pool.query("UPDATE organizations SET contact_email = 'tech@mail-co.example' WHERE id = $1", [
      tenant.organizationId,
    ]);
    await t.ctx.pool.query(
      `INSERT INTO operators (id, email, name, password_hash) VALUES ('op_mail_1', 'ops@platform.example', 'Ops', 'x')`,
    );
    await deliverStripeEvent(t, 'charge.dispute.created', dispute('dp_mail_1', 'pi_mail_1', 25000));
    await deliverStripeEvent(t, 'charge.dispute.closed', dispute('dp_mail_1', 'pi_mail_1', 25000, 'won'));
    const { rows } = await t.ctx.pool.query(
      `SELECT j.payload FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks k ON k.id = j.task_id
        WHERE k.identifier = 'send_top_up_reversal_email' AND j.payload->>'topUpId' = $1 ORDER BY j.id`,
      [topUp.id],
    );
    expect(rows.map((r) => [r.payload.kind, r.payload.reference, r.payload.amountCents])).toEqual([
      ['taken_back', 'dp_mail_1', 25000],
      ['given_back', 'dp_mail_1', 25000],
    ]);
    expect(taskDefinitions.send_top_up_reversal_email).toBe(sendTopUpReversalEmailTask);
    const dir = outboxDir(t.ctx.config);
    const before = new Set(fs.existsSync(dir) ? fs.readdirSync(dir) : []);
    const helpers = { logger: { info: () => undefined } } as never;
    await sendTopUpReversalEmailTask.handler(t.ctx)(rows[0].payload, helpers);
    const mails = fs
      .readdirSync(dir)
      .filter((f) => !before.has(f))
      .map((f) => fs.readFileSync(`${dir}/${f}`, 'utf8'));
    expect(mails).toHaveLength(2);
    const toOrg = mails.find((m) => m.includes('tech@mail-co.example'))!;
    const toOps = mails.find((m) => m.includes('ops@platform.example'))!;
    expect(toOrg).toContain('Subject: Top-up disputed: $250.00 taken back from the balance');
    expect(toOrg).toContain(topUp.id);
    expect(toOrg).not.toContain('ops@platform.example');
    expect(toOps).toContain(tenant.organizationId);
    expect(toOps).toContain('dp_mail_1');
  });

  it('leaves the ledger exact for PaymentIntent events of a top-up (the session events credit it)', async () => {
    const { tenant, topUp } = await fundedTenant('Payment Intent Co', 60, 'pi_intent_1');
    const before = await ledgerOf(t, tenant, 'live');
    for (const type of ['payment_intent.succeeded', 'payment_intent.payment_failed'])
      expect((await deliverStripeEvent(t, type, paymentIntent('pi_intent_1', 6000, topUp.id))).res.statusCode).toBe(
        200,
      );
    expect(await ledgerOf(t, tenant, 'live')).toEqual(before);
    expect(await balanceOf(tenant, 'live')).toBe(60);
  });
});

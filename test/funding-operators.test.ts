import { beforeAll, describe, expect, it } from 'vitest';
import { creditBalance } from '../src/modules/billing/ledger.js';
import { runAutoRecharge } from '../src/modules/funding/auto-recharge.service.js';
import { runCli } from './cli-runner.js';
import { consoleClient, newOperator, signIn } from './console-helpers.js';
import {
  deliverStripeEvent,
  dispute,
  fundingSuite,
  type IntentOutcome,
  openLiveTopUp,
  paymentIntentRoute,
  payByCard,
  refundedCharge,
} from './funding-helpers.js';
import { createUser } from './factories.js';
import type { TestApp, TestTenant } from './harness.js';
import { formationBody, stateFee, wholesale } from './orders-fixtures.js';

/*
 * The operators' view of funding (FUND-27, FUND-40, FUND-41): the console's Top-ups page and `balance top-ups` list
 * every top-up with its failure and what disputes and refunds took back, every automatic recharge with its attempts and
 * failure, and every dispute, refund and won dispute, with the same filters; `ledger verify` still finds every balance
 * equal to its ledger after clawbacks below zero.
 */

const suite = fundingSuite();
const { stripe } = suite;
/** The suite's app (set by fundingSuite's beforeAll). */
const app = (): TestApp => suite.t;

/** What the stand-in answers to the next auto-recharge attempts (POST /v1/payment_intents), then `succeeded`. */
const intentOutcomes: IntentOutcome[] = [];

beforeAll(() => {
  stripe.routes.push(paymentIntentRoute(intentOutcomes));
});

/** What one Delaware LLC formation with a supplied agent debits (cents), from the data files the service seeds from. */
const FORMATION = wholesale('formation_tier_1') + stateFee('DE', 'Formation', 'LLC');
const quietLog = { info: () => undefined, warn: () => undefined, error: () => undefined };

/**
 * A tenant whose live balance is 3 formations with auto-recharge on at "below 3 formations, add 3 formations" (a
 * method as Stripe's setup event saves it); `order()` places one live formation.
 */
async function rechargingTenant(t: TestApp, name: string, customer: string) {
  const tenant = await t.newTenant(name);
  await creditBalance(
    t.ctx.pool,
    { organizationId: tenant.organizationId, environment: 'live' },
    3 * FORMATION,
    'wire',
    null,
  );
  await t.ctx.pool.query(
    `INSERT INTO auto_recharge_settings (organization_id, enabled, threshold_cents, amount_cents, stripe_customer,
                                         payment_method, method_saved_at)
     VALUES ($1, true, $2, $2, $3, $4, now())`,
    [tenant.organizationId, 3 * FORMATION, customer, `pm_${customer.slice(4)}`],
  );
  const user = await createUser(tenant, 'live');
  const order = async () => {
    const res = await tenant.api('POST', '/orders', formationBody(user.id, 'DE'), { env: 'live' });
    expect(res.statusCode, res.body).toBe(201);
  };
  return { tenant, order };
}

/** The tenant's recharges, newest first. */
async function rechargesOf(t: TestApp, tenant: TestTenant) {
  return (
    await t.ctx.pool.query(
      'SELECT id, status, top_up_id, payment_intent FROM auto_recharges WHERE organization_id = $1 ORDER BY id DESC',
      [tenant.organizationId],
    )
  ).rows as Array<{ id: string; status: string; top_up_id: string | null; payment_intent: string | null }>;
}

const rechargeRows = (body: string) => [...body.matchAll(/<tr data-recharge="(arc_[a-z0-9]+)">/g)].map((m) => m[1]);

describe('operators see every top-up, failure and dispute', () => {
  it('in the console and the CLI, filtered, and ledger verify still holds', async () => {
    const t = app();
    const tenant = await t.newTenant('Operator View Co');
    const other = await t.newTenant('Operator Other Co');
    const paid = await openLiveTopUp(tenant, stripe, 300);
    await payByCard(t, paid, 'pi_ops_paid');
    stripe.failSessions = 'Stripe is down';
    const failed = await tenant
      .api('POST', '/balance/top-ups', { amount: 55 }, { env: 'live' })
      .finally(() => (stripe.failSessions = null));
    expect(failed.statusCode).toBe(503);
    await deliverStripeEvent(t, 'charge.dispute.created', dispute('dp_ops_1', 'pi_ops_paid', 30000));
    await deliverStripeEvent(t, 'charge.dispute.closed', dispute('dp_ops_1', 'pi_ops_paid', 30000, 'won'));
    await deliverStripeEvent(t, 'charge.refunded', refundedCharge('pi_ops_paid', 30000, 10000, ['re_ops_1']));
    const testTopUp = (await tenant.api('POST', '/balance/top-ups', { amount: 20 })).json();
    await other.api('POST', '/balance/top-ups', { amount: 15 });

    const op = await newOperator(t.ctx.pool);
    const c = consoleClient(t.app);
    await signIn(c, op.email, op.password);
    const page = await c.get(`/console/top-ups?organizationId=${tenant.organizationId}`);
    expect(page.statusCode, page.body).toBe(200);
    const topUpRows = [...page.body.matchAll(/<tr data-top-up="(topup_[a-z0-9]+)">/g)].map((m) => m[1]);
    expect(topUpRows).toHaveLength(3);
    expect(topUpRows).toContain(paid.topUp.id);
    expect(topUpRows).toContain(testTopUp.id);
    expect(page.body).toContain('Stripe did not open the payment page');
    const reversals = [...page.body.matchAll(/<tr data-reversal="(txn_[a-z0-9]+)">/g)];
    expect(reversals).toHaveLength(3);
    for (const ref of ['dp_ops_1', 're_ops_1', 'dispute won']) expect(page.body).toContain(ref);
    expect(page.body).not.toContain('Operator Other Co</a>');

    const failedOnly = await c.get(`/console/top-ups?status=failed&environment=live&show=top-ups`);
    const failedRows = [...failedOnly.body.matchAll(/<tr data-top-up="(topup_[a-z0-9]+)">/g)];
    expect(failedRows).toHaveLength(1);
    expect(failedOnly.body).not.toContain('data-reversal=');
    const refused = await c.get('/console/top-ups?status=lost&from=yesterday');
    expect(refused.statusCode).toBe(200);
    expect(refused.body).toContain('id="err-status"');
    expect(refused.body).toContain('id="err-from"');

    const cli = await runCli(t, ['balance', 'top-ups', '--org', tenant.organizationId, '--json']);
    expect(cli.code, cli.stderr).toBe(0);
    const listed = JSON.parse(cli.stdout);
    expect(listed.topUps.map((x: { id: string }) => x.id)).toEqual(topUpRows);
    expect(listed.topUps.find((x: { id: string }) => x.id === paid.topUp.id)).toMatchObject({
      status: 'succeeded',
      disputed: 0,
      refunded: 100,
      paymentIntent: 'pi_ops_paid',
    });
    expect(listed.reversals.map((r: { kind: string; reference: string }) => [r.kind, r.reference])).toEqual([
      ['refund', 're_ops_1'],
      ['dispute_won', 'dp_ops_1'],
      ['dispute', 'dp_ops_1'],
    ]);
    const text = await runCli(t, ['balance', 'top-ups', '--status', 'failed', '--environment', 'live']);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain('Top-ups (1):');
    expect(text.stdout).toContain('failed  (Stripe did not open the payment page');
    const bad = await runCli(t, ['balance', 'top-ups', '--status', 'lost']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('--status');

    const verify = await runCli(t, ['ledger', 'verify']);
    expect(verify.code, verify.stderr).toBe(0);
    expect(verify.stdout).toContain('Every balance equals the sum of its ledger entries.');
  });
});

describe('operators see every automatic recharge', () => {
  it('in the console and the CLI, beside the top-ups, with the same filters', async () => {
    const t = app();
    const { tenant, order } = await rechargingTenant(t, 'Recharge View Co', 'cus_opsview');
    const other = await rechargingTenant(t, 'Recharge Other Co', 'cus_opsother');

    // A recharge that succeeded (and whose top-up is later disputed), one that failed three times, one still queued.
    await order(); // 2 F: below 3 F, queued
    const [succeeded] = await rechargesOf(t, tenant);
    expect(await runAutoRecharge(t.ctx, succeeded!.id, quietLog)).toBe('credited');
    await order(); // 4 F
    await order(); // 3 F: not below
    await order(); // 2 F: below again
    const [failed] = await rechargesOf(t, tenant);
    expect(failed!.id).not.toBe(succeeded!.id);
    intentOutcomes.push('declined', 'declined', 'declined');
    expect(await runAutoRecharge(t.ctx, failed!.id, quietLog)).toBe('retry_queued');
    expect(await runAutoRecharge(t.ctx, failed!.id, quietLog)).toBe('retry_queued');
    expect(await runAutoRecharge(t.ctx, failed!.id, quietLog)).toBe('failed');
    await other.order();
    const [queued] = await rechargesOf(t, other.tenant);
    const [credited] = (await rechargesOf(t, tenant)).filter((r) => r.id === succeeded!.id);
    await deliverStripeEvent(
      t,
      'charge.dispute.created',
      dispute('dp_ops_rc', credited!.payment_intent!, 3 * FORMATION),
    );

    const op = await newOperator(t.ctx.pool);
    const c = consoleClient(t.app);
    await signIn(c, op.email, op.password);
    const page = await c.get(`/console/top-ups?organizationId=${tenant.organizationId}`);
    expect(page.statusCode, page.body).toBe(200);
    expect(page.body).toContain('<h2>Automatic recharges</h2>');
    expect(rechargeRows(page.body)).toEqual([failed!.id, succeeded!.id]);
    expect(page.body).toContain('Your card has insufficient funds.');
    expect(page.body).toContain(credited!.top_up_id!);
    expect(page.body).toContain(`data-top-up="${credited!.top_up_id}"`);
    expect(page.body).toContain('dp_ops_rc');
    expect(page.body).not.toContain(queued!.id);

    // Status takes a recharge's statuses too; each list keeps its own rows of that status.
    const onlyQueued = await c.get('/console/top-ups?status=queued');
    expect(onlyQueued.body).not.toContain('id="err-status"');
    expect(rechargeRows(onlyQueued.body)).toContain(queued!.id);
    expect(rechargeRows(onlyQueued.body)).not.toContain(failed!.id);
    expect(onlyQueued.body).not.toContain('data-top-up=');
    const failedOnly = await c.get(
      `/console/top-ups?organizationId=${tenant.organizationId}&status=failed&show=recharges`,
    );
    expect(rechargeRows(failedOnly.body)).toEqual([failed!.id]);
    expect(failedOnly.body).not.toContain('data-top-up=');
    expect(failedOnly.body).not.toContain('data-reversal=');
    const takenBack = await c.get(`/console/top-ups?organizationId=${tenant.organizationId}&takenBack=1`);
    expect(rechargeRows(takenBack.body)).toEqual([succeeded!.id]);
    const testOnly = await c.get(`/console/top-ups?organizationId=${tenant.organizationId}&environment=test`);
    expect(rechargeRows(testOnly.body)).toEqual([]);
    expect(testOnly.body).toContain('No automatic recharges match.');
    const topUpsOnly = await c.get(`/console/top-ups?organizationId=${tenant.organizationId}&show=top-ups`);
    expect(topUpsOnly.body).not.toContain('data-recharge=');

    const cli = await runCli(t, ['balance', 'top-ups', '--org', tenant.organizationId, '--json']);
    expect(cli.code, cli.stderr).toBe(0);
    const listed = JSON.parse(cli.stdout);
    expect(listed.recharges).toEqual([
      expect.objectContaining({
        id: failed!.id,
        organizationId: tenant.organizationId,
        organizationName: 'Recharge View Co',
        environment: 'live',
        amount: (3 * FORMATION) / 100,
        threshold: (3 * FORMATION) / 100,
        balanceAtTrigger: (2 * FORMATION) / 100,
        status: 'failed',
        attempts: 3,
        failureMessage: 'Your card has insufficient funds.',
        topUpId: null,
        settledAt: expect.any(String),
      }),
      expect.objectContaining({
        id: succeeded!.id,
        status: 'succeeded',
        attempts: 0,
        failureMessage: null,
        topUpId: credited!.top_up_id,
        paymentIntent: credited!.payment_intent,
        takenBack: (3 * FORMATION) / 100,
      }),
    ]);
    expect(listed.topUps.map((x: { id: string }) => x.id)).toContain(credited!.top_up_id);
    const text = await runCli(t, ['balance', 'top-ups', '--org', tenant.organizationId, '--status', 'failed']);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain('Automatic recharges (1):');
    expect(text.stdout).toContain(`${failed!.id}  ${tenant.organizationId} live`);
    expect(text.stdout).toContain('failed  3 failed attempts  (Your card has insufficient funds.)');
    const queuedCli = await runCli(t, [
      'balance',
      'top-ups',
      '--show',
      'recharges',
      '--status',
      'queued',
      '--org',
      other.tenant.organizationId,
      '--json',
    ]);
    expect(queuedCli.code, queuedCli.stderr).toBe(0);
    const queuedListed = JSON.parse(queuedCli.stdout);
    expect(queuedListed.recharges.map((r: { id: string; status: string }) => [r.id, r.status])).toEqual([
      [queued!.id, 'queued'],
    ]);
    expect(queuedListed.topUps).toEqual([]);
    expect(queuedListed.reversals).toEqual([]);

    const verify = await runCli(t, ['ledger', 'verify']);
    expect(verify.code, verify.stderr).toBe(0);
  });
});

import fs from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { creditBalance } from '../src/modules/billing/ledger.js';
import { sendAutoRechargeFailedEmailTask } from '../src/modules/funding/auto-recharge-email.task.js';
import { runAutoRecharge } from '../src/modules/funding/auto-recharge.service.js';
import { runAutoRechargeTask } from '../src/modules/funding/auto-recharge.task.js';
import { verifyLedger } from '../src/modules/ledger-audit/ledger-verify.js';
import { outboxDir } from '../src/modules/notifications/mailer.js';
import { taskDefinitions } from '../src/tasks.js';
import { createUser } from './factories.js';
import {
  balanceOf,
  deliverStripeEvent,
  dispute,
  eventsOf,
  fundingSuite,
  type IntentOutcome,
  ledgerOf,
  paymentIntentRoute,
} from './funding-helpers.js';
import type { TestApp, TestTenant } from './harness.js';
import { formationBody, stateFee, wholesale } from './orders-fixtures.js';
import { memberSession, setProofAge, switchTo } from './portal-helpers.js';
import type { StandInCall } from './stripe-stand-in.js';

/*
 * Auto-recharge of the live balance (FUND-30..FUND-39): a method saved through Checkout in setup mode, "below X, add
 * Y", one recharge queued by the debit that goes below X however debits race, charged off-session by the job through
 * the real `stripe` client against the stand-in, credited once whoever reports the payment, three failures stop it.
 */

const suite = fundingSuite();
const { stripe } = suite;
let t: TestApp;

/** What the stand-in answers to POST /v1/payment_intents, one outcome per call (then `succeeded`). */
const intentOutcomes: IntentOutcome[] = [];

beforeAll(() => {
  t = suite.t;
  stripe.routes.push((call: StandInCall, nextId) => {
    if (call.method === 'POST' && call.path === '/v1/customers')
      return { status: 200, json: { id: `cus_standin${nextId()}`, object: 'customer', metadata: {} } };
    if (call.method === 'POST' && call.path === '/v1/checkout/sessions' && call.form.mode === 'setup') {
      const id = `cs_test_setup${nextId()}`;
      return {
        status: 200,
        json: {
          id,
          object: 'checkout.session',
          mode: 'setup',
          status: 'open',
          customer: call.form.customer,
          url: `https://checkout.stripe.com/c/pay/${id}`,
          metadata: { organization_id: call.form['metadata[organization_id]'], purpose: 'auto_recharge' },
        },
      };
    }
    const setupIntent = /^\/v1\/setup_intents\/(seti_\w+)$/.exec(call.path);
    if (call.method === 'GET' && setupIntent)
      return {
        status: 200,
        json: {
          id: setupIntent[1],
          object: 'setup_intent',
          status: 'succeeded',
          payment_method: `pm_${setupIntent[1]!.slice(5)}`,
          usage: 'off_session',
        },
      };
    return undefined;
  });
  stripe.routes.push(paymentIntentRoute(intentOutcomes));
});

/** What one Delaware LLC formation with a supplied agent debits (cents), from the data files the service seeds from. */
const FORMATION = wholesale('formation_tier_1') + stateFee('DE', 'Formation', 'LLC');
const dollars = (cents: number) => Math.round(cents) / 100;
const intentCalls = () => stripe.callsTo('/v1/payment_intents');

const settingsOf = async (tenant: TestTenant) => {
  const res = await tenant.api('GET', '/balance/auto-recharge', undefined, { env: 'live' });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
};
const putSettings = (tenant: TestTenant, body: Record<string, unknown>, env: 'live' | 'test' = 'live') =>
  tenant.api('PUT', '/balance/auto-recharge', body, { env });

/** A Checkout Session as `checkout.session.completed` carries it for a completed setup-mode session. */
function setupSession(sessionId: string, organizationId: string, customer: string, setupIntent: string) {
  return {
    id: sessionId,
    object: 'checkout.session',
    mode: 'setup',
    status: 'complete',
    payment_status: 'no_payment_required',
    payment_intent: null,
    setup_intent: setupIntent,
    customer,
    client_reference_id: organizationId,
    metadata: { organization_id: organizationId, purpose: 'auto_recharge' },
    currency: 'usd',
    amount_total: null,
    livemode: false,
    created: Math.floor(Date.now() / 1000),
  };
}

/** A PaymentIntent as `payment_intent.*` events carry it (Stripe's documented fields) for a recharge. */
function rechargeIntent(
  id: string,
  rechargeId: string,
  amountCents: number,
  status: 'succeeded' | 'requires_payment_method',
) {
  return {
    id,
    object: 'payment_intent',
    amount: amountCents,
    amount_received: status === 'succeeded' ? amountCents : 0,
    currency: 'usd',
    status,
    customer: 'cus_x',
    payment_method: 'pm_x',
    payment_method_types: ['us_bank_account'],
    metadata: { auto_recharge_id: rechargeId },
    last_payment_error:
      status === 'succeeded'
        ? null
        : {
            type: 'invalid_request_error',
            code: 'payment_method_failure',
            message: 'The bank account could not be debited (R01: insufficient funds).',
          },
    livemode: false,
    created: Math.floor(Date.now() / 1000),
  };
}

/** Saves a method for the tenant through the setup page and Stripe's event; returns the setup page's call. */
async function saveMethod(tenant: TestTenant) {
  const opened = await tenant.api('POST', '/balance/auto-recharge/setup', {}, { env: 'live' });
  expect(opened.statusCode, opened.body).toBe(201);
  const sessionId = String(opened.json().checkoutUrl).split('/').at(-1)!;
  const created = stripe.callsTo('/v1/checkout/sessions').at(-1)!;
  const delivered = await deliverStripeEvent(
    t,
    'checkout.session.completed',
    setupSession(sessionId, tenant.organizationId, created.form.customer!, `seti_${sessionId.slice(8)}`),
  );
  expect(delivered.res.statusCode, delivered.res.body).toBe(200);
  return { created, sessionId, delivered };
}

/** A tenant with a saved method and "below `thresholdCents`, add `amountCents`", its live balance at `balanceCents`. */
async function rechargingTenant(name: string, thresholdCents: number, amountCents: number, balanceCents: number) {
  const tenant = await t.newTenant(name);
  expect(
    (await putSettings(tenant, { enabled: false, threshold: dollars(thresholdCents), amount: dollars(amountCents) }))
      .statusCode,
  ).toBe(200);
  await saveMethod(tenant);
  if (balanceCents > 0)
    await creditBalance(
      t.ctx.pool,
      { organizationId: tenant.organizationId, environment: 'live' },
      balanceCents,
      'wire',
      'cli',
    );
  const user = await createUser(tenant, 'live');
  const order = () => tenant.api('POST', '/orders', formationBody(user.id, 'DE'), { env: 'live' });
  return { tenant, order };
}

async function rechargesOf(tenant: TestTenant) {
  return (
    await t.ctx.pool.query(
      `SELECT id, status, attempts, amount_cents::int AS amount, payment_intent AS "paymentIntent", top_up_id AS "topUpId"
         FROM auto_recharges WHERE organization_id = $1 ORDER BY id`,
      [tenant.organizationId],
    )
  ).rows;
}

async function queuedJobs(task: string, key: string, value: string) {
  const { rows } = await t.ctx.pool.query(
    `SELECT j.payload, j.run_at FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks k ON k.id = j.task_id
      WHERE k.identifier = $1 AND j.payload ->> $2 = $3 ORDER BY j.id`,
    [task, key, value],
  );
  return rows as Array<{ payload: Record<string, string>; run_at: Date }>;
}

const quietLog = { info: () => undefined, warn: () => undefined, error: () => undefined };

describe('settings and the saved method', () => {
  it('saves a card or bank account through Checkout in setup mode, then validates and keeps the settings', async () => {
    const tenant = await t.newTenant('Recharge Settings Co');
    expect(await settingsOf(tenant)).toEqual({
      object: 'auto_recharge_settings',
      enabled: false,
      threshold: null,
      amount: null,
      paymentMethodSaved: false,
      disabledReason: null,
      lastRecharge: null,
    });
    // Without a saved method it cannot be turned on; the refusal names the field.
    const early = await putSettings(tenant, { enabled: true, threshold: 100, amount: 500 });
    expect(early.statusCode).toBe(400);
    expect(early.json().errors.map((e: { field: string }) => e.field)).toEqual(['enabled']);
    for (const [body, field] of [
      [{ enabled: false, threshold: 100, amount: 5 }, 'amount'],
      [{ enabled: false, threshold: 100, amount: 50_000.01 }, 'amount'],
      [{ enabled: false, threshold: 100, amount: 10.001 }, 'amount'],
      [{ enabled: false, threshold: 1.234, amount: 100 }, 'threshold'],
    ] as const) {
      const res = await putSettings(tenant, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().errors.map((e: { field: string }) => e.field)).toEqual([field]);
    }
    expect((await putSettings(tenant, { enabled: false, threshold: 100, amount: 500 }, 'test')).statusCode).toBe(403);
    expect((await putSettings(tenant, { enabled: false, threshold: 100, amount: 500 })).statusCode).toBe(200);

    // The setup page: setup mode, card and US bank account, the organization's own Stripe Customer; nothing charged.
    expect((await tenant.api('POST', '/balance/auto-recharge/setup', {})).statusCode).toBe(403);
    const { created, sessionId, delivered } = await saveMethod(tenant);
    expect(created.form).toMatchObject({
      mode: 'setup',
      currency: 'usd',
      'allowed_payment_method_types[0]': 'card',
      'allowed_payment_method_types[1]': 'us_bank_account',
      customer: expect.stringMatching(/^cus_/),
      'metadata[organization_id]': tenant.organizationId,
      success_url: 'http://localhost:3000/portal/balance/auto-recharge?autoRecharge=saved',
    });
    expect(stripe.callsTo('/v1/customers').at(-1)!.form['metadata[organization_id]']).toBe(tenant.organizationId);
    expect(intentCalls().filter((c) => c.form.customer === created.form.customer)).toEqual([]);
    // Saving turned it on (a threshold and an amount were set); Stripe's ids only are kept.
    expect(await settingsOf(tenant)).toMatchObject({
      enabled: true,
      threshold: 100,
      amount: 500,
      paymentMethodSaved: true,
    });
    const stored = await t.ctx.pool.query('SELECT * FROM auto_recharge_settings WHERE organization_id = $1', [
      tenant.organizationId,
    ]);
    expect(stored.rows[0]).toMatchObject({
      stripe_customer: created.form.customer,
      payment_method: `pm_${sessionId.slice(8)}`,
      setup_session_id: null,
    });
    // The same event again, and a completed setup session this service did not open, change nothing.
    await deliverStripeEvent(t, 'checkout.session.completed', {}, { id: delivered.id });
    const stranger = await deliverStripeEvent(
      t,
      'checkout.session.completed',
      setupSession('cs_test_setup_unknown', tenant.organizationId, 'cus_other', 'seti_unknown'),
    );
    expect(stranger.res.statusCode).toBe(200);
    const again = await t.ctx.pool.query(
      'SELECT payment_method FROM auto_recharge_settings WHERE organization_id = $1',
      [tenant.organizationId],
    );
    expect(again.rows[0].payment_method).toBe(`pm_${sessionId.slice(8)}`);
  });
});

describe('a debit that goes below the threshold', () => {
  it('queues exactly one recharge however many debits race, in the live environment only', async () => {
    const { tenant, order } = await rechargingTenant('Recharge Race Co', 5 * FORMATION, 100_000, 5.5 * FORMATION);
    const placed = await Promise.all([order(), order(), order(), order()]);
    expect(placed.map((r) => r.statusCode)).toEqual([201, 201, 201, 201]);
    const recharges = await rechargesOf(tenant);
    expect(recharges).toEqual([
      {
        id: expect.stringMatching(/^arc_/),
        status: 'queued',
        attempts: 0,
        amount: 100_000,
        paymentIntent: null,
        topUpId: null,
      },
    ]);
    expect(await queuedJobs('run_auto_recharge', 'autoRechargeId', recharges[0].id)).toHaveLength(1);
    expect(taskDefinitions.run_auto_recharge).toBe(runAutoRechargeTask);
    // Nothing was charged yet: the debits' transactions only queued the job.
    expect(intentCalls().filter((c) => c.form['metadata[auto_recharge_id]'] === recharges[0].id)).toEqual([]);
  });

  it('never reaches Stripe from the test environment: the test balance is not recharged', async () => {
    const { tenant } = await rechargingTenant('Recharge Test Mode Co', 5 * FORMATION, 100_000, 0);
    const testUser = await createUser(tenant, 'test');
    expect((await tenant.api('POST', '/balance/top-ups', { amount: dollars(5.5 * FORMATION) })).statusCode).toBe(201);
    const before = intentCalls().length;
    for (let i = 0; i < 2; i++)
      expect((await tenant.api('POST', '/orders', formationBody(testUser.id, 'DE'))).statusCode).toBe(201);
    expect(await rechargesOf(tenant)).toEqual([]);
    expect(intentCalls()).toHaveLength(before);
  });
});

describe('a recharge that succeeds', () => {
  it('charges the saved method off-session once and credits the balance once, whatever Stripe sends after', async () => {
    const { tenant, order } = await rechargingTenant('Recharge Card Co', 3 * FORMATION, 50_000, 3.5 * FORMATION);
    expect((await order()).statusCode).toBe(201);
    const [queued] = await rechargesOf(tenant);
    const balanceBefore = await balanceOf(tenant, 'live');

    expect(await runAutoRecharge(t.ctx, queued.id, quietLog)).toBe('credited');
    const [call] = intentCalls().filter((c) => c.form['metadata[auto_recharge_id]'] === queued.id);
    expect(call!.form).toMatchObject({
      amount: '50000',
      currency: 'usd',
      confirm: 'true',
      off_session: 'true',
      customer: expect.stringMatching(/^cus_/),
      payment_method: expect.stringMatching(/^pm_/),
    });
    expect(call!.idempotencyKey).toBe(`${queued.id}-attempt-1`);
    const [done] = await rechargesOf(tenant);
    expect(done).toMatchObject({
      status: 'succeeded',
      paymentIntent: expect.stringMatching(/^pi_standin/),
      topUpId: expect.stringMatching(/^topup_/),
    });
    expect(await balanceOf(tenant, 'live')).toBe(balanceBefore + 500);

    // Stripe's event for the same payment, delivered twice and racing, and the job run again: nothing more.
    const event = rechargeIntent(done.paymentIntent, queued.id, 50_000, 'succeeded');
    const first = await deliverStripeEvent(t, 'payment_intent.succeeded', event);
    await Promise.all([
      deliverStripeEvent(t, 'payment_intent.succeeded', event, { id: first.id }),
      deliverStripeEvent(t, 'payment_intent.succeeded', event),
    ]);
    expect(await runAutoRecharge(t.ctx, queued.id, quietLog)).toBe('skipped');
    expect(intentCalls().filter((c) => c.form['metadata[auto_recharge_id]'] === queued.id)).toHaveLength(1);
    expect(await balanceOf(tenant, 'live')).toBe(balanceBefore + 500);
    const credits = (await ledgerOf(t, tenant, 'live')).filter((e) => e.type === 'credit' && e.lineType === 'top_up');
    expect(credits).toEqual([
      expect.objectContaining({
        amount: 50_000,
        reference: done.topUpId,
        description: expect.stringContaining(done.paymentIntent),
      }),
    ]);
    // It is a top-up to the integrator: listed, and announced once.
    const topUps = (await tenant.api('GET', '/balance/top-ups', undefined, { env: 'live' })).json().data;
    expect(topUps).toEqual([expect.objectContaining({ id: done.topUpId, amount: 500, status: 'succeeded' })]);
    expect(await eventsOf(t, tenant, 'live', 'balance.top_up_succeeded')).toHaveLength(1);
    expect((await settingsOf(tenant)).lastRecharge).toMatchObject({ id: queued.id, status: 'succeeded', attempts: 0 });

    // The payment disputed: taken back like any top-up's, below the threshold again, yet the card is not charged again.
    const { res } = await deliverStripeEvent(
      t,
      'charge.dispute.created',
      dispute('dp_recharge_1', done.paymentIntent, 50_000),
    );
    expect(res.statusCode).toBe(200);
    expect(await balanceOf(tenant, 'live')).toBe(balanceBefore);
    expect((await ledgerOf(t, tenant, 'live')).at(-1)).toMatchObject({ type: 'clawback', reference: 'dp_recharge_1' });
    expect(await rechargesOf(tenant)).toHaveLength(1);
  });

  it('waits for a bank debit and credits it once when Stripe reports it, racing duplicates included', async () => {
    const { tenant, order } = await rechargingTenant('Recharge Bank Co', 3 * FORMATION, 20_000, 3.5 * FORMATION);
    expect((await order()).statusCode).toBe(201);
    const [queued] = await rechargesOf(tenant);
    const balanceBefore = await balanceOf(tenant, 'live');
    intentOutcomes.push('processing');
    expect(await runAutoRecharge(t.ctx, queued.id, quietLog)).toBe('processing');
    const [waiting] = await rechargesOf(tenant);
    expect(waiting).toMatchObject({ status: 'processing', topUpId: null });
    expect(await balanceOf(tenant, 'live')).toBe(balanceBefore);
    // Still in flight: another debit below the threshold queues nothing more.
    expect((await order()).statusCode).toBe(201);
    expect(await rechargesOf(tenant)).toHaveLength(1);

    const event = rechargeIntent(waiting.paymentIntent, queued.id, 20_000, 'succeeded');
    const sent = await Promise.all([
      deliverStripeEvent(t, 'payment_intent.succeeded', event),
      deliverStripeEvent(t, 'payment_intent.succeeded', event),
      deliverStripeEvent(t, 'payment_intent.succeeded', event),
    ]);
    expect(sent.map((s) => s.res.statusCode)).toEqual([200, 200, 200]);
    expect(await balanceOf(tenant, 'live')).toBe(balanceBefore - dollars(FORMATION) + 200);
    expect(await rechargesOf(tenant)).toEqual([expect.objectContaining({ status: 'succeeded' })]);
    const credits = (await ledgerOf(t, tenant, 'live')).filter((e) => e.lineType === 'top_up');
    expect(credits).toHaveLength(1);
    // A forged event changes nothing.
    const forged = await deliverStripeEvent(t, 'payment_intent.succeeded', event, { secret: 'whsec_forged_0000' });
    expect(forged.res.statusCode).toBe(400);
    expect((await ledgerOf(t, tenant, 'live')).filter((e) => e.lineType === 'top_up')).toHaveLength(1);
  });
});

describe('a recharge that keeps failing', () => {
  it('is retried with backoff, stops after three attempts, turns auto-recharge off, emails the owners, shows in the portal', async () => {
    const { tenant, order } = await rechargingTenant('Recharge Declined Co', 3 * FORMATION, 30_000, 3.5 * FORMATION);
    const owner = await memberSession(t, tenant.organizationId, 'owner');
    expect((await order()).statusCode).toBe(201);
    const [queued] = await rechargesOf(tenant);
    const balanceBefore = await balanceOf(tenant, 'live');

    // Attempt 1: a card declined at once; the next attempt is queued an hour later with a new key.
    intentOutcomes.push('declined');
    expect(await runAutoRecharge(t.ctx, queued.id, quietLog)).toBe('retry_queued');
    const jobs = await queuedJobs('run_auto_recharge', 'autoRechargeId', queued.id);
    expect(jobs).toHaveLength(2);
    expect(jobs[1]!.run_at.getTime() - Date.now()).toBeGreaterThan(50 * 60_000);
    expect((await rechargesOf(tenant))[0]).toMatchObject({ status: 'queued', attempts: 1 });
    // Attempt 2: a bank debit that Stripe later reports returned.
    intentOutcomes.push('processing');
    expect(await runAutoRecharge(t.ctx, queued.id, quietLog)).toBe('processing');
    const [processing] = await rechargesOf(tenant);
    const returned = rechargeIntent(processing.paymentIntent, queued.id, 30_000, 'requires_payment_method');
    const failedEvent = await deliverStripeEvent(t, 'payment_intent.payment_failed', returned);
    await deliverStripeEvent(t, 'payment_intent.payment_failed', returned, { id: failedEvent.id });
    expect((await rechargesOf(tenant))[0]).toMatchObject({ status: 'queued', attempts: 2 });
    // Attempt 3: declined again. It stops.
    intentOutcomes.push('declined');
    expect(await runAutoRecharge(t.ctx, queued.id, quietLog)).toBe('failed');
    expect(await runAutoRecharge(t.ctx, queued.id, quietLog)).toBe('skipped');
    const keys = intentCalls()
      .filter((c) => c.form['metadata[auto_recharge_id]'] === queued.id)
      .map((c) => c.idempotencyKey);
    expect(keys).toEqual([`${queued.id}-attempt-1`, `${queued.id}-attempt-2`, `${queued.id}-attempt-3`]);
    expect(await rechargesOf(tenant)).toEqual([
      expect.objectContaining({ status: 'failed', attempts: 3, topUpId: null }),
    ]);
    expect(await balanceOf(tenant, 'live')).toBe(balanceBefore);

    const settings = await settingsOf(tenant);
    expect(settings).toMatchObject({
      enabled: false,
      paymentMethodSaved: true,
      disabledReason: expect.stringContaining('failed 3 times'),
      lastRecharge: {
        id: queued.id,
        status: 'failed',
        attempts: 3,
        failureMessage: 'Your card has insufficient funds.',
      },
    });
    expect(await eventsOf(t, tenant, 'live', 'balance.auto_recharge_failed')).toEqual([
      { autoRechargeId: queued.id, amount: 300, attempts: 3, failureMessage: 'Your card has insufficient funds.' },
    ]);
    // Off: the next debit below the threshold queues nothing.
    expect((await order()).statusCode).toBe(201);
    expect(await rechargesOf(tenant)).toHaveLength(1);

    // The owners are emailed.
    const emails = await queuedJobs('send_auto_recharge_failed_email', 'autoRechargeId', queued.id);
    expect(emails.map((j) => j.payload.email)).toEqual([owner.email]);
    const dir = outboxDir(t.ctx.config);
    const before = fs.existsSync(dir) ? fs.readdirSync(dir).length : 0;
    await sendAutoRechargeFailedEmailTask.handler(t.ctx)(
      emails[0]!.payload as never,
      {
        logger: { info: () => undefined },
      } as never,
    );
    const sent = fs
      .readdirSync(dir)
      .slice(before)
      .map((f) => fs.readFileSync(`${dir}/${f}`, 'utf8'));
    expect(sent).toHaveLength(1);
    expect(sent[0]).toContain(`To: ${owner.email}`);
    expect(sent[0]).toContain('Subject: Automatic recharge failed');

    // The portal shows it to the owner, and turning it back on there is audited.
    await switchTo(owner.client, 'live');
    await setProofAge(t, owner.memberId, 0); // a live setting asks for a recent second factor (PORTAL-10)
    const page = await owner.client.get('/portal/balance/auto-recharge');
    expect(page.statusCode, page.body).toBe(200);
    expect(page.body).toContain('failed 3 times');
    expect(page.body).toContain('Your card has insufficient funds.');
    const saved = await owner.client.post('/portal/balance/auto-recharge', {
      _csrf: owner.client.csrf(),
      enabled: 'on',
      threshold: String(dollars(3 * FORMATION)),
      amount: '300',
    });
    expect(saved.statusCode, saved.body).toBe(303);
    expect(await settingsOf(tenant)).toMatchObject({ enabled: true, disabledReason: null });
    const audit = await t.ctx.pool.query(
      `SELECT action, actor_label, before, after FROM audit_log WHERE organization_id = $1 AND action = 'auto_recharge.updated'`,
      [tenant.organizationId],
    );
    expect(audit.rows).toEqual([
      {
        action: 'auto_recharge.updated',
        actor_label: owner.email,
        before: expect.objectContaining({ enabled: false, amountCents: 30_000 }),
        after: expect.objectContaining({ enabled: true, amountCents: 30_000, paymentMethodSaved: true }),
      },
    ]);
    expect(await verifyLedger(t.ctx)).toEqual([]);
  });

  it('retries an attempt whose outcome Stripe left unknown with the same key, and counts it only on the last try', async () => {
    const { tenant, order } = await rechargingTenant('Recharge Outage Co', 3 * FORMATION, 10_000, 3.5 * FORMATION);
    expect((await order()).statusCode).toBe(201);
    const [queued] = await rechargesOf(tenant);
    const keysOf = () =>
      intentCalls()
        .filter((c) => c.form['metadata[auto_recharge_id]'] === queued.id)
        .map((c) => c.idempotencyKey);
    // Stripe fails on its side (the client retries twice with the same key): the job fails and nothing is counted.
    intentOutcomes.push('unreachable', 'unreachable', 'unreachable');
    await expect(runAutoRecharge(t.ctx, queued.id, quietLog)).rejects.toThrow();
    expect((await rechargesOf(tenant))[0]).toMatchObject({ status: 'queued', attempts: 0 });
    // On the job's last try the unknown outcome is a failed attempt; the next attempt has a key of its own.
    intentOutcomes.push('unreachable', 'unreachable', 'unreachable');
    expect(await runAutoRecharge(t.ctx, queued.id, quietLog, true)).toBe('retry_queued');
    expect((await rechargesOf(tenant))[0]).toMatchObject({ status: 'queued', attempts: 1 });
    expect(await runAutoRecharge(t.ctx, queued.id, quietLog)).toBe('credited');
    expect(new Set(keysOf())).toEqual(new Set([`${queued.id}-attempt-1`, `${queued.id}-attempt-2`]));
    expect(keysOf().filter((k) => k === `${queued.id}-attempt-1`)).toHaveLength(6);
  });

  it('is refused to an admin in the portal: owners manage auto-recharge', async () => {
    const tenant = await t.newTenant('Recharge Admin Co');
    const admin = await memberSession(t, tenant.organizationId, 'admin');
    await switchTo(admin.client, 'live');
    expect((await admin.client.get('/portal/balance/auto-recharge')).statusCode).toBe(200);
    const res = await admin.client.post('/portal/balance/auto-recharge', {
      _csrf: admin.client.csrf(),
      threshold: '10',
      amount: '100',
    });
    expect(res.statusCode).toBe(403);
  });
});

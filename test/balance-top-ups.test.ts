import { beforeAll, describe, expect, it } from 'vitest';
import { createTopUp } from '../src/modules/funding/top-ups.service.js';
import { verifyLedger } from '../src/modules/ledger-audit/ledger-verify.js';
import type { TestApp } from './harness.js';
import {
  balanceOf,
  deliverStripeEvent,
  eventsOf,
  fundingSuite,
  ledgerOf,
  openLiveTopUp,
  payByCard,
  topUpSession,
} from './funding-helpers.js';

/*
 * Balance top-ups (FUND-1..FUND-9): live through Stripe Checkout (card and US bank account), credited only when Stripe's
 * signed event says the money is there, once whatever Stripe sends; test mode credits at once and never calls Stripe.
 */

const suite = fundingSuite();
const { stripe } = suite;
let t: TestApp;
beforeAll(() => {
  t = suite.t;
});

const sessionCalls = () => stripe.callsTo('/v1/checkout/sessions').length;

describe('live top-ups through Stripe Checkout', () => {
  it('opens a Checkout Session for card and US bank account, and credits nothing until Stripe says it is paid', async () => {
    const tenant = await t.newTenant('Top-up Card Co');
    const opened = await openLiveTopUp(tenant, stripe, 250.5);
    expect(opened.topUp).toMatchObject({
      id: expect.stringMatching(/^topup_/),
      object: 'top_up',
      amount: 250.5,
      status: 'pending',
      checkoutUrl: expect.stringMatching(/^https:\/\/checkout\.stripe\.com\/c\/pay\/cs_test_/),
    });
    expect(opened.created.form).toMatchObject({
      mode: 'payment',
      'allowed_payment_method_types[0]': 'card',
      'allowed_payment_method_types[1]': 'us_bank_account',
      'line_items[0][price_data][unit_amount]': '25050',
      'line_items[0][price_data][currency]': 'usd',
      'metadata[top_up_id]': opened.topUp.id,
      'payment_intent_data[metadata][top_up_id]': opened.topUp.id,
    });
    expect(opened.created.idempotencyKey).toBe(opened.topUp.id);
    expect(await balanceOf(tenant, 'live')).toBe(0);

    const { res } = await payByCard(t, opened, 'pi_card_paid_1');
    expect(res.statusCode, res.body).toBe(200);
    expect(await balanceOf(tenant, 'live')).toBe(250.5);
    expect(await ledgerOf(t, tenant, 'live')).toEqual([
      {
        type: 'credit',
        amount: 25050,
        balanceAfter: 25050,
        lineType: 'top_up',
        reference: opened.topUp.id,
        description: expect.stringContaining('pi_card_paid_1'),
      },
    ]);
    const got = await tenant.api('GET', `/balance/top-ups/${opened.topUp.id}`, undefined, { env: 'live' });
    expect(got.json()).toMatchObject({ id: opened.topUp.id, status: 'succeeded', checkoutUrl: null });
    const [credited] = await eventsOf(t, tenant, 'live', 'balance.top_up_succeeded');
    expect(credited).toMatchObject({ topUpId: opened.topUp.id, amount: 250.5, balance: 250.5 });
    const txns = (await tenant.api('GET', '/balance-transactions', undefined, { env: 'live' })).json().data;
    expect(txns[0]).toMatchObject({ type: 'credit', amount: 250.5, reference: opened.topUp.id });
  });

  it('credits once for racing duplicates of one event and for different events of the same payment', async () => {
    const tenant = await t.newTenant('Top-up Race Co');
    const opened = await openLiveTopUp(tenant, stripe, 100);
    const paid = topUpSession(opened.sessionId, opened.topUp.id, 10000, {
      payment_status: 'paid',
      payment_intent: 'pi_race_1',
    });
    const id = 'evt_1RaceSameId';
    const results = await Promise.all([
      ...Array.from({ length: 4 }, () => deliverStripeEvent(t, 'checkout.session.completed', paid, { id })),
      deliverStripeEvent(t, 'checkout.session.completed', paid),
      deliverStripeEvent(t, 'checkout.session.async_payment_succeeded', paid),
    ]);
    expect(results.map((r) => r.res.statusCode)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(await balanceOf(tenant, 'live')).toBe(100);
    expect((await ledgerOf(t, tenant, 'live')).filter((e) => e.type === 'credit')).toHaveLength(1);
    expect(await eventsOf(t, tenant, 'live', 'balance.top_up_succeeded')).toHaveLength(1);
    // Later redeliveries change nothing either.
    await deliverStripeEvent(t, 'checkout.session.completed', paid, { id });
    expect(await balanceOf(tenant, 'live')).toBe(100);
  });

  it('waits for a bank debit: completed unpaid is processing, async success credits, async failure credits nothing and tells the integrator', async () => {
    const tenant = await t.newTenant('Top-up ACH Co');
    const ok = await openLiveTopUp(tenant, stripe, 500);
    const bad = await openLiveTopUp(tenant, stripe, 700);
    for (const o of [ok, bad]) {
      const unpaid = topUpSession(o.sessionId, o.topUp.id, Math.round(o.topUp.amount * 100), {
        payment_status: 'unpaid',
        payment_intent: `pi_ach_${o === ok ? 'ok' : 'bad'}`,
      });
      expect((await deliverStripeEvent(t, 'checkout.session.completed', unpaid)).res.statusCode).toBe(200);
    }
    expect(await balanceOf(tenant, 'live')).toBe(0);
    const processing = await tenant.api('GET', `/balance/top-ups/${ok.topUp.id}`, undefined, { env: 'live' });
    expect(processing.json()).toMatchObject({ status: 'processing', checkoutUrl: null });

    await deliverStripeEvent(
      t,
      'checkout.session.async_payment_succeeded',
      topUpSession(ok.sessionId, ok.topUp.id, 50000, { payment_status: 'paid', payment_intent: 'pi_ach_ok' }),
    );
    await deliverStripeEvent(
      t,
      'checkout.session.async_payment_failed',
      topUpSession(bad.sessionId, bad.topUp.id, 70000, { payment_status: 'unpaid', payment_intent: 'pi_ach_bad' }),
    );
    expect(await balanceOf(tenant, 'live')).toBe(500);
    const failed = (await tenant.api('GET', `/balance/top-ups/${bad.topUp.id}`, undefined, { env: 'live' })).json();
    expect(failed).toMatchObject({ status: 'failed', failureMessage: expect.stringContaining('bank debit') });
    expect(await eventsOf(t, tenant, 'live', 'balance.top_up_failed')).toEqual([
      expect.objectContaining({ topUpId: bad.topUp.id, amount: 700 }),
    ]);
    // A late success for the failed top-up credits nothing.
    await deliverStripeEvent(
      t,
      'checkout.session.async_payment_succeeded',
      topUpSession(bad.sessionId, bad.topUp.id, 70000, { payment_status: 'paid', payment_intent: 'pi_ach_bad' }),
    );
    expect(await balanceOf(tenant, 'live')).toBe(500);

    const list = (await tenant.api('GET', '/balance/top-ups?limit=1', undefined, { env: 'live' })).json();
    expect(list).toMatchObject({ object: 'list', hasMore: true, data: [{ id: bad.topUp.id }] });
    const next = await tenant.api('GET', `/balance/top-ups?limit=1&startingAfter=${bad.topUp.id}`, undefined, {
      env: 'live',
    });
    expect(next.json()).toMatchObject({ hasMore: false, data: [{ id: ok.topUp.id }] });
  });

  it('leaves the ledger exact for an unknown session, a forged signature and an expired page', async () => {
    const tenant = await t.newTenant('Top-up Exact Co');
    const opened = await openLiveTopUp(tenant, stripe, 40);
    const unknown = await deliverStripeEvent(
      t,
      'checkout.session.completed',
      topUpSession('cs_test_not_ours', 'topup_not_ours', 4000, { payment_status: 'paid', payment_intent: 'pi_x' }),
    );
    expect(unknown.res.statusCode).toBe(200);
    expect(t.logs.some((l) => l.includes(unknown.id) && l.includes('did not open'))).toBe(true);

    const paid = topUpSession(opened.sessionId, opened.topUp.id, 4000, {
      payment_status: 'paid',
      payment_intent: 'pi_forged',
    });
    const forged = await deliverStripeEvent(t, 'checkout.session.completed', paid, { secret: 'whsec_not_the_one' });
    expect(forged.res.statusCode).toBe(400);
    expect(await balanceOf(tenant, 'live')).toBe(0);
    expect(await ledgerOf(t, tenant, 'live')).toEqual([]);

    await deliverStripeEvent(
      t,
      'checkout.session.expired',
      topUpSession(opened.sessionId, opened.topUp.id, 4000, {
        payment_status: 'unpaid',
        payment_intent: null,
        status: 'expired',
      }),
    );
    const got = (await tenant.api('GET', `/balance/top-ups/${opened.topUp.id}`, undefined, { env: 'live' })).json();
    expect(got).toMatchObject({ status: 'expired', checkoutUrl: null });
    await deliverStripeEvent(t, 'checkout.session.completed', paid);
    expect(await balanceOf(tenant, 'live')).toBe(0);
    expect(await verifyLedger(t.ctx)).toEqual([]);
  });

  it('refunds instead of crediting a payment of another amount than asked', async () => {
    const tenant = await t.newTenant('Top-up Mismatch Co');
    const opened = await openLiveTopUp(tenant, stripe, 60);
    await deliverStripeEvent(
      t,
      'checkout.session.completed',
      topUpSession(opened.sessionId, opened.topUp.id, 5000, { payment_status: 'paid', payment_intent: 'pi_short' }),
    );
    expect(await balanceOf(tenant, 'live')).toBe(0);
    const refund = stripe.callsTo('/v1/refunds').find((c) => c.form.payment_intent === 'pi_short');
    expect(refund).toMatchObject({ form: { amount: '5000' }, idempotencyKey: `${opened.topUp.id}:refund` });
    const got = (await tenant.api('GET', `/balance/top-ups/${opened.topUp.id}`, undefined, { env: 'live' })).json();
    expect(got).toMatchObject({ status: 'failed', failureMessage: expect.stringContaining('refunded') });
  });

  it('refuses amounts outside TOP_UP_MIN..TOP_UP_MAX with 400 naming amount, before any Stripe call', async () => {
    const tenant = await t.newTenant('Top-up Limits Co');
    const before = sessionCalls();
    for (const amount of [9.99, 50000.01, 12.345, 0, -5]) {
      for (const env of ['live', 'test'] as const) {
        const res = await tenant.api('POST', '/balance/top-ups', { amount }, { env });
        expect(res.statusCode, `${amount} ${env}: ${res.body}`).toBe(400);
        expect(res.json().errors.map((e: { field: string }) => e.field)).toEqual(['amount']);
      }
    }
    expect(sessionCalls()).toBe(before);
    const kept = await t.ctx.pool.query('SELECT count(*)::int AS n FROM top_ups WHERE organization_id = $1', [
      tenant.organizationId,
    ]);
    expect(kept.rows[0].n).toBe(0);
    // The bounds themselves are accepted.
    expect((await tenant.api('POST', '/balance/top-ups', { amount: 10 }, { env: 'live' })).statusCode).toBe(201);
    expect((await tenant.api('POST', '/balance/top-ups', { amount: 50000 }, { env: 'live' })).statusCode).toBe(201);
  });

  it('answers a retry with the same Idempotency-Key with the same top-up and opens one page', async () => {
    const tenant = await t.newTenant('Top-up Idempotent Co');
    const before = sessionCalls();
    const headers = { 'idempotency-key': 'top-up-0001' };
    const first = await tenant.api('POST', '/balance/top-ups', { amount: 75 }, { env: 'live', headers });
    const again = await tenant.api('POST', '/balance/top-ups', { amount: 75 }, { env: 'live', headers });
    expect(first.statusCode).toBe(201);
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json().id).toBe(first.json().id);
    expect(sessionCalls()).toBe(before + 1);
  });

  it('says 503 when Stripe does not open the page: the top-up is kept failed, nothing credited, its key free again', async () => {
    const tenant = await t.newTenant('Top-up Stripe Down Co');
    const headers = { 'idempotency-key': 'top-up-down-1' };
    stripe.failSessions = 'Stripe is not answering';
    const res = await tenant
      .api('POST', '/balance/top-ups', { amount: 20 }, { env: 'live', headers })
      .finally(() => (stripe.failSessions = null));
    expect(res.statusCode).toBe(503);
    expect(res.json().message).toContain('nothing was charged');
    const listed = (await tenant.api('GET', '/balance/top-ups', undefined, { env: 'live' })).json().data;
    expect(listed).toEqual([
      expect.objectContaining({
        status: 'failed',
        checkoutUrl: null,
        failureMessage: expect.stringContaining('Stripe'),
      }),
    ]);
    expect(await ledgerOf(t, tenant, 'live')).toEqual([]);
    // The retry with the same key opens a page.
    const retry = await tenant.api('POST', '/balance/top-ups', { amount: 20 }, { env: 'live', headers });
    expect(retry.statusCode, retry.body).toBe(201);
    expect(retry.json()).toMatchObject({ status: 'pending', checkoutUrl: expect.stringContaining('cs_test_') });
    expect(retry.json().id).not.toBe(listed[0].id);
  });

  it('holds no transaction while Stripe opens the page: the top-up is already written pending', async () => {
    const tenant = await t.newTenant('Top-up No Tx Co');
    const seen: Array<{ status: string; openTransactions: number }> = [];
    stripe.beforeSession = async (call) => {
      const id = call.form['metadata[top_up_id]'];
      const row = await t.ctx.pool.query('SELECT status FROM top_ups WHERE id = $1', [id]);
      const open = await t.ctx.pool.query(
        `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND state LIKE 'idle in transaction%' AND pid <> pg_backend_pid()`,
      );
      seen.push({ status: row.rows[0]?.status, openTransactions: open.rows[0].n });
    };
    const res = await tenant
      .api('POST', '/balance/top-ups', { amount: 45 }, { env: 'live' })
      .finally(() => (stripe.beforeSession = null));
    expect(res.statusCode, res.body).toBe(201);
    expect(seen).toEqual([{ status: 'pending', openTransactions: 0 }]);
  });

  it('answers the same top-up to two racing requests with one Idempotency-Key, never a 500', async () => {
    const tenant = await t.newTenant('Top-up Twin Co');
    const live = { organizationId: tenant.organizationId, environment: 'live' as const };
    // Both requests reach Stripe before either answers: the second finds the top-up the first wrote.
    let arrived = 0;
    let release!: () => void;
    const bothThere = new Promise<void>((r) => (release = r));
    stripe.beforeSession = async () => {
      if (++arrived === 2) release();
      await Promise.race([bothThere, new Promise((r) => setTimeout(r, 2000))]);
    };
    const twins = await Promise.all([
      createTopUp(t.ctx, live, 80, 'twin-key-1'),
      createTopUp(t.ctx, live, 80, 'twin-key-1'),
    ]).finally(() => (stripe.beforeSession = null));
    expect(twins[0].id).toBe(twins[1].id);
    expect(twins[0].checkout_url).toBe(twins[1].checkout_url);
    expect(twins[0].checkout_url).toMatch(/cs_test_/);
    const rows = await t.ctx.pool.query('SELECT count(*)::int AS n FROM top_ups WHERE organization_id = $1', [
      tenant.organizationId,
    ]);
    expect(rows.rows[0].n).toBe(1);

    // Through the API the idempotency layer answers the twin 409 while the first runs, or replays it: never a 500.
    const headers = { 'idempotency-key': 'twin-key-2' };
    const answers = await Promise.all([
      tenant.api('POST', '/balance/top-ups', { amount: 80 }, { env: 'live', headers }),
      tenant.api('POST', '/balance/top-ups', { amount: 80 }, { env: 'live', headers }),
    ]);
    for (const a of answers) expect([201, 409], a.body).toContain(a.statusCode);
    const ids = new Set(answers.filter((a) => a.statusCode === 201).map((a) => a.json().id));
    expect(ids.size).toBe(1);
    expect(await balanceOf(tenant, 'live')).toBe(0);
  });

  it("answers 404 for another tenant's top-up", async () => {
    const owner = await t.newTenant('Top-up Owner Co');
    const other = await t.newTenant('Top-up Other Co');
    const opened = await openLiveTopUp(owner, stripe, 30);
    const res = await other.api('GET', `/balance/top-ups/${opened.topUp.id}`, undefined, { env: 'live' });
    expect(res.statusCode).toBe(404);
    expect((await owner.api('GET', `/balance/top-ups/${opened.topUp.id}`)).statusCode).toBe(404);
  });
});

describe('test-mode top-ups', () => {
  it('credit the test balance at once, never call Stripe and never change live', async () => {
    const tenant = await t.newTenant('Top-up Test Mode Co');
    const before = sessionCalls();
    const calls = stripe.calls.length;
    const res = await tenant.api('POST', '/balance/top-ups', { amount: 1234.56 });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({
      id: expect.stringMatching(/^topup_/),
      status: 'succeeded',
      checkoutUrl: null,
      amount: 1234.56,
    });
    expect(await balanceOf(tenant, 'test')).toBe(1234.56);
    expect(await balanceOf(tenant, 'live')).toBe(0);
    expect(sessionCalls()).toBe(before);
    expect(stripe.calls.length).toBe(calls);
    expect(await ledgerOf(t, tenant, 'test')).toEqual([
      expect.objectContaining({ type: 'credit', amount: 123456, reference: res.json().id }),
    ]);
    expect(await ledgerOf(t, tenant, 'live')).toEqual([]);
    const listed = (await tenant.api('GET', '/balance/top-ups')).json();
    expect(listed.data.map((x: { id: string }) => x.id)).toEqual([res.json().id]);
    expect((await tenant.api('GET', '/balance/top-ups', undefined, { env: 'live' })).json().data).toEqual([]);

    // The same Idempotency-Key never credits twice.
    const headers = { 'idempotency-key': 'test-top-up-1' };
    await tenant.api('POST', '/balance/top-ups', { amount: 10 }, { headers });
    await tenant.api('POST', '/balance/top-ups', { amount: 10 }, { headers });
    expect(await balanceOf(tenant, 'test')).toBe(1244.56);
    expect(await verifyLedger(t.ctx)).toEqual([]);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refundCardPaymentTask } from '../src/modules/payments/refund-card-payment.task.js';
import { createCompany } from './factories.js';
import { createTestApp, type TestApp } from './harness.js';
import { consoleClient, newOperator, signIn as consoleSignIn } from './console-helpers.js';
import {
  card,
  checkoutTokenOf,
  csrfOf,
  dollarsText,
  einForm,
  setDashboardBilling,
  signIn,
  wyomingCompanyForm,
} from './dashboard-helpers.js';
import { listPrice, stateFee, wholesale } from './orders-fixtures.js';
import { postSignedEvent, StripeStandIn } from './stripe-stand-in.js';

/*
 * Live card payments through Stripe Checkout (PAY-1..PAY-7), offline: the Stripe API is a local stand-in reached
 * through STRIPE_API_BASE_URL, and webhook events are signed with the stripe package's test header helper.
 */

const WEBHOOK_SECRET = 'whsec_standin_0123456789abcdef';
const stripe = new StripeStandIn();
let t: TestApp;
beforeAll(async () => {
  const base = await stripe.start();
  t = await createTestApp({
    // As a deployed service connects (SEC-3): its pools log in as fcs_app, with fcs_service's rights only.
    DATABASE_SERVICE_ROLE: 'fcs_service',
    DASHBOARD_BASE_URL: 'http://localhost:3000/dashboard',
    STRIPE_SECRET_KEY: 'sk_test_standin0123456789',
    STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
    STRIPE_API_BASE_URL: base,
  });
});
afterAll(async () => {
  await t.close();
  await stripe.stop();
});

let eventSeq = 0;
async function deliver(
  type: string,
  object: Record<string, unknown>,
  o: { id?: string; secret?: string; timestamp?: number; livemode?: boolean } = {},
) {
  const id = o.id ?? `evt_test_${++eventSeq}_${Date.now()}`;
  const res = await postSignedEvent(
    t.app,
    o.secret ?? WEBHOOK_SECRET,
    { id, type, object, livemode: o.livemode },
    o.timestamp,
  );
  return { res, id };
}

/** A live customer-billed tenant, a company and a signed-in live dashboard user. */
async function liveCustomer(name: string) {
  const tenant = await t.newTenant(name);
  await setDashboardBilling(tenant, 'customer');
  const { user, company } = await createCompany(tenant, 'live');
  const s = await signIn(t, tenant, { userId: user.id }, 'live');
  return { tenant, user, company, s };
}
type LiveCustomer = Awaited<ReturnType<typeof liveCustomer>>;

/** Posts the EIN checkout form of `page` (filing state DE), as the customer's browser does on submit. */
const postEinForm = (c: LiveCustomer, path: string, page: { body: string }) =>
  c.s.post(path, { _csrf: csrfOf(page.body), _checkout: checkoutTokenOf(page.body), filingState: 'DE', ...einForm });

/** Submits the EIN checkout; returns the redirect, the checkout id and the session the stand-in opened. */
async function startEinCheckout(c: LiveCustomer) {
  const path = `/companies/${c.company.id}/checkout/ein`;
  const page = await c.s.get(path);
  expect(page.statusCode, page.body).toBe(200);
  const res = await postEinForm(c, path, page);
  expect(res.statusCode, res.body).toBe(303);
  const location = String(res.headers.location);
  const created = stripe.callsTo('/v1/checkout/sessions').at(-1)!;
  const sessionId = location.split('/').at(-1)!;
  return { page, location, created, sessionId, checkoutId: created.form['metadata[checkout_id]'], path };
}

/** A Checkout Session as Stripe's events carry it: in US dollars, as the service opens it, unless `fields` say else. */
function session(id: string, fields: Record<string, unknown>) {
  return { id, object: 'checkout.session', mode: 'payment', currency: 'usd', ...fields };
}

const ordersOf = async (companyId: string) =>
  (await t.ctx.pool.query('SELECT * FROM orders WHERE company_id = $1', [companyId])).rows;
// Expected amounts come from the data files the service seeds from (orders-fixtures), not from its own rows. These
// organizations set no retail prices, so the list price (defaultAmount) is what the customer pays.

describe('live checkout through Stripe Checkout', () => {
  it('sends the customer to a Checkout Session with retail lines, the organization, the e-mail and our checkout id; places on payment', async () => {
    const c = await liveCustomer('Stripe Success Co');
    const retail = listPrice('ein');
    const started = await startEinCheckout(c);
    expect(started.page.body).toContain('Continue to payment');
    expect(started.page.body).not.toContain('name="card.number"');
    expect(started.location).toMatch(/^https:\/\/checkout\.stripe\.com\/c\/pay\/cs_test_/);
    expect(started.created.form).toMatchObject({
      mode: 'payment',
      'line_items[0][price_data][unit_amount]': String(retail),
      'line_items[0][price_data][currency]': 'usd',
      'line_items[0][quantity]': '1',
      customer_email: c.user.email,
      'metadata[checkout_id]': expect.stringMatching(/^chk_/),
    });
    expect(started.created.form['custom_text[submit][message]']).toContain('Stripe Success Co');
    expect(started.created.authorization).toBe('Bearer sk_test_standin0123456789');
    expect(await ordersOf(c.company.id)).toHaveLength(0);
    // The waiting order request is sealed: the responsible party's tax id is not readable in the database.
    const waiting = (
      await t.ctx.pool.query('SELECT intent::text AS intent FROM card_checkouts WHERE id = $1', [started.checkoutId])
    ).rows[0].intent;
    expect(waiting).toContain('sealed');
    expect(waiting).not.toContain('6789');

    // Back from Stripe before the event arrived: payment pending.
    const early = await c.s.get(`/checkout/return/${started.checkoutId}`);
    expect(early.statusCode).toBe(200);
    expect(early.body).toContain('Payment pending');

    const { res } = await deliver(
      'checkout.session.completed',
      session(started.sessionId, { payment_status: 'paid', payment_intent: 'pi_success_1', amount_total: retail }),
    );
    expect(res.statusCode, res.body).toBe(200);
    const orders = await ordersOf(c.company.id);
    expect(orders).toHaveLength(1);
    expect(orders[0]).toMatchObject({
      order_type: 'ein',
      billing: 'checkout',
      environment: 'live',
      filing_status: 'submitted',
      retail_cents: retail,
      margin_cents: retail - wholesale('ein'),
    });
    const payments = (
      await t.ctx.pool.query('SELECT *, payment_status(id) AS status FROM payments WHERE group_id = $1', [
        orders[0].group_id,
      ])
    ).rows;
    expect(payments).toMatchObject([
      { status: 'succeeded', provider: 'stripe', provider_reference: 'pi_success_1', amount_cents: retail },
    ]);
    expect(
      (await t.ctx.pool.query('SELECT intent FROM card_checkouts WHERE id = $1', [started.checkoutId])).rows[0].intent,
    ).toBeNull();

    const back = await c.s.get(`/checkout/return/${started.checkoutId}`);
    expect(back.statusCode).toBe(303);
    const landing = await c.s.get(String(back.headers.location).replace(c.s.base, ''));
    expect(landing.body).toContain('your order is placed');
  });

  it('forms a new company: every service and each state fee is its own line item, and the company exists once paid', async () => {
    const c = await liveCustomer('Stripe Formation Co');
    const page = await c.s.get('/checkout/formation?tier=3&entityType=LLC&filingState=WY');
    expect(page.statusCode).toBe(200);
    const res = await c.s.post('/checkout/formation', {
      _csrf: csrfOf(page.body),
      _checkout: checkoutTokenOf(page.body),
      tier: '3',
      entityType: 'LLC',
      filingState: 'WY',
      ...wyomingCompanyForm('Stripe Prairie LLC'),
      dbaName: 'Stripe Prairie Outfitters',
      ...einForm,
    });
    expect(res.statusCode, res.body.slice(0, 2000)).toBe(303);
    const created = stripe.callsTo('/v1/checkout/sessions').at(-1)!;
    const lines: Array<{ name: string; cents: number }> = [];
    for (let i = 0; created.form[`line_items[${i}][price_data][unit_amount]`]; i++) {
      lines.push({
        name: created.form[`line_items[${i}][price_data][product_data][name]`],
        cents: Number(created.form[`line_items[${i}][price_data][unit_amount]`]),
      });
    }
    const fee = stateFee('WY', 'Formation', 'LLC');
    expect(lines.filter((l) => l.cents === fee).length).toBeGreaterThanOrEqual(1);
    expect(lines.length).toBeGreaterThanOrEqual(3);
    expect(lines.every((l) => l.cents > 0 && l.name)).toBe(true);
    const total = lines.reduce((sum, l) => sum + l.cents, 0);
    expect(page.body).toContain(`Continue to payment: ${dollarsText(total)}`);

    const sessionId = String(res.headers.location).split('/').at(-1)!;
    await deliver(
      'checkout.session.completed',
      session(sessionId, { payment_status: 'paid', payment_intent: 'pi_formation', amount_total: total }),
    );
    const back = await c.s.get(`/checkout/return/${created.form['metadata[checkout_id]']}`);
    expect(back.statusCode).toBe(303);
    const companyId = /companies\/(comp_[a-z0-9]+)/.exec(String(back.headers.location))![1];
    const { rows } = await t.ctx.pool.query(
      'SELECT order_type, billing FROM orders WHERE company_id = $1 ORDER BY order_type',
      [companyId],
    );
    expect(rows.map((r) => r.order_type)).toEqual(['dba', 'ein', 'formation', 'registered_agent']);
    expect(
      (await t.ctx.pool.query('SELECT legal_name FROM companies WHERE id = $1', [companyId])).rows[0].legal_name,
    ).toBe('Stripe Prairie LLC');
    // Retail, wholesale (retail - margin) and the state fee recorded per order as the sandbox path does; the orders add
    // up to the payment.
    const tier3 = { retail: listPrice('formation_tier_3'), wholesale: wholesale('formation_tier_3') };
    const placed = (
      await t.ctx.pool.query(
        `SELECT order_type, amount_cents::int AS amount, retail_cents::int AS retail, margin_cents::int AS margin FROM orders WHERE company_id = $1`,
        [companyId],
      )
    ).rows;
    expect(placed.find((o) => o.order_type === 'formation')).toMatchObject({
      retail: tier3.retail,
      margin: tier3.retail - tier3.wholesale,
      amount: tier3.retail + fee,
    });
    expect(placed.reduce((sum, o) => sum + o.amount, 0)).toBe(total);
    expect(
      (
        await t.ctx.pool.query(
          `SELECT amount_cents::int AS a, payment_status(id) AS status FROM payments WHERE provider_reference = 'pi_formation'`,
        )
      ).rows,
    ).toEqual([{ a: total, status: 'succeeded' }]);

    // Cancelling the formation order refunds its retail plus its state fee (not the other orders of the payment).
    const formation = (
      await t.ctx.pool.query(`SELECT id, retail_cents FROM orders WHERE company_id = $1 AND order_type = 'formation'`, [
        companyId,
      ])
    ).rows[0];
    expect(
      (await t.admin('POST', `/orders/${formation.id}/transitions`, { filingStatus: 'cancelled' })).statusCode,
    ).toBe(200);
    const refund = (
      await t.ctx.pool.query('SELECT id, amount_cents FROM card_refunds WHERE order_id = $1', [formation.id])
    ).rows[0];
    expect(refund.amount_cents).toBe(formation.retail_cents + fee);
    await refundCardPaymentTask.handler(t.ctx)({ refundId: refund.id }, { logger: { info: () => undefined } } as never);
    expect(stripe.callsTo('/v1/refunds').at(-1)!.form).toMatchObject({
      payment_intent: 'pi_formation',
      amount: String(formation.retail_cents + fee),
    });
  });

  it('a submit of the same form again goes back to the open payment page instead of opening a second one', async () => {
    const c = await liveCustomer('Stripe Resubmit Co');
    const started = await startEinCheckout(c);
    const calls = stripe.callsTo('/v1/checkout/sessions').length;
    const again = await postEinForm(c, started.path, started.page);
    expect(again.statusCode).toBe(303);
    expect(again.headers.location).toBe(started.location);
    expect(stripe.callsTo('/v1/checkout/sessions')).toHaveLength(calls);
  });

  it('a card Stripe declines orders nothing: back through the cancel address the customer reads so, the form reopens the same page, its expiry settles it', async () => {
    const c = await liveCustomer('Stripe Decline Co');
    const started = await startEinCheckout(c);
    const resubmit = () => postEinForm(c, started.path, started.page);
    // Stripe's own page shows the decline and opens no Checkout Session event for it; a PaymentIntent event may come.
    const failed = await deliver('payment_intent.payment_failed', {
      id: 'pi_declined_1',
      object: 'payment_intent',
      status: 'requires_payment_method',
      last_payment_error: { code: 'card_declined' },
    });
    expect(failed.res.statusCode).toBe(200);
    const back = await c.s.get(`/checkout/return/${started.checkoutId}?cancelled=1`);
    expect(back.statusCode).toBe(200);
    expect(back.body).toContain('Payment not completed');
    expect(back.body).toContain('nothing was ordered');
    expect(await ordersOf(c.company.id)).toHaveLength(0);
    expect(
      (await t.ctx.pool.query('SELECT count(*)::int AS n FROM payments WHERE user_id = $1', [c.user.id])).rows[0].n,
    ).toBe(0);

    // The same form goes back to the page that is still open, to try another card.
    const again = await resubmit();
    expect(again.statusCode).toBe(303);
    expect(again.headers.location).toBe(started.location);

    await deliver(
      'checkout.session.expired',
      session(started.sessionId, { status: 'expired', payment_status: 'unpaid' }),
    );
    expect((await c.s.get(`/checkout/return/${started.checkoutId}?cancelled=1`)).body).toContain(
      'Payment page expired',
    );
    // Once it expired, the same form opens a new page.
    const fresh = await resubmit();
    expect(fresh.statusCode).toBe(303);
    expect(fresh.headers.location).not.toBe(started.location);
    expect(await ordersOf(c.company.id)).toHaveLength(0);
  });

  it('says card payment is temporarily unavailable when Stripe does not open the page, and keeps nothing', async () => {
    const c = await liveCustomer('Stripe Down Co');
    const path = `/companies/${c.company.id}/checkout/ein`;
    const page = await c.s.get(path);
    const submit = () => postEinForm(c, path, page);
    stripe.failSessions = 'Stripe is not answering';
    const res = await submit().finally(() => (stripe.failSessions = null));
    expect(res.statusCode).toBe(409);
    expect(res.body).toContain('Card payment is temporarily unavailable');
    expect(res.body).toContain('You have not been charged');
    expect(
      (
        await t.ctx.pool.query('SELECT count(*)::int AS n FROM card_checkouts WHERE organization_id = $1', [
          c.tenant.organizationId,
        ])
      ).rows[0].n,
    ).toBe(0);
    // The same form works once Stripe answers again.
    const retry = await submit();
    expect(retry.statusCode, retry.body.slice(0, 2000)).toBe(303);
    expect(String(retry.headers.location)).toMatch(/^https:\/\/checkout\.stripe\.com\//);
  });

  it('opens no payment page when the price changed after the page was shown, and shows the new total', async () => {
    const c = await liveCustomer('Stripe Price Move Co');
    const path = `/companies/${c.company.id}/checkout/ein`;
    const page = await c.s.get(path);
    const shown = /name="_total" value="(\d+)"/.exec(page.body)![1];
    const moved = await c.tenant.api('PUT', '/organization/prices/ein', { retailAmount: 123 }, { env: 'live' });
    expect(moved.statusCode, moved.body).toBe(200);
    const sessionsBefore = stripe.callsTo('/v1/checkout/sessions').length;
    const res = await c.s.post(path, {
      _csrf: csrfOf(page.body),
      _checkout: checkoutTokenOf(page.body),
      _total: shown,
      filingState: 'DE',
      ...einForm,
    });
    expect(res.statusCode).toBe(409);
    expect(res.body).toContain('The price changed');
    expect(res.body).toContain('$123.00');
    expect(stripe.callsTo('/v1/checkout/sessions')).toHaveLength(sessionsBefore);
    expect(
      (await t.ctx.pool.query('SELECT 1 FROM card_checkouts WHERE organization_id = $1', [c.tenant.organizationId]))
        .rowCount,
    ).toBe(0);
  });

  it('places nothing twice for a replayed event or a second completion event of the same session', async () => {
    const c = await liveCustomer('Stripe Duplicate Co');
    const retail = listPrice('ein');
    const started = await startEinCheckout(c);
    const object = session(started.sessionId, {
      payment_status: 'paid',
      payment_intent: 'pi_dup_1',
      amount_total: retail,
    });
    const first = await deliver('checkout.session.completed', object);
    expect(first.res.statusCode).toBe(200);
    expect((await deliver('checkout.session.completed', object, { id: first.id })).res.statusCode).toBe(200);
    expect((await deliver('checkout.session.completed', object)).res.statusCode).toBe(200);
    expect((await deliver('checkout.session.async_payment_succeeded', object)).res.statusCode).toBe(200);
    const orders = await ordersOf(c.company.id);
    expect(orders).toHaveLength(1);
    expect(
      (await t.ctx.pool.query(`SELECT count(*)::int AS n FROM payments WHERE provider_reference = 'pi_dup_1'`)).rows[0]
        .n,
    ).toBe(1);
    expect(
      (
        await t.ctx.pool.query(
          `SELECT count(*)::int AS n FROM events WHERE type = 'filing.status_changed' AND data->>'orderId' = $1`,
          [orders[0].id],
        )
      ).rows[0].n,
    ).toBe(1);
  });

  it('places once, without a failed delivery, when events of one session race each other', async () => {
    const c = await liveCustomer('Stripe Race Co');
    const retail = listPrice('ein');
    const started = await startEinCheckout(c);
    const object = session(started.sessionId, {
      payment_status: 'paid',
      payment_intent: 'pi_race',
      amount_total: retail,
    });
    const raced = await Promise.all([
      deliver('checkout.session.completed', object),
      deliver('checkout.session.completed', object),
      deliver('checkout.session.async_payment_succeeded', object),
    ]);
    expect(raced.map((r) => r.res.statusCode)).toEqual([200, 200, 200]);
    expect(await ordersOf(c.company.id)).toHaveLength(1);
  });

  it('waits for a delayed payment method: completed unpaid, then async success places the order', async () => {
    const c = await liveCustomer('Stripe Async Co');
    const retail = listPrice('ein');
    const started = await startEinCheckout(c);
    await deliver(
      'checkout.session.completed',
      session(started.sessionId, { payment_status: 'unpaid', payment_intent: 'pi_async_ok', amount_total: retail }),
    );
    expect(await ordersOf(c.company.id)).toHaveLength(0);
    expect((await c.s.get(`/checkout/return/${started.checkoutId}`)).body).toContain('Payment pending');
    const { res } = await deliver(
      'checkout.session.async_payment_succeeded',
      session(started.sessionId, { payment_status: 'paid', payment_intent: 'pi_async_ok', amount_total: retail }),
    );
    expect(res.statusCode).toBe(200);
    expect(await ordersOf(c.company.id)).toHaveLength(1);
    expect((await c.s.get(`/checkout/return/${started.checkoutId}`)).statusCode).toBe(303);
  });

  it('places nothing when a delayed payment fails, and tells the returning customer', async () => {
    const c = await liveCustomer('Stripe Async Fail Co');
    const retail = listPrice('ein');
    const started = await startEinCheckout(c);
    await deliver(
      'checkout.session.completed',
      session(started.sessionId, { payment_status: 'unpaid', payment_intent: 'pi_async_fail', amount_total: retail }),
    );
    const { res } = await deliver(
      'checkout.session.async_payment_failed',
      session(started.sessionId, { payment_status: 'unpaid', payment_intent: 'pi_async_fail', amount_total: retail }),
    );
    expect(res.statusCode).toBe(200);
    expect(await ordersOf(c.company.id)).toHaveLength(0);
    const back = await c.s.get(`/checkout/return/${started.checkoutId}`);
    expect(back.body).toContain('Payment failed');
    expect(back.body).toContain('did not go through');
    // A late success event for the failed session changes nothing.
    await deliver(
      'checkout.session.async_payment_succeeded',
      session(started.sessionId, { payment_status: 'paid', payment_intent: 'pi_async_fail', amount_total: retail }),
    );
    expect(await ordersOf(c.company.id)).toHaveLength(0);
  });

  it('an expired payment page places nothing and forgets the order request', async () => {
    const c = await liveCustomer('Stripe Expired Co');
    const started = await startEinCheckout(c);
    expect(
      (
        await deliver(
          'checkout.session.expired',
          session(started.sessionId, { status: 'expired', payment_status: 'unpaid' }),
        )
      ).res.statusCode,
    ).toBe(200);
    expect(await ordersOf(c.company.id)).toHaveLength(0);
    const row = (
      await t.ctx.pool.query('SELECT status, intent FROM card_checkouts WHERE id = $1', [started.checkoutId])
    ).rows[0];
    expect(row).toEqual({ status: 'expired', intent: null });
    expect((await c.s.get(`/checkout/return/${started.checkoutId}`)).body).toContain('Payment page expired');
  });

  it('refuses a forged or stale signature with 400 and writes nothing; ignores an event of the other mode', async () => {
    const c = await liveCustomer('Stripe Forged Co');
    const retail = listPrice('ein');
    const started = await startEinCheckout(c);
    const object = session(started.sessionId, {
      payment_status: 'paid',
      payment_intent: 'pi_forged',
      amount_total: retail,
    });
    const forged = await deliver('checkout.session.completed', object, { secret: 'whsec_not_the_right_one' });
    expect(forged.res.statusCode).toBe(400);
    expect(forged.res.json()).toMatchObject({ code: 'bad_request' });
    const stale = await deliver('checkout.session.completed', object, {
      timestamp: Math.floor(Date.now() / 1000) - 600,
    });
    expect(stale.res.statusCode).toBe(400);
    // Signed, but of the other mode than the configured key (a live event to a test-key setup): ignored.
    expect((await deliver('checkout.session.completed', object, { livemode: true })).res.statusCode).toBe(200);
    const unsigned = await t.app.inject({
      method: 'POST',
      url: '/stripe/webhook',
      headers: { 'content-type': 'application/json' },
      payload: '{}',
    });
    expect(unsigned.statusCode).toBe(400);
    expect(await ordersOf(c.company.id)).toHaveLength(0);
    expect(
      (
        await t.ctx.pool.query('SELECT count(*)::int AS n FROM payment_provider_events WHERE id = ANY($1)', [
          [forged.id, stale.id],
        ])
      ).rows[0].n,
    ).toBe(0);
  });

  it('acknowledges and logs an event for a session it did not open', async () => {
    const { res, id } = await deliver(
      'checkout.session.completed',
      session('cs_test_not_ours', { payment_status: 'paid', payment_intent: 'pi_x', amount_total: 100 }),
    );
    expect(res.statusCode).toBe(200);
    expect(t.logs.some((l) => l.includes(id) && l.includes('did not open'))).toBe(true);
  });

  it('refunds retail + state fee of a cancelled card-paid order through Stripe, retrying a refused refund', async () => {
    const c = await liveCustomer('Stripe Refund Co');
    const retail = listPrice('ein');
    const started = await startEinCheckout(c);
    await deliver(
      'checkout.session.completed',
      session(started.sessionId, { payment_status: 'paid', payment_intent: 'pi_refund_1', amount_total: retail }),
    );
    const [order] = await ordersOf(c.company.id);

    const cancel = await t.admin('POST', `/orders/${order.id}/transitions`, { filingStatus: 'cancelled' });
    expect(cancel.statusCode, cancel.body).toBe(200);
    const refund = (await t.ctx.pool.query('SELECT * FROM card_refunds WHERE order_id = $1', [order.id])).rows[0];
    expect(refund).toMatchObject({ status: 'pending', provider: 'stripe', amount_cents: order.amount_cents });
    const job = (
      await t.ctx.pool.query(
        `SELECT j.payload, j.max_attempts FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks k ON k.id = j.task_id WHERE k.identifier = 'refund_card_payment' AND j.payload->>'refundId' = $1`,
        [refund.id],
      )
    ).rows;
    expect(job).toMatchObject([{ max_attempts: 20 }]);
    // The cancellation is announced as for any order (filing.status_changed), with the order showing cancelled.
    const changed = (
      await t.ctx.pool.query(
        `SELECT data->>'filingStatus' AS status FROM events WHERE type = 'filing.status_changed' AND data->>'orderId' = $1 ORDER BY created_at`,
        [order.id],
      )
    ).rows;
    expect(changed.map((e) => e.status)).toEqual(['submitted', 'cancelled']);
    expect((await c.s.get(`/companies/${c.company.id}`)).body).toContain('Cancelled');

    const run = () =>
      refundCardPaymentTask.handler(t.ctx)({ refundId: refund.id }, { logger: { info: () => undefined } } as never);
    stripe.failRefunds = 'This PaymentIntent cannot be refunded right now';
    await expect(run()).rejects.toThrow(/cannot be refunded/);
    const failed = (
      await t.ctx.pool.query('SELECT status, attempts, last_error FROM card_refunds WHERE id = $1', [refund.id])
    ).rows[0];
    expect(failed).toMatchObject({
      status: 'pending',
      attempts: 1,
      last_error: expect.stringContaining('cannot be refunded'),
    });

    // The console shows the refund on the order and lists it among the refunds Stripe has not accepted.
    const operator = await newOperator(t.ctx.pool);
    const console_ = consoleClient(t.app);
    await consoleSignIn(console_, operator.email, operator.password);
    expect((await console_.get('/console/queue')).body).toContain(order.id);
    const orderPage = await console_.get(`/console/orders/${order.id}`);
    expect(orderPage.body).toContain('not accepted yet');
    expect(orderPage.body).toContain('cannot be refunded right now');

    stripe.failRefunds = null;
    await run();
    await run();
    const calls = stripe.callsTo('/v1/refunds').filter((x) => x.form.payment_intent === 'pi_refund_1');
    expect(calls.length).toBe(2);
    expect(calls.every((x) => x.idempotencyKey === refund.id && x.form.amount === String(order.amount_cents))).toBe(
      true,
    );
    const done = (
      await t.ctx.pool.query('SELECT status, provider_reference, refunded_at FROM card_refunds WHERE id = $1', [
        refund.id,
      ])
    ).rows[0];
    expect(done).toMatchObject({ status: 'succeeded', provider_reference: expect.stringMatching(/^re_/) });
    expect((await console_.get(`/console/orders/${order.id}`)).body).toContain(done.provider_reference);
    expect((await console_.get('/console/queue')).body).not.toContain('cannot be refunded right now');
  });

  it('refunds a payment whose order can no longer be placed, and records why', async () => {
    const c = await liveCustomer('Stripe Mismatch Co');
    const retail = listPrice('ein');
    const started = await startEinCheckout(c);
    const { res } = await deliver(
      'checkout.session.completed',
      session(started.sessionId, { payment_status: 'paid', payment_intent: 'pi_mismatch', amount_total: retail - 100 }),
    );
    expect(res.statusCode).toBe(200);
    expect(await ordersOf(c.company.id)).toHaveLength(0);
    const refund = stripe.callsTo('/v1/refunds').find((x) => x.form.payment_intent === 'pi_mismatch');
    expect(refund?.form.amount).toBe(String(retail - 100));
    expect(
      (
        await t.ctx.pool.query(
          `SELECT payment_status(id) AS status FROM payments WHERE provider_reference = 'pi_mismatch'`,
        )
      ).rows,
    ).toEqual([{ status: 'refunded' }]);
    const back = await c.s.get(`/checkout/return/${started.checkoutId}`);
    expect(back.body).toContain('Payment failed');
    expect(back.body).toContain('refunded');
  });

  it('refunds a payment made in another currency than US dollars, even for the amount asked, and places nothing', async () => {
    const c = await liveCustomer('Stripe Currency Co');
    const retail = listPrice('ein');
    const started = await startEinCheckout(c);
    expect(started.created.form['line_items[0][price_data][currency]']).toBe('usd');
    const { res } = await deliver(
      'checkout.session.completed',
      session(started.sessionId, {
        payment_status: 'paid',
        payment_intent: 'pi_currency',
        amount_total: retail,
        currency: 'eur',
      }),
    );
    expect(res.statusCode).toBe(200);
    expect(await ordersOf(c.company.id)).toHaveLength(0);
    const refund = stripe.callsTo('/v1/refunds').find((x) => x.form.payment_intent === 'pi_currency');
    expect(refund?.form.amount).toBe(String(retail));
    expect(
      (
        await t.ctx.pool.query(
          `SELECT payment_status(id) AS status FROM payments WHERE provider_reference = 'pi_currency'`,
        )
      ).rows,
    ).toEqual([{ status: 'refunded' }]);
    const back = await c.s.get(`/checkout/return/${started.checkoutId}`);
    expect(back.body).toContain('Payment failed');
    expect(back.body).toContain('eur');
  });

  it('shows a checkout only to the user who started it', async () => {
    const c = await liveCustomer('Stripe Owner Co');
    const started = await startEinCheckout(c);
    const other = await liveCustomer('Stripe Stranger Co');
    expect((await other.s.get(`/checkout/return/${started.checkoutId}`)).statusCode).toBe(404);
  });

  it('refuses an oversized webhook body before checking anything else', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/stripe/webhook',
      headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=00' },
      payload: 'x'.repeat(300 * 1024),
    });
    expect(res.statusCode).toBe(413);
  });
});

describe('test mode with Stripe configured', () => {
  it('keeps the sandbox cards and never calls Stripe', async () => {
    const tenant = await t.newTenant('Sandbox Still Co');
    await setDashboardBilling(tenant, 'customer');
    const { user, company } = await createCompany(tenant);
    const s = await signIn(t, tenant, { userId: user.id });
    const before = stripe.calls.length;
    const path = `/companies/${company.id}/checkout/certificate-of-good-standing`;
    const page = await s.get(path);
    expect(page.body).toContain('name="card.number"');
    const declined = await s.post(path, {
      _csrf: csrfOf(page.body),
      _checkout: checkoutTokenOf(page.body),
      filingState: 'DE',
      ...card('4000 0000 0000 0002'),
    });
    expect(declined.statusCode).toBe(402);
    expect(declined.body).toContain('Your card was declined');
    const page2 = await s.get(path);
    const paid = await s.post(path, {
      _csrf: csrfOf(page2.body),
      _checkout: checkoutTokenOf(page2.body),
      filingState: 'DE',
      ...card('4242 4242 4242 4242'),
    });
    expect(paid.statusCode).toBe(303);
    const [order] = await ordersOf(company.id);
    expect(order).toMatchObject({ environment: 'test', billing: 'checkout' });

    // Cancelling it refunds through the sandbox, still without calling Stripe.
    expect((await t.admin('POST', `/orders/${order.id}/transitions`, { filingStatus: 'cancelled' })).statusCode).toBe(
      200,
    );
    const refund = (
      await t.ctx.pool.query('SELECT id, provider, amount_cents FROM card_refunds WHERE order_id = $1', [order.id])
    ).rows[0];
    expect(refund).toMatchObject({ provider: 'sandbox', amount_cents: order.amount_cents });
    await refundCardPaymentTask.handler(t.ctx)({ refundId: refund.id }, { logger: { info: () => undefined } } as never);
    expect(
      (await t.ctx.pool.query('SELECT status, provider_reference FROM card_refunds WHERE id = $1', [refund.id]))
        .rows[0],
    ).toMatchObject({ status: 'succeeded', provider_reference: expect.stringMatching(/^sbx_re_/) });
    expect(stripe.calls.length).toBe(before);
  });
});

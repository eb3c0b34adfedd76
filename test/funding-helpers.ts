import { afterAll, beforeAll, expect } from 'vitest';
import { createTestApp, type TestApp, type TestTenant } from './harness.js';
import { postSignedEvent, type StandInCall, StripeStandIn } from './stripe-stand-in.js';

/*
 * Balance top-ups through Stripe (FUND-*), offline: the Stripe API is the local stand-in (test/stripe-stand-in.ts)
 * reached through STRIPE_API_BASE_URL, and events are signed in Stripe's format with the stripe package's helper.
 * Event objects carry the fields Stripe documents for Checkout Sessions, Disputes and Charges.
 */

/** The webhook signing secret the funding tests configure. */
const FUNDING_WEBHOOK_SECRET = 'whsec_funding_standin_0123456789';

/**
 * Registers the file's hooks: a Stripe stand-in and a test app whose live environment takes top-ups through it
 * (`suite.t` is set once the first beforeAll has run), both closed after the file.
 */
export function fundingSuite(extraEnv: Record<string, string> = {}) {
  const suite = { stripe: new StripeStandIn(), t: undefined as unknown as TestApp };
  beforeAll(async () => {
    suite.t = await createTestApp({ ...fundingEnv(await suite.stripe.start()), ...extraEnv });
  });
  afterAll(async () => {
    await suite.t?.close();
    await suite.stripe.stop();
  });
  return suite;
}

/** The configuration of a test app whose live environment takes top-ups through the stand-in at `base`. */
function fundingEnv(base: string): Record<string, string> {
  return {
    // As a deployed service connects (SEC-3): its pools log in as fcs_app, with fcs_service's rights only.
    DATABASE_SERVICE_ROLE: 'fcs_service',
    STRIPE_SECRET_KEY: 'sk_test_fundingstandin0123',
    STRIPE_WEBHOOK_SECRET: FUNDING_WEBHOOK_SECRET,
    STRIPE_API_BASE_URL: base,
    TOP_UP_MIN: '10',
    TOP_UP_MAX: '50000',
  };
}

let eventSeq = 0;

/** POSTs one signed Stripe event to /stripe/webhook as Stripe does. `id` repeats an event; `secret` forges one. */
export async function deliverStripeEvent(
  t: TestApp,
  type: string,
  object: Record<string, unknown>,
  o: { id?: string; secret?: string } = {},
) {
  const id = o.id ?? `evt_1Funding${++eventSeq}${Date.now()}`;
  const res = await postSignedEvent(t.app, o.secret ?? FUNDING_WEBHOOK_SECRET, { id, type, object });
  return { res, id };
}

/** A Checkout Session as `checkout.session.*` events carry it (Stripe's documented fields), for a top-up session. */
export function topUpSession(
  sessionId: string,
  topUpId: string,
  amountCents: number,
  fields: { payment_status: 'paid' | 'unpaid' | 'no_payment_required'; payment_intent: string | null; status?: string },
  more: Record<string, unknown> = {},
) {
  return {
    id: sessionId,
    object: 'checkout.session',
    mode: 'payment',
    status: fields.status ?? 'complete',
    payment_status: fields.payment_status,
    payment_intent: fields.payment_intent,
    amount_subtotal: amountCents,
    amount_total: amountCents,
    currency: 'usd',
    client_reference_id: topUpId,
    metadata: { top_up_id: topUpId },
    payment_method_types: ['card', 'us_bank_account'],
    customer: null,
    customer_details: { email: 'billing@example.com', name: null },
    expires_at: Math.floor(Date.now() / 1000) + 3600,
    success_url: `https://portal.example.com/?topUp=${topUpId}`,
    cancel_url: 'https://portal.example.com/?cancelled=1',
    url: null,
    livemode: false,
    created: Math.floor(Date.now() / 1000),
    ...more,
  };
}

/**
 * A Dispute as `charge.dispute.*` events carry it (Stripe's documented fields). `status`: needs_response when opened,
 * won or lost when `charge.dispute.closed` is sent.
 */
export function dispute(
  id: string,
  paymentIntent: string,
  amountCents: number,
  status: 'needs_response' | 'under_review' | 'won' | 'lost' = 'needs_response',
) {
  const created = Math.floor(Date.now() / 1000);
  return {
    id,
    object: 'dispute',
    amount: amountCents,
    balance_transactions: [],
    charge: `ch_${paymentIntent.slice(3)}`,
    created,
    currency: 'usd',
    evidence: { customer_name: null, product_description: null, uncategorized_text: null },
    evidence_details: { due_by: created + 7 * 86400, has_evidence: false, past_due: false, submission_count: 0 },
    is_charge_refundable: false,
    livemode: false,
    metadata: {},
    payment_intent: paymentIntent,
    reason: 'fraudulent',
    status,
  };
}

/** A PaymentIntent as `payment_intent.*` events carry it (Stripe's documented fields), with the top-up in metadata. */
export function paymentIntent(id: string, amountCents: number, topUpId: string, status = 'succeeded') {
  return {
    id,
    object: 'payment_intent',
    amount: amountCents,
    amount_received: status === 'succeeded' ? amountCents : 0,
    capture_method: 'automatic',
    client_secret: `${id}_secret_standin`,
    confirmation_method: 'automatic',
    created: Math.floor(Date.now() / 1000),
    currency: 'usd',
    customer: null,
    description: `Balance top-up ${topUpId}`,
    last_payment_error: null,
    latest_charge: `ch_${id.slice(3)}`,
    livemode: false,
    metadata: { top_up_id: topUpId },
    payment_method: `pm_${id.slice(3)}`,
    payment_method_types: ['card', 'us_bank_account'],
    status,
  };
}

/**
 * A Charge as `charge.refunded` carries it (Stripe's documented fields): `amountRefunded` is the running total of its
 * refunds, `refunds` the refund ids newest first. `refunds` null leaves the list out, as Stripe's API versions since
 * 2022-11-15 do unless it is expanded (events never expand it).
 */
export function refundedCharge(
  paymentIntent: string,
  amountCents: number,
  amountRefunded: number,
  refunds: string[] | null,
) {
  const charge = `ch_${paymentIntent.slice(3)}`;
  return {
    id: charge,
    object: 'charge',
    amount: amountCents,
    amount_captured: amountCents,
    amount_refunded: amountRefunded,
    captured: true,
    paid: true,
    refunded: amountRefunded === amountCents,
    status: 'succeeded',
    currency: 'usd',
    payment_intent: paymentIntent,
    balance_transaction: `txn_${paymentIntent.slice(3)}`,
    disputed: false,
    failure_code: null,
    failure_message: null,
    metadata: {},
    livemode: false,
    created: Math.floor(Date.now() / 1000),
    ...(refunds && {
      refunds: {
        object: 'list',
        data: refunds.map((id) => ({
          id,
          object: 'refund',
          charge,
          payment_intent: paymentIntent,
          status: 'succeeded',
        })),
        has_more: false,
        url: `/v1/charges/${charge}/refunds`,
      },
    }),
  };
}

/** The tenant's balance in `env`, in dollars, as GET /organization answers it. */
export async function balanceOf(tenant: TestTenant, env: 'live' | 'test'): Promise<number> {
  const res = await tenant.api('GET', '/organization', undefined, { env });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().balance;
}

/** Opens a live top-up of `amount` dollars; returns it with the session the stand-in opened for it. */
export async function openLiveTopUp(tenant: TestTenant, stripe: StripeStandIn, amount: number) {
  const res = await tenant.api('POST', '/balance/top-ups', { amount }, { env: 'live' });
  expect(res.statusCode, res.body).toBe(201);
  const topUp = res.json();
  const sessionId = String(topUp.checkoutUrl).split('/').at(-1)!;
  const created = stripe.callsTo('/v1/checkout/sessions').at(-1)!;
  return { topUp, sessionId, created };
}

/** Pays a live top-up by card: `checkout.session.completed` with payment_status paid. */
export async function payByCard(t: TestApp, opened: Awaited<ReturnType<typeof openLiveTopUp>>, paymentIntent: string) {
  const cents = Math.round(opened.topUp.amount * 100);
  return deliverStripeEvent(
    t,
    'checkout.session.completed',
    topUpSession(opened.sessionId, opened.topUp.id, cents, { payment_status: 'paid', payment_intent: paymentIntent }),
  );
}

/** The tenant's ledger entries in `env`, oldest first. */
export async function ledgerOf(t: TestApp, tenant: TestTenant, env: 'live' | 'test') {
  return (
    await t.ctx.pool.query(
      `SELECT type, amount_cents::int AS amount, balance_after_cents::int AS "balanceAfter", line_type AS "lineType",
              reference, description FROM ledger_entries WHERE organization_id = $1 AND environment = $2 ORDER BY id`,
      [tenant.organizationId, env],
    )
  ).rows;
}

/** The tenant's events of `type` in `env`, oldest first (their data). */
export async function eventsOf(t: TestApp, tenant: TestTenant, env: 'live' | 'test', type: string) {
  return (
    await t.ctx.pool.query(
      'SELECT data FROM events WHERE organization_id = $1 AND environment = $2 AND type = $3 ORDER BY id',
      [tenant.organizationId, env, type],
    )
  ).rows.map((r) => r.data);
}

/** What the stand-in answers to one auto-recharge attempt (POST /v1/payment_intents). */
export type IntentOutcome = 'succeeded' | 'processing' | 'declined' | 'unreachable';

/**
 * A stand-in route for POST /v1/payment_intents, the off-session payment of an auto-recharge: each call takes the next
 * of `outcomes` (then `succeeded`). `declined` answers Stripe's 402 card_error with the PaymentIntent; `unreachable`
 * a 500 api_error. Other calls pass on.
 */
export function paymentIntentRoute(outcomes: IntentOutcome[]) {
  return (call: StandInCall, nextId: () => number) => {
    if (call.method !== 'POST' || call.path !== '/v1/payment_intents') return undefined;
    const outcome = outcomes.shift() ?? 'succeeded';
    if (outcome === 'unreachable')
      return { status: 500, json: { error: { type: 'api_error', message: 'An unknown error occurred' } } };
    const id = `pi_standin${nextId()}`;
    const intent = {
      id,
      object: 'payment_intent',
      amount: Number(call.form.amount),
      amount_received: outcome === 'succeeded' ? Number(call.form.amount) : 0,
      currency: call.form.currency,
      customer: call.form.customer,
      payment_method: call.form.payment_method,
      metadata: { auto_recharge_id: call.form['metadata[auto_recharge_id]'] },
      status: outcome === 'declined' ? 'requires_payment_method' : outcome,
      livemode: false,
    };
    if (outcome !== 'declined') return { status: 200, json: intent };
    return {
      status: 402,
      json: {
        error: {
          type: 'card_error',
          code: 'card_declined',
          decline_code: 'insufficient_funds',
          message: 'Your card has insufficient funds.',
          payment_intent: intent,
        },
      },
    };
  };
}

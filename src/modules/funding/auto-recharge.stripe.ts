import Stripe from 'stripe';
import { PAYMENT_CURRENCY } from '../payments/payment-provider.js';
import type { StripePaymentProvider } from '../payments/stripe-provider.js';

/*
 * The Stripe calls of auto-recharge (FUND-31, FUND-35), through the configured provider's `stripe` client. None is
 * ever made while a database transaction or connection is held: callers read, call, then write.
 */

/** The payment methods auto-recharge saves and charges: a card, or a US bank account (ACH debit). */
const RECHARGE_METHOD_TYPES: Array<'card' | 'us_bank_account'> = ['card', 'us_bank_account'];

/** Hosted setup pages expire after this many seconds (Stripe accepts 30 minutes to 24 hours). */
const SETUP_LIFETIME_SECONDS = 60 * 60;

/**
 * Creates the organization's Stripe Customer, which the saved method is attached to (FUND-31). The organization id is
 * the idempotency key's root and is in the metadata. @returns the Customer id (cus_…). @throws when Stripe refuses.
 */
export async function createRechargeCustomer(
  provider: StripePaymentProvider,
  o: { organizationId: string; name: string },
): Promise<string> {
  const customer = await provider.client.customers.create(
    { name: o.name.slice(0, 256), metadata: { organization_id: o.organizationId } },
    { idempotencyKey: `${o.organizationId}:auto-recharge-customer` },
  );
  return customer.id;
}

/**
 * Opens a Checkout Session in setup mode (FUND-31): the owner saves a card or a US bank account for later off-session
 * payments of `customer`; nothing is charged. Our organization id is the client reference and in the metadata.
 * @returns the session id and its page. @throws when Stripe refuses or cannot be reached.
 */
export async function createSetupSession(
  provider: StripePaymentProvider,
  s: { organizationId: string; customer: string; successUrl: string; cancelUrl: string; idempotencyKey: string },
): Promise<{ sessionId: string; url: string }> {
  const session = await provider.client.checkout.sessions.create(
    {
      mode: 'setup',
      currency: PAYMENT_CURRENCY,
      allowed_payment_method_types: RECHARGE_METHOD_TYPES,
      customer: s.customer,
      client_reference_id: s.organizationId,
      metadata: { organization_id: s.organizationId, purpose: 'auto_recharge' },
      setup_intent_data: {
        metadata: { organization_id: s.organizationId, purpose: 'auto_recharge' },
        description: 'Payment method for automatic balance recharges',
      },
      success_url: s.successUrl,
      cancel_url: s.cancelUrl,
      expires_at: Math.floor(Date.now() / 1000) + SETUP_LIFETIME_SECONDS,
    },
    { idempotencyKey: s.idempotencyKey },
  );
  if (!session.url) throw new Error(`Stripe returned Checkout Session ${session.id} without a url`);
  return { sessionId: session.id, url: session.url };
}

/**
 * The PaymentMethod a SetupIntent saved, or null when it has not succeeded (FUND-31). @throws when Stripe cannot be
 * reached.
 */
export async function savedMethodOf(provider: StripePaymentProvider, setupIntent: string): Promise<string | null> {
  const intent = await provider.client.setupIntents.retrieve(setupIntent);
  if (intent.status !== 'succeeded') return null;
  const method = intent.payment_method;
  return typeof method === 'string' ? method : (method?.id ?? null);
}

/** What Stripe answered to one recharge attempt (FUND-35). */
export type RechargeCharge =
  | { outcome: 'succeeded'; paymentIntent: string; amountCents: number; currency: string }
  | { outcome: 'processing'; paymentIntent: string }
  | { outcome: 'declined'; paymentIntent: string | null; message: string };

/**
 * Charges a saved method off-session (FUND-35): a PaymentIntent of `amountCents` US cents for `customer` with
 * `paymentMethod`, confirmed at once (confirm, off_session), our recharge id in its metadata, `idempotencyKey` (one
 * per attempt) so a retried request never charges twice. A refusal Stripe decided (a declined card, a method that
 * needs the customer, a detached method) is `declined` with Stripe's message.
 * @throws when Stripe could not be reached or failed on its side: the outcome is unknown and the same key must be
 *   used again.
 */
export async function chargeSavedMethod(
  provider: StripePaymentProvider,
  r: { rechargeId: string; customer: string; paymentMethod: string; amountCents: number; idempotencyKey: string },
): Promise<RechargeCharge> {
  let intent: Stripe.PaymentIntent;
  try {
    intent = await provider.client.paymentIntents.create(
      {
        amount: r.amountCents,
        currency: PAYMENT_CURRENCY,
        customer: r.customer,
        payment_method: r.paymentMethod,
        allowed_payment_method_types: RECHARGE_METHOD_TYPES,
        confirm: true,
        off_session: true,
        description: `Automatic balance recharge ${r.rechargeId}`,
        metadata: { auto_recharge_id: r.rechargeId },
      },
      { idempotencyKey: r.idempotencyKey },
    );
  } catch (err) {
    if (err instanceof Stripe.errors.StripeCardError || err instanceof Stripe.errors.StripeInvalidRequestError) {
      const raw = err.raw as { payment_intent?: { id?: string } } | undefined;
      return { outcome: 'declined', paymentIntent: raw?.payment_intent?.id ?? null, message: err.message };
    }
    throw err;
  }
  if (intent.status === 'succeeded')
    return {
      outcome: 'succeeded',
      paymentIntent: intent.id,
      amountCents: intent.amount_received || intent.amount,
      currency: intent.currency,
    };
  if (intent.status === 'processing') return { outcome: 'processing', paymentIntent: intent.id };
  return {
    outcome: 'declined',
    paymentIntent: intent.id,
    message:
      intent.last_payment_error?.message ??
      (intent.status === 'requires_action'
        ? 'The bank asked for the cardholder to confirm the payment, which an automatic recharge cannot do.'
        : `Stripe left the payment ${intent.status}.`),
  };
}

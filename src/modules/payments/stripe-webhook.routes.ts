import type { FastifyPluginAsync } from 'fastify';
import type Stripe from 'stripe';
import type { AppContext } from '../../context.js';
import { withTransaction } from '../../lib/db.js';
import { settleHostedCheckout, type HostedPaymentReport } from '../dashboard/hosted-checkout.js';
import { linkEvent, recordProviderEvent } from './card-checkouts.repo.js';
import { stripeProvider } from './payments.service.js';

/** Largest Stripe event accepted, in bytes (Checkout Session events are a few KB). */
export const STRIPE_WEBHOOK_BODY_LIMIT = 256 * 1024;

const HANDLED = new Set([
  'checkout.session.completed', 'checkout.session.async_payment_succeeded', 'checkout.session.async_payment_failed', 'checkout.session.expired',
]);

/**
 * `POST /stripe/webhook` (PAY-3, PAY-4): Stripe's events about Checkout Sessions. Unauthenticated, so bounded in
 * cost: the body is read raw up to STRIPE_WEBHOOK_BODY_LIMIT, and the Stripe-Signature is checked (HMAC over the raw
 * bytes, at most 5 minutes old) before any database work; a missing, forged or stale signature answers 400 and
 * writes nothing. A verified event is handled once per event id in ONE transaction. Not part of the integrator API:
 * hidden from the OpenAPI documents and outside the operation catalogue (only Stripe calls it).
 * Answers 200 `{received: true}` for every verified event (also duplicates, other types, unknown sessions and events
 * of the other mode than the key's, which are logged and change nothing), 404 when Stripe is not configured, 500 when handling failed (Stripe then delivers the event again).
 */
export const stripeWebhookRoutes: FastifyPluginAsync<{ ctx: AppContext }> = async (app, { ctx }) => {
  // This scope only: the raw bytes are what the signature covers, so no JSON parsing before the check.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: STRIPE_WEBHOOK_BODY_LIMIT }, (_request, body, done) => done(null, body));

  app.post('/stripe/webhook', { schema: { hide: true }, bodyLimit: STRIPE_WEBHOOK_BODY_LIMIT }, async (request, reply) => {
    const provider = stripeProvider(ctx.config);
    if (!provider) return reply.status(404).send({ message: 'Stripe is not configured on this service', code: 'not_found', requestId: request.id });
    const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
    let event: Stripe.Event;
    try {
      event = provider.verifyEvent(raw, headerOf(request.headers['stripe-signature']));
    } catch (err) {
      request.log.warn({ reason: (err as Error).message }, 'Stripe webhook refused: signature not valid');
      return reply.status(400).send({ message: 'The Stripe-Signature header is missing, does not match the body, or is too old', code: 'bad_request', requestId: request.id });
    }
    // A test-mode event sent to a live-mode setup (or the reverse) never moves orders or money.
    if (Boolean(event.livemode) !== provider.livemode) {
      request.log.warn({ eventId: event.id, type: event.type, livemode: Boolean(event.livemode) }, 'Stripe event of the other mode than STRIPE_SECRET_KEY; acknowledged and ignored');
      return { received: true };
    }
    const outcome = await withTransaction(ctx.pool, async (tx) => {
      if (!(await recordProviderEvent(tx, { id: event.id, provider: provider.name, type: event.type }))) return { result: 'duplicate', checkoutId: null };
      const report = HANDLED.has(event.type) ? reportOf(event) : null;
      if (!report) return { result: 'ignored', checkoutId: null };
      const settled = await settleHostedCheckout(tx, ctx, provider, report, request.log);
      if (settled.checkoutId) await linkEvent(tx, event.id, settled.checkoutId);
      return settled;
    });
    const log = { eventId: event.id, type: event.type, ...outcome };
    if (outcome.result === 'unknown_session') request.log.warn(log, 'Stripe event for a Checkout Session this service did not open; acknowledged');
    else request.log.info(log, 'Stripe event handled');
    return { received: true };
  });
};

function headerOf(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** What a Checkout Session event says about the payment (PAY-3). */
function reportOf(event: Stripe.Event): HostedPaymentReport | null {
  const session = event.data.object as Stripe.Checkout.Session;
  if (session.object !== 'checkout.session' || typeof session.id !== 'string') return null;
  const paymentReference = typeof session.payment_intent === 'string' ? session.payment_intent : session.payment_intent?.id ?? null;
  const paid = { outcome: 'paid' as const, sessionId: session.id, paymentReference: paymentReference ?? '', amountCents: session.amount_total ?? 0 };
  switch (event.type) {
    case 'checkout.session.completed':
      // Card payments are paid at completion; delayed methods (bank debits) complete unpaid and report later.
      if (session.payment_status === 'paid' && paymentReference) return paid;
      return { outcome: 'processing', sessionId: session.id };
    case 'checkout.session.async_payment_succeeded':
      return paymentReference ? paid : null;
    case 'checkout.session.async_payment_failed':
      return { outcome: 'failed', sessionId: session.id, message: 'The payment did not go through. Nothing was ordered; please order again with another payment method.' };
    case 'checkout.session.expired':
      return { outcome: 'expired', sessionId: session.id };
    default:
      return null;
  }
}

import type { FastifyPluginAsync } from 'fastify';
import type Stripe from 'stripe';
import type { AppContext } from '../../context.js';
import { stripeProvider } from '../payments/payments.service.js';
import { handleStripeEvent } from './stripe-events.js';

/** Largest Stripe event accepted, in bytes (Checkout Session events are a few KB). */
const STRIPE_WEBHOOK_BODY_LIMIT = 256 * 1024;

/**
 * `POST /stripe/webhook` (PAY-3, PAY-4): Stripe's events about Checkout Sessions. Unauthenticated, so bounded in
 * cost: the body is read raw up to STRIPE_WEBHOOK_BODY_LIMIT, and the Stripe-Signature is checked (HMAC over the raw
 * bytes, at most 5 minutes old) before any database work; a missing, forged or stale signature answers 400 and
 * writes nothing. A verified event is handled once per event id in ONE transaction. Not part of the integrator API:
 * hidden from the OpenAPI documents and outside the operation catalogue (only Stripe calls it).
 * Answers 200 `{received: true}` for every verified event (also duplicates, other types, unknown sessions and events
 * of the other mode than the key's, which are logged and change nothing), 404 when Stripe is not configured, 500 when
 * handling failed (Stripe then delivers the event again).
 */
export const stripeWebhookRoutes: FastifyPluginAsync<{ ctx: AppContext }> = async (app, { ctx }) => {
  // This scope only: the raw bytes are what the signature covers, so no JSON parsing before the check.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: STRIPE_WEBHOOK_BODY_LIMIT }, (_request, body, done) =>
    done(null, body),
  );

  app.post(
    '/stripe/webhook',
    { schema: { hide: true }, bodyLimit: STRIPE_WEBHOOK_BODY_LIMIT },
    async (request, reply) => {
      const provider = stripeProvider(ctx.config);
      if (!provider)
        return reply
          .status(404)
          .send({ message: 'Stripe is not configured on this service', code: 'not_found', requestId: request.id });
      const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      let event: Stripe.Event;
      try {
        event = provider.verifyEvent(raw, headerOf(request.headers['stripe-signature']));
      } catch (err) {
        request.log.warn({ reason: (err as Error).message }, 'Stripe webhook refused: signature not valid');
        return reply.status(400).send({
          message: 'The Stripe-Signature header is missing, does not match the body, or is too old',
          code: 'bad_request',
          requestId: request.id,
        });
      }
      // A test-mode event sent to a live-mode setup (or the reverse) never moves orders or money.
      if (Boolean(event.livemode) !== provider.livemode) {
        request.log.warn(
          { eventId: event.id, type: event.type, livemode: Boolean(event.livemode) },
          'Stripe event of the other mode than STRIPE_SECRET_KEY; acknowledged and ignored',
        );
        return { received: true };
      }
      const outcome = await handleStripeEvent(ctx, provider, event, request.log);
      const log = { eventId: event.id, type: event.type, ...outcome };
      if (outcome.result === 'unknown_session')
        request.log.warn(log, 'Stripe event for a Checkout Session this service did not open; acknowledged');
      else request.log.info(log, 'Stripe event handled');
      return { received: true };
    },
  );
};

function headerOf(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

import Stripe from 'stripe';
import {
  PAYMENT_CURRENCY,
  type HostedPaymentProvider,
  type HostedSessionRequest,
  type RefundRequest,
} from './payment-provider.js';

/** Where the Stripe client sends its requests: Stripe's own API unless STRIPE_API_BASE_URL points at a stand-in. */
export interface StripeSettings {
  secretKey: string;
  webhookSecret: string;
  /** e.g. https://api.stripe.com (default) or http://127.0.0.1:4100 in tests. */
  apiBaseUrl: string;
}

/** A top-up's Checkout Session (FUND-2): our top-up id (also the idempotency key), its amount in US cents, where to return. */
export interface TopUpSessionRequest {
  topUpId: string;
  organizationName: string;
  amountCents: number;
  successUrl: string;
  cancelUrl: string;
}

/** Webhook signatures older than this many seconds are refused as stale (Stripe's own default tolerance). */
const WEBHOOK_TOLERANCE_SECONDS = 300;

/** Hosted payment pages expire after this many seconds (Stripe accepts 30 minutes to 24 hours). */
const SESSION_LIFETIME_SECONDS = 60 * 60;

/**
 * The live payment provider (PAY-1, PAY-2): Stripe Checkout through the official `stripe` package. A checkout opens
 * a Checkout Session (mode payment, one line per service at retail and per state fee, in cents, the organization's
 * name on the page, the customer's e-mail prefilled, our checkout id in the metadata); Stripe confirms the payment
 * through a signed webhook (see dashboard/stripe-webhook.routes.ts, PAY-3). Refunds go to the session's PaymentIntent.
 */
export class StripePaymentProvider implements HostedPaymentProvider {
  readonly name = 'stripe';
  readonly kind = 'hosted' as const;
  readonly client: Stripe;
  /** Whether the key is a live-mode key: events of the other mode are never acted on (PAY-3). */
  readonly livemode: boolean;

  constructor(readonly settings: StripeSettings) {
    this.livemode = /^(sk|rk)_live_/.test(settings.secretKey);
    const base = new URL(settings.apiBaseUrl);
    this.client = new Stripe(settings.secretKey, {
      host: base.hostname,
      port: base.port || (base.protocol === 'http:' ? 80 : 443),
      protocol: base.protocol === 'http:' ? 'http' : 'https',
      // Requests run while a checkout form's row is locked: bounded, and retried by the package on network errors
      // with the same idempotency key.
      timeout: 15_000,
      maxNetworkRetries: 2,
      appInfo: { name: 'filing-compliance-service' },
    });
  }

  async createSession(request: HostedSessionRequest): Promise<{ sessionId: string; url: string }> {
    const lines = request.lines.filter((l) => l.amountCents > 0);
    const session = await this.client.checkout.sessions.create(
      {
        mode: 'payment',
        line_items: lines.map((l) => ({
          quantity: 1,
          price_data: {
            currency: PAYMENT_CURRENCY,
            unit_amount: l.amountCents,
            product_data: { name: l.description.slice(0, 250) },
          },
        })),
        customer_email: request.customerEmail,
        client_reference_id: request.checkoutId,
        metadata: { checkout_id: request.checkoutId },
        payment_intent_data: {
          metadata: { checkout_id: request.checkoutId },
          description: `${request.organizationName} order`.slice(0, 1000),
        },
        custom_text: { submit: { message: `You are paying ${request.organizationName}.`.slice(0, 1200) } },
        success_url: request.successUrl,
        cancel_url: request.cancelUrl,
        expires_at: Math.floor(Date.now() / 1000) + SESSION_LIFETIME_SECONDS,
      },
      { idempotencyKey: request.idempotencyKey },
    );
    if (!session.url) throw new Error(`Stripe returned Checkout Session ${session.id} without a url`);
    return { sessionId: session.id, url: session.url };
  }

  /**
   * Opens a Checkout Session for a prepaid balance top-up (FUND-2): one line of `amountCents` US cents, paid by card or
   * US bank account (ACH debit), our top-up id in the metadata of the session and of its PaymentIntent (disputes and
   * refunds name the PaymentIntent). The balance is credited only when Stripe's signed event says it is paid (FUND-5).
   * @throws when Stripe refuses or cannot be reached (nothing is charged then).
   */
  async createTopUpSession(request: TopUpSessionRequest): Promise<{ sessionId: string; url: string }> {
    const session = await this.client.checkout.sessions.create(
      {
        mode: 'payment',
        // The pinned API version has no static `payment_method_types` for Checkout: this list filters what the Stripe
        // account offers, so US bank account must be switched on among its payment methods (docs/deploying.md).
        allowed_payment_method_types: ['card', 'us_bank_account'],
        line_items: [
          {
            quantity: 1,
            price_data: {
              currency: PAYMENT_CURRENCY,
              unit_amount: request.amountCents,
              product_data: { name: `Prepaid balance top-up for ${request.organizationName}`.slice(0, 250) },
            },
          },
        ],
        client_reference_id: request.topUpId,
        metadata: { top_up_id: request.topUpId },
        payment_intent_data: {
          metadata: { top_up_id: request.topUpId },
          description: `Balance top-up ${request.topUpId}`,
        },
        success_url: request.successUrl,
        cancel_url: request.cancelUrl,
        expires_at: Math.floor(Date.now() / 1000) + SESSION_LIFETIME_SECONDS,
      },
      { idempotencyKey: request.topUpId },
    );
    if (!session.url) throw new Error(`Stripe returned Checkout Session ${session.id} without a url`);
    return { sessionId: session.id, url: session.url };
  }

  async refund(request: RefundRequest): Promise<{ reference: string }> {
    const refund = await this.client.refunds.create(
      { payment_intent: request.reference, amount: request.amountCents },
      { idempotencyKey: request.idempotencyKey },
    );
    return { reference: refund.id };
  }

  /**
   * Checks the Stripe-Signature header of a webhook body and parses it (PAY-3).
   * @param rawBody the request body exactly as received (bytes), never a re-serialised object.
   * @throws Stripe.errors.StripeSignatureVerificationError for a missing, forged or stale (> 5 minutes) signature.
   */
  verifyEvent(rawBody: Buffer, signature: string | undefined): Stripe.Event {
    return this.client.webhooks.constructEvent(
      rawBody,
      signature ?? '',
      this.settings.webhookSecret,
      WEBHOOK_TOLERANCE_SECONDS,
    );
  }
}

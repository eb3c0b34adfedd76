/**
 * The payment provider of in-app checkout (BILL-10, PAY-1). Two kinds:
 * - `card`: the service takes the card details and charges them at once (the test environment's sandbox);
 * - `hosted`: the customer pays on the provider's own page (Stripe Checkout) and the provider confirms the payment
 *   later through a signed webhook; only then is the order placed (PAY-3).
 * Both refund a charge (an order that could not be placed, a cancelled order: PAY-6). Card data passes through
 * memory only: it is never stored or logged (the payments row keeps the last four digits at most).
 */
export type PaymentProvider = CardPaymentProvider | HostedPaymentProvider;

/** The currency every payment is asked in, as Stripe writes it (ISO 4217, lower case): US dollars (PAY-2, PAY-5). */
export const PAYMENT_CURRENCY = 'usd';

interface ProviderBase {
  /** Stored on the payments row, e.g. 'sandbox', 'stripe'. */
  readonly name: string;
  /**
   * Gives back `amountCents` of a succeeded charge (all of it or one order's share). The same idempotency key never
   * refunds twice. @returns the provider's refund reference. @throws when the provider refuses or cannot be reached.
   */
  refund(request: RefundRequest): Promise<{ reference: string }>;
}

/** A provider that charges card details typed into our own form. */
export interface CardPaymentProvider extends ProviderBase {
  readonly kind: 'card';
  /** Charges `amountCents` (USD). Never throws for a declined card: that is a `declined` result with a message for the customer. */
  charge(request: ChargeRequest): Promise<ChargeResult>;
}

/** A provider whose own page takes the card; payment is confirmed later by a signed event (PAY-2, PAY-3). */
export interface HostedPaymentProvider extends ProviderBase {
  readonly kind: 'hosted';
  /**
   * Opens a payment page for one checkout. @returns the provider's session id and the address to send the customer to.
   * @throws when the provider refuses or cannot be reached (nothing is charged then).
   */
  createSession(request: HostedSessionRequest): Promise<{ sessionId: string; url: string }>;
}

/**
 * One refund: `reference` is the charge's provider reference (a Stripe PaymentIntent id), `amountCents` in the
 * charge's smallest unit (US cents; a payment made in another currency than asked is refunded in its own, PAY-5).
 */
export interface RefundRequest {
  reference: string;
  amountCents: number;
  idempotencyKey: string;
}

/** A priced line of a hosted payment page: a service at retail or a state fee, in US cents (PAY-2). */
interface HostedLine {
  description: string;
  amountCents: number;
}

/** What a hosted payment page shows and where it sends the customer afterwards. */
export interface HostedSessionRequest {
  /** Our card_checkouts id (`chk_...`), carried in the session's metadata and client reference. */
  checkoutId: string;
  /** Lines of zero cents (services included in a package) are left out; the total is their sum. */
  lines: HostedLine[];
  /** Shown on the page: the customer pays this organization. */
  organizationName: string;
  /** Prefilled on the page (the signed-in dashboard user). */
  customerEmail: string;
  successUrl: string;
  cancelUrl: string;
  /** The same key never opens a second page for the same checkout. */
  idempotencyKey: string;
}

/** Card fields as typed by the customer (digits only after normalisation). */
export interface CardDetails {
  number: string;
  expMonth: number;
  /** Four-digit year. */
  expYear: number;
  cvc: string;
  name: string;
}

/** One charge: `amountCents` in US cents (retail plus state fees, BILL-10, BILL-11), the card, and an idempotency key. */
export interface ChargeRequest {
  amountCents: number;
  card: CardDetails;
  /** Shown on the customer's statement / provider dashboard. */
  description: string;
  /** The same key never charges twice (providers such as Stripe take an idempotency key). */
  idempotencyKey: string;
}

/** A charge's outcome: succeeded with the provider's `reference` (for refunds), or declined with a customer message. */
export type ChargeResult =
  | { status: 'succeeded'; reference: string; cardLast4: string }
  | { status: 'declined'; message: string; cardLast4: string; declineCode: string };

/** Digits only: '4242 4242-4242 4242' -> '4242424242424242'. */
export function normalizeCardNumber(input: string): string {
  return input.replace(/[\s-]/g, '');
}

/** Luhn checksum of a digit string (catches most typing errors before the provider is called). */
export function luhnValid(digits: string): boolean {
  if (!/^\d{12,19}$/.test(digits)) return false;
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/**
 * What a provider reported about one payment page (from a verified event). `amountCents` in the smallest unit of
 * `currency` (ISO 4217, lower case; empty when the event did not say).
 */
export type HostedPaymentReport =
  | { outcome: 'paid'; sessionId: string; paymentReference: string; amountCents: number; currency: string }
  | { outcome: 'processing'; sessionId: string }
  | { outcome: 'failed'; sessionId: string; message: string }
  | { outcome: 'expired'; sessionId: string };

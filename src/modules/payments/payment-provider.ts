/**
 * The payment provider of in-app checkout (issue 5 item 5). A provider charges a card once per checkout and
 * can refund a charge whose order could not be placed. Card data passes through memory only: it is never
 * stored or logged (the payments row keeps the last four digits).
 */
export interface PaymentProvider {
  /** Stored on the payments row, e.g. 'sandbox'. */
  readonly name: string;
  /** Charges `amountCents` (USD). Never throws for a declined card: that is a `declined` result with a message for the customer. */
  charge(request: ChargeRequest): Promise<ChargeResult>;
  /** Gives back a succeeded charge in full (an order that failed after the charge). */
  refund(reference: string, amountCents: number): Promise<void>;
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

/** One charge: `amountCents` in US cents (retail plus state fees, issue 5 item 5), the card, and an idempotency key. */
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

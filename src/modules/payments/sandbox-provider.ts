import { createHash } from 'node:crypto';
import type { CardPaymentProvider, ChargeRequest, ChargeResult, RefundRequest } from './payment-provider.js';

/** The success card of the sandbox (as in Stripe's test mode). */
const SANDBOX_SUCCESS_CARD = '4242424242424242';
/** The decline card of the sandbox. */
const SANDBOX_DECLINE_CARD = '4000000000000002';
/** What the customer reads when a card is declined. */
const CARD_DECLINED_MESSAGE = 'Your card was declined. Try another card.';

/**
 * Built-in provider of the test environment (PAY-1): no money moves and Stripe is never called. 4242 4242 4242 4242
 * succeeds, 4000 0000 0000 0002 is declined ("Your card was declined"), any other number is declined as not a test
 * card. References are derived from the idempotency key, so a repeated charge gives the same reference.
 */
export class SandboxPaymentProvider implements CardPaymentProvider {
  readonly name = 'sandbox';
  readonly kind = 'card' as const;

  async charge(request: ChargeRequest): Promise<ChargeResult> {
    const cardLast4 = request.card.number.slice(-4);
    if (request.card.number === SANDBOX_SUCCESS_CARD) {
      return {
        status: 'succeeded',
        reference: `sbx_ch_${createHash('sha256').update(request.idempotencyKey).digest('hex').slice(0, 24)}`,
        cardLast4,
      };
    }
    if (request.card.number === SANDBOX_DECLINE_CARD)
      return { status: 'declined', message: CARD_DECLINED_MESSAGE, cardLast4, declineCode: 'card_declined' };
    return {
      status: 'declined',
      message: 'Your card was declined: in test mode use the test card 4242 4242 4242 4242.',
      cardLast4,
      declineCode: 'test_mode_live_card',
    };
  }

  /** Nothing moved, nothing to give back: a reference derived from the idempotency key (the same key, the same reference). */
  async refund(request: RefundRequest): Promise<{ reference: string }> {
    return { reference: `sbx_re_${createHash('sha256').update(request.idempotencyKey).digest('hex').slice(0, 24)}` };
  }
}

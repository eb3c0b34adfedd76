import { one } from '../../lib/db.js';
import { defineTask } from '../../lib/jobs.js';
import { paymentProviderFor } from './payments.service.js';

declare global {
  namespace GraphileWorker {
    interface Tasks {
      /** Sends one card refund (a card_refunds row) to the payment provider; queued by queueCardRefund (PAY-6). */
      refund_card_payment: { refundId: string };
    }
  }
}

interface RefundFacts {
  id: string;
  status: 'pending' | 'succeeded';
  provider: string;
  amount_cents: string | number;
  environment: 'live' | 'test';
  reference: string;
}

/**
 * Sends one refund to the payment provider (payload `{refundId}`). Already succeeded: nothing to do. The provider's
 * answer is recorded either way (reference and time, or the error and the attempt count); a refusal then throws so
 * graphile-worker retries later with the same idempotency key.
 */
export const refundCardPaymentTask = defineTask('refund_card_payment', (ctx) => {
  return async (payload, helpers) => {
    const { refundId } = payload;
    const r = await one<RefundFacts>(
      ctx.pool,
      `SELECT r.id, r.status, r.provider, r.amount_cents, r.environment, p.provider_reference AS reference
         FROM card_refunds r JOIN payments p ON p.id = r.payment_id WHERE r.id = $1`,
      [refundId],
    );
    if (!r || r.status === 'succeeded') return;
    const provider = paymentProviderFor(ctx.config, r.environment);
    try {
      if (!provider || provider.name !== r.provider) throw new Error(`the payment provider '${r.provider}' is not configured`);
      const done = await provider.refund({ reference: r.reference, amountCents: Number(r.amount_cents), idempotencyKey: r.id });
      await ctx.pool.query(
        `UPDATE card_refunds SET status = 'succeeded', provider_reference = $2, refunded_at = now(), attempts = attempts + 1, last_attempt_at = now(), last_error = NULL
          WHERE id = $1 AND status = 'pending'`,
        [r.id, done.reference],
      );
      helpers.logger.info(`refund ${r.id} of ${r.amount_cents} cents sent to ${r.provider}`);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      await ctx.pool.query(
        'UPDATE card_refunds SET attempts = attempts + 1, last_attempt_at = now(), last_error = $2 WHERE id = $1',
        [r.id, message.slice(0, 500)],
      );
      throw err;
    }
  };
});

import { defineTask } from '../../lib/jobs.js';
import * as repo from './payments.repo.js';
import { paymentProviderFor } from './payments.service.js';

declare global {
  namespace GraphileWorker {
    interface Tasks {
      /** Sends one card refund (a card_refunds row) to the payment provider; queued by queueCardRefund (PAY-6). */
      refund_card_payment: { refundId: string };
    }
  }
}

/**
 * Sends one refund to the payment provider (payload `{refundId}`). Already succeeded: nothing to do. The provider's
 * answer is recorded either way (reference and time, or the error and the attempt count); a refusal then throws so
 * graphile-worker retries later with the same idempotency key.
 */
export const refundCardPaymentTask = defineTask('refund_card_payment', (ctx) => {
  return async (payload, helpers) => {
    const { refundId } = payload;
    const r = await repo.findRefundFacts(ctx.pool, refundId);
    if (!r || r.status === 'succeeded') return;
    const provider = paymentProviderFor(ctx.config, r.environment);
    try {
      if (!provider || provider.name !== r.provider)
        throw new Error(`the payment provider '${r.provider}' is not configured`);
      const done = await provider.refund({
        reference: r.reference,
        amountCents: Number(r.amount_cents),
        idempotencyKey: r.id,
      });
      await repo.markRefundSucceeded(ctx.pool, r.id, done.reference);
      helpers.logger.info(`refund ${r.id} of ${r.amount_cents} cents sent to ${r.provider}`);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      await repo.recordRefundFailure(ctx.pool, r.id, message.slice(0, 500));
      throw err;
    }
  };
});

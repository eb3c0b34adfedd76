import { defineTask } from '../../lib/jobs.js';
import { runAutoRecharge } from './auto-recharge.service.js';

declare global {
  namespace GraphileWorker {
    interface Tasks {
      /**
       * One attempt of a queued automatic recharge (FUND-35); queued by the trigger queue_auto_recharge in the debit's
       * transaction, and again after a failed attempt (FUND-36).
       */
      run_auto_recharge: { autoRechargeId: string };
    }
  }
}

/**
 * Runs one attempt of a recharge (payload `{autoRechargeId}`) through {@link runAutoRecharge}. When Stripe cannot be
 * reached the job throws and graphile-worker retries it with backoff and the same Idempotency-Key; on the job's last
 * try that counts as a failed attempt instead, so a recharge never stays in flight for ever.
 */
export const runAutoRechargeTask = defineTask('run_auto_recharge', (ctx) => {
  return async ({ autoRechargeId }, helpers) => {
    const lastTry = helpers.job.attempts >= helpers.job.max_attempts;
    const result = await runAutoRecharge(ctx, autoRechargeId, ctx.log, lastTry);
    helpers.logger.info(`auto-recharge ${autoRechargeId}: ${result}`);
  };
});

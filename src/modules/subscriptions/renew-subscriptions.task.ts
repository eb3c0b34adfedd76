import type { CronItem } from 'graphile-worker';
import { defineTask, type CronPayload } from '../../lib/jobs.js';
import { todayUtc } from '../filings/transitions.js';
import { renewDueSubscriptions } from './subscriptions.service.js';

declare global {
  namespace GraphileWorker {
    interface Tasks {
      /** Renews due subscriptions: cron's payload, or `asOf` ('YYYY-MM-DD') when queued by hand. */
      renew_subscriptions: CronPayload & { asOf?: string };
    }
  }
}

/**
 * Renews every subscription due on the run's date (UTC date of the cron tick; `asOf` 'YYYY-MM-DD' when queued by
 * hand; else today). Throws when any subscription failed, so graphile-worker retries the run with backoff; the
 * retry charges only what is still due.
 */
export const renewSubscriptionsTask = defineTask('renew_subscriptions', (ctx) => {
  return async (payload) => {
    const asOf = payload.asOf ?? (payload._cron?.ts ? todayUtc(new Date(payload._cron.ts)) : todayUtc());
    const summary = await renewDueSubscriptions(ctx, { asOf, actor: 'worker' });
    if (summary.counts.failed > 0)
      throw new Error(`${summary.counts.failed} subscription renewal(s) failed for ${asOf}; see the log`);
  };
});

/**
 * Daily at 04:17 UTC (graphile-worker cron runs in UTC). A worker that was down at that time runs the missed
 * schedule when it starts again within a day (backfillPeriod). Cron scheduling is deduplicated across workers by
 * graphile-worker, and the renewal itself is idempotent, so a retried or doubled run charges nothing twice.
 */
export const renewSubscriptionsCron: CronItem = {
  task: renewSubscriptionsTask.name,
  match: '17 4 * * *',
  identifier: 'subscriptions:renew-daily',
  options: { backfillPeriod: 24 * 3600 * 1000, maxAttempts: 5, queueName: 'subscription_renewals' },
};

import type { CronItem } from 'graphile-worker';
import { defineTask, type CronPayload } from '../../lib/jobs.js';
import { SESSION_IDLE_SECONDS } from '../dashboard/sessions.js';
import { KEY_TTL_HOURS } from '../idempotency/idempotency.repo.js';
import { destroyExpiredTaxIds } from '../orders/ein-tax-ids.js';
import { FAILURE_DELAYS } from '../rate-limits/sign-in-limits.js';
import { REQUEST_LOG_DAYS } from '../request-log/request-log.service.js';
import { purgeExpired, type PurgeCounts, type PurgeRules } from './purge.repo.js';

declare global {
  namespace GraphileWorker {
    interface Tasks {
      /** Deletes what has expired and destroys tax ids past retention; queued by cron only, so the payload is cron's. */
      purge_expired: CronPayload;
    }
  }
}

/**
 * What the purge keeps. Checkout form tokens outlive the longest dashboard session (7 days) by a day; login
 * attempts are kept a day, well past the 15 minutes sign-in failures count (AUTH-8), so a day's failures can still be looked at.
 */
const PURGE_RULES: PurgeRules = {
  idempotencyKeySeconds: KEY_TTL_HOURS * 3600,
  dashboardIdleSeconds: SESSION_IDLE_SECONDS,
  checkoutFormSeconds: 8 * 24 * 3600,
  loginAttemptSeconds: Math.max(24 * 3600, FAILURE_DELAYS.windowSeconds),
  failedApiRequestSeconds: REQUEST_LOG_DAYS * 24 * 3600,
};

/**
 * Deletes expired idempotency keys, spent or expired magic links, ended sessions, unused checkout forms, failed API
 * requests past the request log's week (purge.repo.ts),
 * then destroys the EIN tax ids kept TAX_ID_RETENTION_DAYS past their order's filing or cancellation (ORD-EIN-9).
 */
export const purgeExpiredTask = defineTask('purge_expired', (ctx) => {
  return async () => {
    const counts: PurgeCounts = await purgeExpired(ctx.pool, PURGE_RULES);
    const taxIdsDestroyed = await destroyExpiredTaxIds(ctx.pool, ctx.config.taxIdRetentionDays);
    ctx.log.info({ counts, taxIdsDestroyed }, 'purged expired rows');
  };
});

/**
 * Daily at 03:41 UTC, once across all workers (graphile-worker cron). Every expired row is useless to everyone
 * (a spent link, an ended session, a key past its replay window), so a missed day is simply caught up by the next.
 */
export const purgeExpiredCron: CronItem = {
  task: purgeExpiredTask.name,
  match: '41 3 * * *',
  identifier: 'maintenance:purge-expired-daily',
  options: { backfillPeriod: 0, maxAttempts: 3, queueName: 'maintenance' },
};

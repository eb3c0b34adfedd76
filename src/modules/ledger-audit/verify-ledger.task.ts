import type { CronItem } from 'graphile-worker';
import { defineTask, type CronPayload } from '../../lib/jobs.js';
import { verifyLedger } from './ledger-verify.js';

declare global {
  namespace GraphileWorker {
    interface Tasks {
      /** Checks every balance against its ledger entries; queued by cron only, so the payload is cron's. */
      verify_ledger: CronPayload;
    }
  }
}

/**
 * Runs verifyLedger. A difference is logged and counted in the gauge, and the job fails so that it also shows up
 * as a failed job in graphile-worker's tables (with maxAttempts 1: checking again changes nothing).
 */
export const verifyLedgerTask = defineTask('verify_ledger', (ctx) => {
  return async () => {
    const differences = await verifyLedger(ctx);
    if (differences.length)
      throw new Error(`${differences.length} tenant balance(s) differ from their ledger entries; see the log`);
  };
});

/** Daily at 05:23 UTC, once across all workers (graphile-worker cron); a missed day is caught up by the next. */
export const verifyLedgerCron: CronItem = {
  task: verifyLedgerTask.name,
  match: '23 5 * * *',
  identifier: 'ledger:verify-daily',
  options: { backfillPeriod: 0, maxAttempts: 1, queueName: 'maintenance' },
};

import type { CronItem, Task } from 'graphile-worker';
import type { AppContext } from '../../context.js';
import { verifyLedger } from './ledger-verify.js';

/** The graphile-worker task that verifies the ledger (no payload). */
export const VERIFY_LEDGER_TASK = 'verify_ledger';

/** Daily at 05:23 UTC, once across all workers (graphile-worker cron); a missed day is caught up by the next. */
export const verifyLedgerCron: CronItem = {
  task: VERIFY_LEDGER_TASK,
  match: '23 5 * * *',
  identifier: 'ledger:verify-daily',
  options: { backfillPeriod: 0, maxAttempts: 1, queueName: 'maintenance' },
};

/**
 * Runs verifyLedger. A difference is logged and counted in the gauge, and the job fails so that it also shows up
 * as a failed job in graphile-worker's tables (with maxAttempts 1: checking again changes nothing).
 */
export function verifyLedgerTask(ctx: AppContext): Task {
  return async () => {
    const differences = await verifyLedger(ctx);
    if (differences.length) throw new Error(`${differences.length} tenant balance(s) differ from their ledger entries; see the log`);
  };
}

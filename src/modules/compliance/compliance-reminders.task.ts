import type { CronItem, Task } from 'graphile-worker';
import type { AppContext } from '../../context.js';
import { runComplianceReminders } from './compliance-reminders.js';
import { todayUtc } from './compliance.service.js';

/** The graphile-worker task that sends compliance deadline reminders (payload: optional `{asOf: 'YYYY-MM-DD'}`). */
export const COMPLIANCE_REMINDERS_TASK = 'compliance_reminders';

/**
 * Daily at 06:07 UTC, once across all workers (CAL-20). A missed day is caught up by the next run: thresholds
 * already passed are sent at the tighter one, and missed reports are told up to a week late.
 */
export const complianceRemindersCron: CronItem = {
  task: COMPLIANCE_REMINDERS_TASK,
  match: '7 6 * * *',
  identifier: 'compliance:reminders-daily',
  options: { backfillPeriod: 0, maxAttempts: 3, queueName: 'compliance' },
};

/** Runs the reminders as of today (UTC) or the payload's `asOf`, and logs how many events were emitted. */
export function complianceRemindersTask(ctx: AppContext): Task {
  return async (payload) => {
    const asOf = (payload as { asOf?: string } | null)?.asOf ?? todayUtc();
    const emitted = await runComplianceReminders(ctx.pool, asOf);
    ctx.log.info({ asOf, emitted: emitted.length }, 'compliance reminders sent');
  };
}

import type { CronItem } from 'graphile-worker';
import { defineTask, type CronPayload } from '../../lib/jobs.js';
import { runComplianceReminders } from './compliance-reminders.js';
import { todayUtc } from './calendar-range.js';

declare global {
  namespace GraphileWorker {
    interface Tasks {
      /** Sends deadline reminders: cron's payload, or `asOf` ('YYYY-MM-DD') to run as if today were that day. */
      compliance_reminders: CronPayload & { asOf?: string };
    }
  }
}

/** Runs the reminders as of today (UTC) or the payload's `asOf`, and logs how many events were emitted. */
export const complianceRemindersTask = defineTask('compliance_reminders', (ctx) => {
  return async (payload) => {
    const asOf = payload.asOf ?? todayUtc();
    const emitted = await runComplianceReminders(ctx.pool, asOf);
    ctx.log.info({ asOf, emitted: emitted.length }, 'compliance reminders sent');
  };
});

/**
 * Daily at 06:07 UTC, once across all workers (CAL-20). A missed day is caught up by the next run: thresholds
 * already passed are sent at the tighter one, and missed reports are told up to a week late.
 */
export const complianceRemindersCron: CronItem = {
  task: complianceRemindersTask.name,
  match: '7 6 * * *',
  identifier: 'compliance:reminders-daily',
  options: { backfillPeriod: 0, maxAttempts: 3, queueName: 'compliance' },
};

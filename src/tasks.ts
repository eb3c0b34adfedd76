import type { CronItem, Task } from 'graphile-worker';
import type { AppContext } from './context.js';
import { sendDocumentEmailTask } from './modules/notifications/document-email.task.js';
import { SEND_DOCUMENT_EMAIL_TASK, SEND_ENDPOINT_DISABLED_EMAIL_TASK } from './modules/notifications/notifications.service.js';
import { sendEndpointDisabledEmailTask } from './modules/notifications/endpoint-disabled-email.task.js';
import { RENEW_SUBSCRIPTIONS_TASK, renewSubscriptionsCron, renewSubscriptionsTask } from './modules/subscriptions/renew-subscriptions.task.js';
import { PURGE_EXPIRED_TASK, purgeExpiredCron, purgeExpiredTask } from './modules/maintenance/purge-expired.task.js';
import { VERIFY_LEDGER_TASK, verifyLedgerCron, verifyLedgerTask } from './modules/ledger-audit/verify-ledger.task.js';
import { REFUND_CARD_PAYMENT_TASK, refundCardPaymentTask } from './modules/payments/card-refunds.js';
import { COMPLIANCE_REMINDERS_TASK, complianceRemindersCron, complianceRemindersTask } from './modules/compliance/compliance-reminders.task.js';

/**
 * Background tasks run by graphile-worker, by name. Each module adds its task factories here
 * (emails, subscription renewals, maintenance). Webhook deliveries are not jobs: the webhook dispatcher
 * (src/modules/webhooks/dispatcher.ts) claims them from their own table. Jobs are added inside the caller's transaction
 * with `SELECT graphile_worker.add_job(...)`, so a rolled-back request leaves no job behind.
 */
export const taskFactories: Record<string, (ctx: AppContext) => Task> = {
  [SEND_DOCUMENT_EMAIL_TASK]: sendDocumentEmailTask,
  [SEND_ENDPOINT_DISABLED_EMAIL_TASK]: sendEndpointDisabledEmailTask,
  [RENEW_SUBSCRIPTIONS_TASK]: renewSubscriptionsTask,
  [PURGE_EXPIRED_TASK]: purgeExpiredTask,
  [VERIFY_LEDGER_TASK]: verifyLedgerTask,
  [REFUND_CARD_PAYMENT_TASK]: (ctx) => refundCardPaymentTask(ctx),
  [COMPLIANCE_REMINDERS_TASK]: complianceRemindersTask,
};

/**
 * Recurring jobs (graphile-worker cron, UTC), each naming a task of {@link taskFactories}. Every worker process
 * passes them to `run()`; graphile-worker schedules each tick once across all workers.
 */
export const cronItems: CronItem[] = [
  renewSubscriptionsCron,
  purgeExpiredCron,
  verifyLedgerCron,
  complianceRemindersCron,
];

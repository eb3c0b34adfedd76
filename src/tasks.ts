import type { CronItem } from 'graphile-worker';
import type { TaskDefinition, TaskName } from './lib/jobs.js';
import { sendDocumentEmailTask } from './modules/notifications/document-email.task.js';
import { runAutoRechargeTask } from './modules/funding/auto-recharge.task.js';
import { sendAutoRechargeFailedEmailTask } from './modules/funding/auto-recharge-email.task.js';
import { sendEndpointDisabledEmailTask } from './modules/notifications/endpoint-disabled-email.task.js';
import { renewSubscriptionsCron, renewSubscriptionsTask } from './modules/subscriptions/renew-subscriptions.task.js';
import { purgeExpiredCron, purgeExpiredTask } from './modules/maintenance/purge-expired.task.js';
import {
  recheckWhiteLabelDomainsCron,
  recheckWhiteLabelDomainsTask,
} from './modules/maintenance/recheck-domains.task.js';
import { sendDomainLapsedEmailTask } from './modules/notifications/domain-lapsed-email.task.js';
import { verifyLedgerCron, verifyLedgerTask } from './modules/ledger-audit/verify-ledger.task.js';
import { refundCardPaymentTask } from './modules/payments/refund-card-payment.task.js';
import { complianceRemindersCron, complianceRemindersTask } from './modules/compliance/compliance-reminders.task.js';
import { sendPortalPasswordResetTask } from './modules/portal/password-reset-email.task.js';
import { recoverWebhookDeliveriesTask } from './modules/webhooks/recover-deliveries.task.js';
import { sendTopUpReversalEmailTask } from './modules/funding/reversal-email.task.js';
import { sendLowBalanceEmailTask } from './modules/funding/low-balance-email.task.js';

/**
 * Every background task run by graphile-worker, by name. Each `*.task.ts` file declares its task (name, payload
 * type in `GraphileWorker.Tasks`, handler); this table only lists them, and its type makes a task declared but
 * not listed here a compile error. Webhook deliveries are not jobs: the webhook dispatcher
 * (src/modules/webhooks/dispatcher.ts) claims them from their own table. Jobs are queued with `addJob`
 * (src/lib/jobs.ts) inside the caller's transaction, so a rolled-back request leaves no job behind.
 */
export const taskDefinitions: { readonly [K in TaskName]: TaskDefinition<K> } = {
  send_document_email: sendDocumentEmailTask,
  run_auto_recharge: runAutoRechargeTask,
  send_auto_recharge_failed_email: sendAutoRechargeFailedEmailTask,
  send_endpoint_disabled_email: sendEndpointDisabledEmailTask,
  renew_subscriptions: renewSubscriptionsTask,
  purge_expired: purgeExpiredTask,
  verify_ledger: verifyLedgerTask,
  refund_card_payment: refundCardPaymentTask,
  compliance_reminders: complianceRemindersTask,
  recheck_white_label_domains: recheckWhiteLabelDomainsTask,
  send_domain_lapsed_email: sendDomainLapsedEmailTask,
  send_portal_password_reset: sendPortalPasswordResetTask,
  recover_webhook_deliveries: recoverWebhookDeliveriesTask,
  send_top_up_reversal_email: sendTopUpReversalEmailTask,
  send_low_balance_email: sendLowBalanceEmailTask,
};

/**
 * Recurring jobs (graphile-worker cron, UTC), each naming a task of {@link taskDefinitions}. Every worker process
 * passes them to `run()`; graphile-worker schedules each tick once across all workers.
 */
export const cronItems: CronItem[] = [
  renewSubscriptionsCron,
  purgeExpiredCron,
  verifyLedgerCron,
  complianceRemindersCron,
  recheckWhiteLabelDomainsCron,
];

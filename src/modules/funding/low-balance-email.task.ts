import { defineTask } from '../../lib/jobs.js';
import { formatCents } from '../../lib/money.js';
import { createMailer } from '../notifications/mailer.js';
import { ownerEmails } from './auto-recharge.repo.js';
import { renderLowBalanceEmail } from './low-balance-email.template.js';
import { findLowBalanceAlert } from './low-balance.repo.js';

declare global {
  namespace GraphileWorker {
    interface Tasks {
      /**
       * Tells an organization's billing contacts that its live balance fell below the low-balance threshold (FUND-28);
       * queued, one per balance.low event, by the trigger alert_low_balance in the crossing debit's transaction.
       */
      send_low_balance_email: { eventId: string };
    }
  }
}

/**
 * Sends the low-balance email of one crossing (payload `{eventId}`, the balance.low event; FUND-28, FUND-29): one
 * message to the organization's technical contact (`contactEmail`) and its enabled owners together. Skips an event
 * that is missing, not of the live balance, or of an organization without any address. A send failure throws, so
 * graphile-worker retries with backoff.
 */
export const sendLowBalanceEmailTask = defineTask('send_low_balance_email', (ctx) => {
  return async ({ eventId }, helpers) => {
    const alert = await findLowBalanceAlert(ctx.pool, eventId);
    if (alert?.environment !== 'live') {
      helpers.logger.info(`low-balance email for ${eventId} skipped: no such live balance.low event`);
      return;
    }
    const owners = await ownerEmails(ctx.pool, alert.organization_id);
    const to = [...new Set([alert.contact_email, ...owners].filter((e): e is string => !!e))];
    if (!to.length) {
      helpers.logger.info(`low-balance email for ${eventId} skipped: ${alert.organization_id} has no contact`);
      return;
    }
    const content = renderLowBalanceEmail({
      orgName: alert.organization_name,
      balance: formatCents(Number(alert.balance_cents)),
      threshold: formatCents(Number(alert.threshold_cents)),
      balanceTransactionId: alert.balance_transaction_id,
      recharge: alert.recharge_cents === null ? null : formatCents(Number(alert.recharge_cents)),
      topUpUrl: `${ctx.config.portalBaseUrl}/balance/top-up`,
    });
    await createMailer(ctx.config).send({
      from: ctx.config.emailFrom,
      to: to.join(', '),
      subject: content.subject,
      text: content.text,
      html: content.html,
      headers: { 'X-Event-Id': alert.event_id },
    });
  };
});

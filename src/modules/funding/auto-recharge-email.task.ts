import { defineTask } from '../../lib/jobs.js';
import { formatCents } from '../../lib/money.js';
import { createMailer } from '../notifications/mailer.js';
import { findOrganization } from '../organizations/organizations.repo.js';
import { renderAutoRechargeFailedEmail } from './auto-recharge-email.template.js';
import * as repo from './auto-recharge.repo.js';

declare global {
  namespace GraphileWorker {
    interface Tasks {
      /** Tells one owner that an automatic recharge failed for good (FUND-36); queued by failAttempt. */
      send_auto_recharge_failed_email: { autoRechargeId: string; email: string };
    }
  }
}

/**
 * Sends the "automatic recharge failed" email to one owner (payload `{autoRechargeId, email}`; one job per owner,
 * queued in the transaction that failed the recharge, FUND-36). Skips a recharge that is not failed. A send failure
 * throws, so graphile-worker retries with backoff.
 */
export const sendAutoRechargeFailedEmailTask = defineTask('send_auto_recharge_failed_email', (ctx) => {
  return async ({ autoRechargeId, email }, helpers) => {
    const recharge = await repo.findRecharge(ctx.pool, autoRechargeId);
    const organization = recharge ? await findOrganization(ctx.pool, recharge.organization_id) : null;
    if (recharge?.status !== 'failed' || !organization) {
      helpers.logger.info(`auto-recharge failure email for ${autoRechargeId} skipped`);
      return;
    }
    const content = renderAutoRechargeFailedEmail({
      orgName: organization.name,
      amount: formatCents(Number(recharge.amount_cents)),
      attempts: recharge.attempts,
      failureMessage: recharge.failure_message ?? 'unknown',
      pageUrl: `${ctx.config.portalBaseUrl}/balance/auto-recharge`,
    });
    await createMailer(ctx.config).send({
      from: ctx.config.emailFrom,
      to: email,
      subject: content.subject,
      text: content.text,
      html: content.html,
    });
  };
});

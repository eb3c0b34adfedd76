import type { Db } from '../../lib/db.js';
import { many, one } from '../../lib/db.js';
import { addJob, defineTask } from '../../lib/jobs.js';
import { createMailer } from '../notifications/mailer.js';
import { renderTopUpReversalEmail, type TopUpReversalPayload } from './reversal-email.template.js';

declare global {
  namespace GraphileWorker {
    interface Tasks {
      /** Tells an organization and the operators of a top-up's money taken or given back; see queueTopUpReversalEmail. */
      send_top_up_reversal_email: TopUpReversalPayload;
    }
  }
}

/** Attempts of one reversal email before graphile-worker gives up (with backoff, about a day). */
const EMAIL_MAX_ATTEMPTS = 12;

/**
 * Queues the emails of FUND-25 in the caller's transaction (the clawback's or the give-back's): a rolled-back
 * reversal emails nothing, a committed one always does. One job per reversal and kind (job key).
 */
export async function queueTopUpReversalEmail(tx: Db, payload: TopUpReversalPayload): Promise<void> {
  await addJob(tx, 'send_top_up_reversal_email', payload, {
    maxAttempts: EMAIL_MAX_ATTEMPTS,
    jobKey: `top-up-reversal:${payload.kind}:${payload.reference}`,
  });
}

/**
 * Sends the email about a top-up's money taken back (dispute, refund) or given back (dispute won) (FUND-25): to the
 * organization's technical contact and its owners in one message, and to every enabled operator in another. A party
 * without any address is skipped. A send failure throws, so graphile-worker retries.
 */
export const sendTopUpReversalEmailTask = defineTask('send_top_up_reversal_email', (ctx) => {
  return async (payload, helpers) => {
    const org = await one<{ id: string; name: string; contact_email: string | null }>(
      ctx.pool,
      `SELECT o.id, o.name, o.contact_email FROM top_ups t JOIN organizations o ON o.id = t.organization_id
        WHERE t.id = $1`,
      [payload.topUpId],
    );
    if (!org) {
      helpers.logger.info(`top-up reversal email for ${payload.topUpId} skipped: no such top-up`);
      return;
    }
    const owners = await many<{ email: string }>(
      ctx.pool,
      `SELECT m.email FROM organization_memberships om JOIN members m ON m.id = om.member_id
        WHERE om.organization_id = $1 AND om.role = 'owner' ORDER BY m.email`,
      [org.id],
    );
    const operators = await many<{ email: string }>(
      ctx.pool,
      'SELECT email FROM operators WHERE disabled_at IS NULL ORDER BY email',
    );
    const integrator = [...new Set([org.contact_email, ...owners.map((o) => o.email)].filter((e): e is string => !!e))];
    const mailer = createMailer(ctx.config);
    const parties = [
      { audience: 'integrator' as const, to: integrator },
      { audience: 'operators' as const, to: operators.map((o) => o.email) },
    ];
    for (const { audience, to } of parties) {
      if (!to.length) continue;
      const content = renderTopUpReversalEmail({
        ...payload,
        orgName: org.name,
        organizationId: org.id,
        audience,
      });
      await mailer.send({
        from: ctx.config.emailFrom,
        to: to.join(', '),
        subject: content.subject,
        text: content.text,
        html: content.html,
        headers: { 'X-Top-Up-Id': payload.topUpId },
      });
    }
  };
});

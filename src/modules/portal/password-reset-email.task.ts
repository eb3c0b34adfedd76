import { one } from '../../lib/db.js';
import { defineTask } from '../../lib/jobs.js';
import { open } from '../../lib/secret-box.js';
import { createMailer } from '../notifications/mailer.js';
import { RESET_TTL_SECONDS, resetSealContext, resetUrl } from './password-reset.service.js';

declare global {
  namespace GraphileWorker {
    interface Tasks {
      /** E-mails a portal password-reset link; queued by requestPasswordReset with the token sealed. */
      send_portal_password_reset: { resetId: string; sealedToken: string };
    }
  }
}

/**
 * Sends the password-reset e-mail of a portal member (PORTAL-9). Skips quietly when the reset was used or has
 * expired meanwhile (nothing to send). A send failure throws, so graphile-worker retries.
 */
export const sendPortalPasswordResetTask = defineTask('send_portal_password_reset', (ctx) => {
  return async ({ resetId, sealedToken }, helpers) => {
    const row = await one<{ email: string; name: string }>(
      ctx.pool,
      `SELECT m.email, m.name FROM portal_password_resets r JOIN members m ON m.id = r.member_id
        WHERE r.id = $1 AND r.used_at IS NULL AND r.expires_at > now()`,
      [resetId],
    );
    if (!row) {
      helpers.logger.info(`password reset ${resetId} no longer open; nothing sent`);
      return;
    }
    const link = resetUrl(ctx, open(ctx.secrets.dataKeys, sealedToken, resetSealContext(resetId)));
    const minutes = RESET_TTL_SECONDS / 60;
    await createMailer(ctx.config).send({
      from: ctx.config.emailFrom,
      to: row.email,
      subject: 'Reset your partner portal password',
      text: [
        `Hello ${row.name},`,
        '',
        'Someone asked to reset the password of your partner portal account. To choose a new one, open:',
        '',
        link,
        '',
        `The link works once, for ${minutes} minutes. If you did not ask, ignore this e-mail: your password stays as it is.`,
      ].join('\n'),
    });
  };
});

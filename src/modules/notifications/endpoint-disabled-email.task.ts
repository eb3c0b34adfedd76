import { defineTask } from '../../lib/jobs.js';
import { createMailer } from './mailer.js';
import * as repo from './notifications.repo.js';
import { renderEndpointDisabledEmail } from './endpoint-disabled-email.template.js';

declare global {
  namespace GraphileWorker {
    interface Tasks {
      /** Tells the technical contact that a webhook endpoint was disabled; queued by queueEndpointDisabledEmail. */
      send_endpoint_disabled_email: { endpointId: string; reason: string };
    }
  }
}

/** How many of the endpoint's most recent attempts the email lists. */
const EMAILED_ATTEMPTS = 5;

/**
 * Sends the "webhook endpoint disabled" email to the organization's technical contact (payload `{endpointId, reason}`;
 * queued by queueEndpointDisabledEmail in the transaction that disabled the endpoint). Skips quietly when the endpoint
 * was deleted or re-enabled meanwhile (the organization already acted) or the contact was removed since. A send failure
 * throws, so graphile-worker retries with backoff up to EMAIL_MAX_ATTEMPTS.
 */
export const sendEndpointDisabledEmailTask = defineTask('send_endpoint_disabled_email', (ctx) => {
  return async (payload, helpers) => {
    const { endpointId, reason } = payload;
    const e = await repo.findDisabledEndpointFacts(ctx.pool, endpointId);
    if (!e || e.deleted || !e.disabled || !e.contact_email) {
      helpers.logger.info(`endpoint-disabled email for ${endpointId} skipped`);
      return;
    }
    const attempts = await repo.listRecentAttempts(ctx.pool, endpointId, EMAILED_ATTEMPTS);
    const content = renderEndpointDisabledEmail({
      orgName: e.org_name,
      endpointId: e.id,
      url: e.url,
      environment: e.environment,
      reason,
      failingSince: e.failing_since?.toISOString() ?? null,
      lastAttempts: attempts.map((a) => ({
        at: a.created_at.toISOString(),
        statusCode: a.status_code,
        error: a.error,
        eventType: a.type,
      })),
      apiBaseUrl: e.environment === 'live' ? ctx.config.liveBaseUrl : ctx.config.testBaseUrl,
    });
    await createMailer(ctx.config).send({
      from: ctx.config.emailFrom,
      to: e.contact_email,
      subject: content.subject,
      text: content.text,
      html: content.html,
      headers: { 'X-Webhook-Endpoint-Id': e.id },
    });
  };
});

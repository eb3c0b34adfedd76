import { many, one } from '../../lib/db.js';
import { defineTask } from '../../lib/jobs.js';
import { createMailer } from './mailer.js';
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
export const EMAILED_ATTEMPTS = 5;

interface EndpointFacts {
  id: string;
  url: string;
  environment: 'live' | 'test';
  disabled: boolean;
  deleted: boolean;
  failing_since: Date | null;
  org_name: string;
  contact_email: string | null;
}

/**
 * Sends the "webhook endpoint disabled" email to the organization's technical contact (payload `{endpointId, reason}`;
 * queued by queueEndpointDisabledEmail in the transaction that disabled the endpoint). Skips quietly when the endpoint
 * was deleted or re-enabled meanwhile (the organization already acted) or the contact was removed since. A send failure
 * throws, so graphile-worker retries with backoff up to EMAIL_MAX_ATTEMPTS.
 */
export const sendEndpointDisabledEmailTask = defineTask('send_endpoint_disabled_email', (ctx) => {
  return async (payload, helpers) => {
    const { endpointId, reason } = payload;
    const e = await one<EndpointFacts>(
      ctx.pool,
      `SELECT e.id, e.url, e.environment, e.disabled, e.deleted_at IS NOT NULL AS deleted, e.failing_since, o.name AS org_name, o.contact_email
         FROM webhook_endpoints e JOIN organizations o ON o.id = e.organization_id
        WHERE e.id = $1`,
      [endpointId],
    );
    if (!e || e.deleted || !e.disabled || !e.contact_email) {
      helpers.logger.info(`endpoint-disabled email for ${endpointId} skipped`);
      return;
    }
    const attempts = await many<{ created_at: Date; status_code: number | null; error: string | null; type: string }>(
      ctx.pool,
      `SELECT a.created_at, a.status_code, a.error, ev.type
         FROM webhook_deliveries d JOIN webhook_attempts a ON a.delivery_id = d.id JOIN events ev ON ev.id = d.event_id
        WHERE d.endpoint_id = $1 ORDER BY a.created_at DESC, a.id DESC LIMIT $2`,
      [endpointId, EMAILED_ATTEMPTS],
    );
    const content = renderEndpointDisabledEmail({
      orgName: e.org_name, endpointId: e.id, url: e.url, environment: e.environment, reason,
      failingSince: e.failing_since?.toISOString() ?? null,
      lastAttempts: attempts.map((a) => ({ at: a.created_at.toISOString(), statusCode: a.status_code, error: a.error, eventType: a.type })),
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

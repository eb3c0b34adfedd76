import { defineTask } from '../../lib/jobs.js';
import { domainRecord } from '../organizations/domain-verification.js';
import { findOrganization } from '../organizations/organizations.repo.js';
import { renderDomainLapsedEmail } from './domain-lapsed-email.template.js';
import { createMailer } from './mailer.js';

declare global {
  namespace GraphileWorker {
    interface Tasks {
      /** Tells the technical contact that a white-label domain was taken out of use; queued by queueDomainLapsedEmail. */
      send_domain_lapsed_email: { organizationId: string; domain: string };
    }
  }
}

/**
 * Sends the "white-label domain taken out of use" email to the organization's technical contact (payload
 * `{organizationId, domain}`; queued in the transaction of the daily re-check that took the domain out of use, ORG-6).
 * Skips quietly when the organization has verified or changed its domain meanwhile (it already acted) or has no
 * contact any more. A send failure throws, so graphile-worker retries with backoff up to EMAIL_MAX_ATTEMPTS.
 */
export const sendDomainLapsedEmailTask = defineTask('send_domain_lapsed_email', (ctx) => {
  return async ({ organizationId, domain }, helpers) => {
    const o = await findOrganization(ctx.pool, organizationId);
    if (
      !o?.contact_email ||
      o.white_label_domain !== domain ||
      !o.white_label_domain_token ||
      o.white_label_domain_verified_at
    ) {
      helpers.logger.info(`domain-lapsed email for ${organizationId} skipped`);
      return;
    }
    const content = renderDomainLapsedEmail({
      orgName: o.name,
      domain,
      ...domainRecord(domain, o.white_label_domain_token),
      dashboardBaseUrl: ctx.config.dashboardBaseUrl,
      liveBaseUrl: ctx.config.liveBaseUrl,
    });
    await createMailer(ctx.config).send({
      from: ctx.config.emailFrom,
      to: o.contact_email,
      subject: content.subject,
      text: content.text,
      html: content.html,
    });
  };
});

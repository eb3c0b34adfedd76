import type { Tenant } from '../../context.js';
import type { Db } from '../../lib/db.js';
import { addJob } from '../../lib/jobs.js';
import * as repo from './notifications.repo.js';

/** Attempts before graphile-worker gives up on an email (its exponential backoff spans about a day). */
const EMAIL_MAX_ATTEMPTS = 12;

/**
 * Queues the "new document" email for every admin of the document's company, in the caller's transaction
 * (the one that stores the document and emits `document.uploaded`), when the organization has email
 * notifications on (DOC-6: users may be emailed). One job per recipient, so a retry
 * never re-sends to someone already served; the job key makes a repeated call harmless. Sending never blocks
 * the request: the worker does it.
 * @returns how many emails were queued.
 */
export async function queueDocumentEmail(tx: Db, tenant: Tenant, documentId: string): Promise<number> {
  const recipients = await repo.findDocumentEmailRecipients(tx, tenant, documentId);
  for (const { user_id: userId } of recipients) {
    await addJob(
      tx,
      'send_document_email',
      { documentId, userId },
      { maxAttempts: EMAIL_MAX_ATTEMPTS, jobKey: `document-email:${documentId}:${userId}` },
    );
  }
  return recipients.length;
}

/**
 * Queues the "webhook endpoint disabled" email to the organization's technical contact (`contact_email`), in the
 * caller's transaction: the one in which the delivery policy disabled the endpoint (WH-6, WH-7: an
 * endpoint that keeps failing is disabled and the organization is told), so a rolled-back disable sends nothing and
 * a committed one is always told. Call it once per disable (when the endpoint went from enabled to disabled).
 * `reason` is the endpoint's disabled_reason as just written (410 Gone, or failing since …).
 * @returns the address the job will email, or null when the organization has no contact (nothing queued: the caller
 *   logs instead).
 */
export async function queueEndpointDisabledEmail(tx: Db, endpointId: string, reason: string): Promise<string | null> {
  const row = await repo.findEndpointContact(tx, endpointId);
  if (!row) return null;
  await addJob(tx, 'send_endpoint_disabled_email', { endpointId, reason }, { maxAttempts: EMAIL_MAX_ATTEMPTS });
  return row.contact_email;
}

/**
 * Queues the "white-label domain taken out of use" email to the organization's technical contact (`contact_email`),
 * in the caller's transaction: the one in which the daily re-check took the domain out of use (ORG-6), so a
 * rolled-back lapse sends nothing and a committed one is always told.
 * @returns the address the job will email, or null when the organization has no contact (nothing queued: the caller
 *   logs instead).
 */
export async function queueDomainLapsedEmail(tx: Db, organizationId: string, domain: string): Promise<string | null> {
  const row = await repo.findOrganizationContact(tx, organizationId);
  if (!row) return null;
  await addJob(tx, 'send_domain_lapsed_email', { organizationId, domain }, { maxAttempts: EMAIL_MAX_ATTEMPTS });
  return row.contact_email;
}

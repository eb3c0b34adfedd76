import type { Tenant } from '../../context.js';
import type { Db } from '../../lib/db.js';

/** graphile-worker task that emails one company admin about one new document (payload `{documentId, userId}`). */
export const SEND_DOCUMENT_EMAIL_TASK = 'send_document_email';
/** Attempts before graphile-worker gives up on an email (its exponential backoff spans about a day). */
export const EMAIL_MAX_ATTEMPTS = 12;

/**
 * Queues the "new document" email for every admin of the document's company, in the caller's transaction
 * (the one that stores the document and emits `document.uploaded`), when the organization has email
 * notifications on (issue 5 item 7; spec "Events": users may be emailed). One job per recipient, so a retry
 * never re-sends to someone already served; the job key makes a repeated call harmless. Sending never blocks
 * the request: the worker does it.
 * @returns how many emails were queued.
 */
export async function queueDocumentEmail(tx: Db, tenant: Tenant, documentId: string): Promise<number> {
  const { rowCount } = await tx.query(
    `SELECT graphile_worker.add_job($4, json_build_object('documentId', d.id, 'userId', a.user_id),
                                    max_attempts := $5, job_key := 'document-email:' || d.id || ':' || a.user_id)
       FROM documents d
       JOIN organizations o ON o.id = d.organization_id AND o.email_notifications
       JOIN company_admins a ON a.company_id = d.company_id
      WHERE d.id = $1 AND d.organization_id = $2 AND d.environment = $3`,
    [documentId, tenant.organizationId, tenant.environment, SEND_DOCUMENT_EMAIL_TASK, EMAIL_MAX_ATTEMPTS],
  );
  return rowCount ?? 0;
}

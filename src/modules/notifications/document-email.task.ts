import { one } from '../../lib/db.js';
import { defineTask } from '../../lib/jobs.js';
import { brandTheme } from '../dashboard/theme.js';
import { ORDER_TYPE_LABELS, formatDate, presentDocument } from '../dashboard/presenters.js';
import { createMailer, fromHeader } from './mailer.js';
import { renderDocumentEmail } from './document-email.template.js';

declare global {
  namespace GraphileWorker {
    interface Tasks {
      /** Emails one company admin about one new document; queued by queueDocumentEmail. */
      send_document_email: { documentId: string; userId: string };
    }
  }
}

interface EmailFacts {
  document_id: string;
  document_type: string;
  file_name: string;
  file_type: string;
  size_bytes: number;
  created_at: Date;
  company_id: string;
  order_type: string | null;
  legal_name: string;
  org_name: string;
  branding: { primaryColor?: string | null; logoUrl?: string | null };
  email_notifications: boolean;
  full_name: string;
  email: string;
  still_admin: boolean;
}

/**
 * Sends the "new document" email to one admin (payload `{documentId, userId}`; queued by queueDocumentEmail).
 * Skips quietly when the document, user or admin right is gone or notifications were switched off since.
 * A send failure throws, so graphile-worker retries with backoff up to EMAIL_MAX_ATTEMPTS.
 */
export const sendDocumentEmailTask = defineTask('send_document_email', (ctx) => {
  return async (payload, helpers) => {
    const { documentId, userId } = payload;
    const facts = await one<EmailFacts>(
      ctx.pool,
      `SELECT d.id AS document_id, d.document_type, d.file_name, d.file_type, d.size_bytes, d.created_at, d.company_id, o.order_type,
              c.legal_name, org.name AS org_name, org.branding, org.email_notifications, u.full_name, u.email,
              EXISTS (SELECT 1 FROM company_admins a WHERE a.company_id = d.company_id AND a.user_id = u.id) AS still_admin
         FROM documents d
         JOIN companies c ON c.id = d.company_id
         JOIN organizations org ON org.id = d.organization_id
         JOIN users u ON u.id = $2 AND u.organization_id = d.organization_id AND u.environment = d.environment
         LEFT JOIN orders o ON o.id = d.order_id
        WHERE d.id = $1`,
      [documentId, userId],
    );
    if (!facts || !facts.email_notifications || !facts.still_admin) {
      helpers.logger.info(`document email ${documentId} -> ${userId} skipped`);
      return;
    }
    const doc = presentDocument({ id: facts.document_id, company_id: facts.company_id, order_id: null, document_type: facts.document_type, file_name: facts.file_name, file_type: facts.file_type, size_bytes: facts.size_bytes, created_at: facts.created_at });
    const content = renderDocumentEmail({
      orgName: facts.org_name, brandColor: brandTheme(facts.branding ?? {}).link, recipientName: facts.full_name, companyName: facts.legal_name,
      documentTitle: doc.type, fileName: facts.file_name, addedOn: formatDate(facts.created_at), orderLabel: facts.order_type ? ORDER_TYPE_LABELS[facts.order_type] ?? null : null,
    });
    await createMailer(ctx.config).send({
      from: fromHeader(ctx.config.emailFrom, facts.org_name),
      to: { name: facts.full_name, address: facts.email },
      subject: content.subject,
      text: content.text,
      html: content.html,
      headers: { 'X-Document-Id': facts.document_id },
    });
  };
});

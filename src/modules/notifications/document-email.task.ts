import { defineTask } from '../../lib/jobs.js';
import { brandTheme } from '../branding/theme.js';
import { ORDER_TYPE_LABELS, formatDate, presentDocument } from '../branding/wording.js';
import { createMailer, fromHeader } from './mailer.js';
import * as repo from './notifications.repo.js';
import { renderDocumentEmail } from './document-email.template.js';

declare global {
  namespace GraphileWorker {
    interface Tasks {
      /** Emails one company admin about one new document; queued by queueDocumentEmail. */
      send_document_email: { documentId: string; userId: string };
    }
  }
}

/**
 * Sends the "new document" email to one admin (payload `{documentId, userId}`; queued by queueDocumentEmail).
 * Skips quietly when the document, user or admin right is gone or notifications were switched off since.
 * A send failure throws, so graphile-worker retries with backoff up to EMAIL_MAX_ATTEMPTS.
 */
export const sendDocumentEmailTask = defineTask('send_document_email', (ctx) => {
  return async (payload, helpers) => {
    const { documentId, userId } = payload;
    const facts = await repo.findDocumentEmailFacts(ctx.pool, documentId, userId);
    if (!facts?.email_notifications || !facts.still_admin) {
      helpers.logger.info(`document email ${documentId} -> ${userId} skipped`);
      return;
    }
    const doc = presentDocument({
      id: facts.document_id,
      document_type: facts.document_type,
      file_name: facts.file_name,
      size_bytes: facts.size_bytes,
      created_at: facts.created_at,
    });
    const content = renderDocumentEmail({
      orgName: facts.org_name,
      brandColor: brandTheme(facts.branding ?? {}).link,
      recipientName: facts.full_name,
      companyName: facts.legal_name,
      documentTitle: doc.type,
      fileName: facts.file_name,
      addedOn: formatDate(facts.created_at),
      orderLabel: facts.order_type ? (ORDER_TYPE_LABELS[facts.order_type] ?? null) : null,
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

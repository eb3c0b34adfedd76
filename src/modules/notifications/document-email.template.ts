/** What the "new document" email says; every value is plain text (escaped for HTML here). */
export interface DocumentEmailFacts {
  orgName: string;
  /** Link/heading colour with AA contrast on white ('#rrggbb'). */
  brandColor: string;
  recipientName: string;
  companyName: string;
  documentTitle: string;
  fileName: string;
  addedOn: string;
  orderLabel: string | null;
}

const esc = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/**
 * Subject, text and HTML of the email sent to company admins when a document arrives (DOC-6).
 * It carries no link with a credential: customers open their dashboard through the organization.
 */
export function renderDocumentEmail(f: DocumentEmailFacts): { subject: string; text: string; html: string } {
  const subject = `New document for ${f.companyName}: ${f.documentTitle}`;
  const about = f.orderLabel ? ` for your ${f.orderLabel.toLowerCase()} order` : '';
  const text = [
    `Hello ${f.recipientName},`,
    '',
    `A new document arrived for ${f.companyName}${about}:`,
    '',
    `  ${f.documentTitle}: ${f.fileName} (${f.addedOn})`,
    '',
    `You can download it from your ${f.orgName} dashboard.`,
    '',
    `${f.orgName}`,
  ].join('\n');
  const html = `<!doctype html><html><body style="margin:0;padding:24px;background:#f5f6f8;font-family:Arial,Helvetica,sans-serif;color:#1f2933">
<table role="presentation" width="100%" style="max-width:560px;margin:0 auto;background:#ffffff;border:1px solid #e1e5ea;border-radius:12px">
<tr><td style="padding:24px 28px">
<p style="margin:0 0 16px;font-weight:bold;color:${f.brandColor}">${esc(f.orgName)}</p>
<h1 style="margin:0 0 12px;font-size:20px">A new document for ${esc(f.companyName)}</h1>
<p>Hello ${esc(f.recipientName)},</p>
<p>A new document arrived${esc(about)}:</p>
<p style="padding:12px 16px;background:#f5f6f8;border-radius:8px"><strong>${esc(f.documentTitle)}</strong><br>${esc(f.fileName)} &middot; ${esc(f.addedOn)}</p>
<p>You can download it from your ${esc(f.orgName)} dashboard.</p>
</td></tr></table></body></html>`;
  return { subject, text, html };
}

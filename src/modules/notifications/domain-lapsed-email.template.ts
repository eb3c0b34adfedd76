import validator from 'validator';

/** What the "white-label domain taken out of use" email says; every value is plain text (escaped for HTML here). */
export interface DomainLapsedFacts {
  orgName: string;
  /** The domain taken out of use, e.g. portal.example.com. */
  domain: string;
  /** The TXT record to publish again: its name and value. */
  recordName: string;
  recordValue: string;
  /** Where magic links and the dashboard point meanwhile (DASHBOARD_BASE_URL), without a trailing slash. */
  dashboardBaseUrl: string;
  /** LIVE_BASE_URL, without a trailing slash: where the organization verifies the domain again. */
  liveBaseUrl: string;
}

const esc = (s: string) => validator.escape(s);

/**
 * Subject, text and HTML of the email to an organization's technical contact when the daily re-check found its
 * white-label domain's TXT record gone and took the domain out of use (ORG-6): what changed for its customers, and
 * how to put the domain back (publish the record, then POST /organization/white-label-domain/verify). No secret.
 */
export function renderDomainLapsedEmail(f: DomainLapsedFacts): { subject: string; text: string; html: string } {
  const subject = `White-label domain taken out of use: ${f.domain}`;
  const verifyUrl = `${f.liveBaseUrl}/organization/white-label-domain/verify`;
  const what = `The white-label domain ${f.domain} of ${f.orgName} no longer has its verification record, so it was taken out of use. Sign-in links and the dashboard now use ${f.dashboardBaseUrl}; ${f.domain} no longer serves your customers, and the sessions started there were signed out.`;
  const text = [
    'Hello,',
    '',
    what,
    '',
    'If you still control the domain, publish this DNS record again:',
    '',
    `  Type:  TXT`,
    `  Name:  ${f.recordName}`,
    `  Value: ${f.recordValue}`,
    '',
    `then verify it with POST ${verifyUrl} (your live secret key). Keep the record published: the domain is checked every day.`,
    '',
    'If you gave the domain up, remove it with PATCH /organization and {"whiteLabelDomain": null}.',
    '',
    'You receive this email as the technical contact of your organization (contactEmail, changed with PATCH /organization).',
  ].join('\n');
  const html = `<!doctype html><html><body style="margin:0;padding:24px;background:#f5f6f8;font-family:Arial,Helvetica,sans-serif;color:#1f2933">
<table role="presentation" width="100%" style="max-width:640px;margin:0 auto;background:#ffffff;border:1px solid #e1e5ea;border-radius:12px">
<tr><td style="padding:24px 28px">
<h1 style="margin:0 0 12px;font-size:20px;color:#b42318">White-label domain taken out of use</h1>
<p>${esc(what)}</p>
<h2 style="font-size:16px;margin:16px 0 8px">Put it back</h2>
<p>If you still control the domain, publish this DNS record again:</p>
<table role="presentation" style="border-collapse:collapse;margin:12px 0">
<tr><td style="padding:2px 12px 2px 0;color:#52606d">Type</td><td style="font-family:monospace">TXT</td></tr>
<tr><td style="padding:2px 12px 2px 0;color:#52606d">Name</td><td style="font-family:monospace;word-break:break-all">${esc(f.recordName)}</td></tr>
<tr><td style="padding:2px 12px 2px 0;color:#52606d">Value</td><td style="font-family:monospace;word-break:break-all">${esc(f.recordValue)}</td></tr>
</table>
<p>then verify it with <code>POST ${esc(verifyUrl)}</code> (your live secret key). Keep the record published: the domain is checked every day.</p>
<p>If you gave the domain up, remove it with <code>PATCH /organization</code> and <code>{"whiteLabelDomain": null}</code>.</p>
<p style="color:#52606d;font-size:13px">You receive this email as the technical contact of your organization (contactEmail, changed with PATCH /organization).</p>
</td></tr></table></body></html>`;
  return { subject, text, html };
}

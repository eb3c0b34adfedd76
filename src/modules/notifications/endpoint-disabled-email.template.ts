import validator from 'validator';

/** One recent HTTP try of the endpoint, newest first in `EndpointDisabledFacts.lastAttempts`. */
interface AttemptLine {
  /** ISO 8601. */
  at: string;
  /** null: no HTTP answer (timeout, refused connection, unsafe address). */
  statusCode: number | null;
  error: string | null;
  eventType: string;
}

/** What the "webhook endpoint disabled" email says; every value is plain text (escaped for HTML here). */
export interface EndpointDisabledFacts {
  orgName: string;
  endpointId: string;
  url: string;
  environment: 'live' | 'test';
  /** The endpoint's disabled_reason: "The endpoint answered 410 Gone" or "Every delivery has failed since …". */
  reason: string;
  /** ISO 8601 start of the failure streak, when one was running. */
  failingSince: string | null;
  lastAttempts: AttemptLine[];
  /** API base address of the endpoint's environment (LIVE_BASE_URL or TEST_BASE_URL), without a trailing slash. */
  apiBaseUrl: string;
}

const esc = (s: string) => validator.escape(s);

/** "HTTP 410", or "no response (Timed out after 10000 ms)". */
function attemptResult(a: Pick<AttemptLine, 'statusCode' | 'error'>): string {
  return a.statusCode !== null ? `HTTP ${a.statusCode}` : `no response${a.error ? ` (${a.error})` : ''}`;
}

/**
 * Subject, text and HTML of the email to an organization's technical contact when the delivery policy disabled one
 * of its webhook endpoints (WH-7): which endpoint, why, the last attempts' results and how to
 * re-enable it (`PATCH /webhook-endpoints/{id}` with `{"disabled": false}`). It carries no secret.
 */
export function renderEndpointDisabledEmail(f: EndpointDisabledFacts): { subject: string; text: string; html: string } {
  const mode = f.environment === 'test' ? ' (test mode)' : '';
  const subject = `Webhook endpoint disabled${mode}: ${f.url}`;
  const patchUrl = `${f.apiBaseUrl}/webhook-endpoints/${f.endpointId}`;
  const curl = [
    `curl -X PATCH ${patchUrl} \\`,
    `  -H "x-api-key: <your ${f.environment} secret key>" \\`,
    '  -H "content-type: application/json" \\',
    `  -d '{"disabled": false}'`,
  ];
  const attempts = f.lastAttempts.map((a) => `${a.at}  ${attemptResult(a)}  ${a.eventType}`);
  const text = [
    'Hello,',
    '',
    `A webhook endpoint of ${f.orgName} in the ${f.environment} environment was disabled. It receives no events until it is re-enabled.`,
    '',
    `  Endpoint:      ${f.endpointId}`,
    `  URL:           ${f.url}`,
    `  Environment:   ${f.environment}`,
    `  Reason:        ${f.reason}`,
    ...(f.failingSince ? [`  Failing since: ${f.failingSince}`] : []),
    '',
    'Last attempts (newest first):',
    ...(attempts.length ? attempts.map((l) => `  ${l}`) : ['  none recorded']),
    '',
    'Once the receiver answers 2xx again, re-enable the endpoint with PATCH /webhook-endpoints/{id} and the body {"disabled": false}:',
    '',
    ...curl.map((l) => `  ${l}`),
    '',
    'Events that occurred while it was disabled were not delivered to it; GET /webhook-deliveries?endpointId=' +
      f.endpointId +
      '&status=failed lists the failed deliveries, and POST /webhook-deliveries/{id}/resend sends one again.',
    '',
    'You receive this email as the technical contact of your organization (contactEmail, changed with PATCH /organization).',
  ].join('\n');
  const rows = f.lastAttempts
    .map(
      (a) =>
        `<tr><td style="padding:4px 8px;font-family:monospace">${esc(a.at)}</td><td style="padding:4px 8px"><strong>${esc(attemptResult(a))}</strong></td><td style="padding:4px 8px">${esc(a.eventType)}</td></tr>`,
    )
    .join('');
  const html = `<!doctype html><html><body style="margin:0;padding:24px;background:#f5f6f8;font-family:Arial,Helvetica,sans-serif;color:#1f2933">
<table role="presentation" width="100%" style="max-width:640px;margin:0 auto;background:#ffffff;border:1px solid #e1e5ea;border-radius:12px">
<tr><td style="padding:24px 28px">
<h1 style="margin:0 0 12px;font-size:20px;color:#b42318">Webhook endpoint disabled${esc(mode)}</h1>
<p>A webhook endpoint of ${esc(f.orgName)} in the <strong>${esc(f.environment)}</strong> environment was disabled. It receives no events until it is re-enabled.</p>
<table role="presentation" style="border-collapse:collapse;margin:12px 0">
<tr><td style="padding:2px 12px 2px 0;color:#52606d">Endpoint</td><td style="font-family:monospace">${esc(f.endpointId)}</td></tr>
<tr><td style="padding:2px 12px 2px 0;color:#52606d">URL</td><td style="font-family:monospace;word-break:break-all">${esc(f.url)}</td></tr>
<tr><td style="padding:2px 12px 2px 0;color:#52606d">Reason</td><td>${esc(f.reason)}</td></tr>
${f.failingSince ? `<tr><td style="padding:2px 12px 2px 0;color:#52606d">Failing since</td><td>${esc(f.failingSince)}</td></tr>` : ''}
</table>
<h2 style="font-size:16px;margin:16px 0 8px">Last attempts</h2>
${rows ? `<table role="presentation" style="border-collapse:collapse;border:1px solid #e1e5ea">${rows}</table>` : '<p>None recorded.</p>'}
<h2 style="font-size:16px;margin:16px 0 8px">Re-enable it</h2>
<p>Once the receiver answers 2xx again, send <code>PATCH /webhook-endpoints/${esc(f.endpointId)}</code> with the body <code>{"disabled": false}</code>:</p>
<pre style="padding:12px 16px;background:#f5f6f8;border-radius:8px;white-space:pre-wrap">${esc(curl.join('\n'))}</pre>
<p>Events that occurred while it was disabled were not delivered to it; list the failed deliveries with <code>GET /webhook-deliveries?endpointId=${esc(f.endpointId)}&amp;status=failed</code> and send one again with <code>POST /webhook-deliveries/{id}/resend</code>.</p>
<p style="color:#52606d;font-size:13px">You receive this email as the technical contact of your organization (contactEmail, changed with PATCH /organization).</p>
</td></tr></table></body></html>`;
  return { subject, text, html };
}

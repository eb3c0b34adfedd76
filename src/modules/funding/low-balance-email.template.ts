import validator from 'validator';

/** What the low-balance email says (FUND-28); every value is plain text (escaped for HTML here). */
export interface LowBalanceEmailFacts {
  orgName: string;
  /** The live balance right after the debit that crossed, formatted (e.g. $42.10; may be negative). */
  balance: string;
  /** The threshold crossed, formatted. */
  threshold: string;
  /** The ledger entry that crossed (txn_…), or null. */
  balanceTransactionId: string | null;
  /** The automatic recharge the crossing started, formatted, or null when none was started. */
  recharge: string | null;
  /** The portal page to add funds (PORTAL_BASE_URL + /balance/top-up). */
  topUpUrl: string;
}

const esc = (s: string) => validator.escape(s);

/**
 * Subject, text and HTML of the email to an organization's billing contacts when a debit took its live balance below
 * the low-balance threshold (FUND-28): the balance after the debit, the threshold, whether an automatic recharge was
 * started, and where to add funds. Sent once per crossing; amounts in dollars, already formatted.
 */
export function renderLowBalanceEmail(f: LowBalanceEmailFacts): { subject: string; text: string; html: string } {
  const subject = `Low balance: ${f.orgName}'s live balance is ${f.balance}, below ${f.threshold}`;
  const what = `A debit${f.balanceTransactionId ? ` (${f.balanceTransactionId})` : ''} took the live prepaid balance of ${f.orgName} below its low-balance threshold of ${f.threshold}: it is now ${f.balance}.`;
  const next = f.recharge
    ? `An automatic recharge of ${f.recharge} was started; you will not be emailed again until the balance has been at or above the threshold and falls below it once more.`
    : 'Orders are refused (402) once the balance cannot cover them. Add funds on the page below; you will not be emailed again until the balance has been at or above the threshold and falls below it once more.';
  const footer =
    "You receive this email as the organization's technical contact or an owner. The threshold is changed with PATCH /organization (lowBalanceThreshold).";
  const text = ['Hello,', '', what, '', next, '', f.topUpUrl, '', footer].join('\n');
  const html = `<!doctype html><html><body style="margin:0;padding:24px;background:#f5f6f8;font-family:Arial,Helvetica,sans-serif;color:#1f2933">
<table role="presentation" width="100%" style="max-width:640px;margin:0 auto;background:#ffffff;border:1px solid #e1e5ea;border-radius:12px">
<tr><td style="padding:24px 28px">
<h1 style="margin:0 0 12px;font-size:20px">Your balance is running low</h1>
<p>${esc(what)}</p>
<p>${esc(next)}</p>
<p><a href="${esc(f.topUpUrl)}">Add funds</a></p>
<p style="color:#52606d;font-size:13px">${esc(footer)}</p>
</td></tr></table></body></html>`;
  return { subject, text, html };
}

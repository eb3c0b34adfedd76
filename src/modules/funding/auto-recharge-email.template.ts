import validator from 'validator';

/** What the "automatic recharge failed" email says; every value is plain text (escaped for HTML here). */
export interface AutoRechargeFailedFacts {
  orgName: string;
  /** The recharge's amount, formatted (e.g. $500.00). */
  amount: string;
  attempts: number;
  failureMessage: string;
  /** The portal page of auto-recharge (PORTAL_BASE_URL + /balance/auto-recharge). */
  pageUrl: string;
}

const esc = (s: string) => validator.escape(s);

/**
 * Subject, text and HTML of the email to each owner when an automatic recharge failed three times (FUND-36): nothing
 * was credited, auto-recharge is off, and how to resume it (save a payment method again, or turn it back on). No
 * secret and no payment details.
 */
export function renderAutoRechargeFailedEmail(f: AutoRechargeFailedFacts): {
  subject: string;
  text: string;
  html: string;
} {
  const subject = `Automatic recharge failed: ${f.orgName}'s live balance was not refilled`;
  const what = `The automatic recharge of ${f.amount} for the live balance of ${f.orgName} failed ${f.attempts} times, so nothing was added and auto-recharge is now off. Last answer from the payment provider: ${f.failureMessage}`;
  const next =
    'Orders are refused (402) once the balance cannot cover them. Save a card or bank account again, or turn auto-recharge back on, on the page below; you can also add funds with a top-up.';
  const text = [
    'Hello,',
    '',
    what,
    '',
    next,
    '',
    f.pageUrl,
    '',
    'You receive this email as an owner of the organization.',
  ].join('\n');
  const html = `<!doctype html><html><body style="margin:0;padding:24px;background:#f5f6f8;font-family:Arial,Helvetica,sans-serif;color:#1f2933">
<table role="presentation" width="100%" style="max-width:640px;margin:0 auto;background:#ffffff;border:1px solid #e1e5ea;border-radius:12px">
<tr><td style="padding:24px 28px">
<h1 style="margin:0 0 12px;font-size:20px;color:#b42318">Automatic recharge failed</h1>
<p>${esc(what)}</p>
<p>${esc(next)}</p>
<p><a href="${esc(f.pageUrl)}">${esc(f.pageUrl)}</a></p>
<p style="color:#52606d;font-size:13px">You receive this email as an owner of the organization.</p>
</td></tr></table></body></html>`;
  return { subject, text, html };
}

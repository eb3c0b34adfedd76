import validator from 'validator';
import { formatCents } from '../../lib/money.js';

/** What one top-up reversal email job says (FUND-25): cents, the balance after may be below zero. */
export interface TopUpReversalPayload {
  topUpId: string;
  kind: 'taken_back' | 'given_back';
  reason: 'dispute' | 'refund';
  /** The Stripe dispute or refund. */
  reference: string;
  /** Cents moved, > 0. */
  amountCents: number;
  /** The balance right after, in cents; may be below zero. */
  balanceAfterCents: number;
}

/** What the email about a disputed, refunded or won-back top-up says (FUND-25); plain text, escaped for HTML here. */
interface TopUpReversalFacts extends TopUpReversalPayload {
  orgName: string;
  organizationId: string;
  /** Who reads it: the organization (what to do) or the operators (what to follow up). */
  audience: 'integrator' | 'operators';
}

const esc = (s: string) => validator.escape(s);

/**
 * Subject, text and HTML of the email telling an organization's contacts, or the operators, that a top-up's money was
 * taken back after a dispute or refund, or given back after a won dispute (FUND-25). Amounts in dollars.
 */
export function renderTopUpReversalEmail(f: TopUpReversalFacts): { subject: string; text: string; html: string } {
  const amount = formatCents(f.amountCents);
  const balance = formatCents(f.balanceAfterCents);
  const what =
    f.kind === 'given_back'
      ? `Dispute ${f.reference} of top-up ${f.topUpId} was closed in the platform's favour: ${amount} was credited to the live balance of ${f.orgName} again, which is now ${balance}.`
      : `The payment of top-up ${f.topUpId} was ${f.reason === 'dispute' ? `disputed (${f.reference})` : `refunded (${f.reference})`}: ${amount} was taken back from the live balance of ${f.orgName}, which is now ${balance}.`;
  const next =
    f.audience === 'operators'
      ? `Organization ${f.organizationId}. Follow it up in Stripe${f.kind === 'taken_back' && f.reason === 'dispute' ? ' (answer the dispute with evidence before its deadline)' : ''} and with the organization.`
      : f.balanceAfterCents < 0
        ? 'While the balance is below zero every order answers 402 insufficient_balance: add funds to place orders again.'
        : 'Orders are paid from this balance as before.';
  const subject =
    f.kind === 'given_back'
      ? `Dispute won: ${amount} given back to the balance`
      : `Top-up ${f.reason === 'dispute' ? 'disputed' : 'refunded'}: ${amount} taken back from the balance`;
  const text = ['Hello,', '', what, '', next].join('\n');
  const html = `<!doctype html><html><body style="margin:0;padding:24px;background:#f5f6f8;font-family:Arial,Helvetica,sans-serif;color:#1f2933">
<table role="presentation" width="100%" style="max-width:640px;margin:0 auto;background:#ffffff;border:1px solid #e1e5ea;border-radius:12px">
<tr><td style="padding:24px 28px">
<h1 style="margin:0 0 12px;font-size:20px">${esc(subject)}</h1>
<p>${esc(what)}</p>
<p>${esc(next)}</p>
</td></tr></table></body></html>`;
  return { subject, text, html };
}

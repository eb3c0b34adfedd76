import type { FastifyBaseLogger } from 'fastify';
import type Stripe from 'stripe';
import type { Tenant } from '../../context.js';
import type { Db } from '../../lib/db.js';
import { appendLedgerEntry } from '../billing/ledger.js';
import { clawbackPosted, ledgerEntryByReference } from '../billing/billing.repo.js';
import { emitEvent } from '../events/events.service.js';
import type { HostedPaymentReport } from '../payments/payment-provider.js';
import { PAYMENT_CURRENCY, type HostedPaymentProvider } from '../payments/payment-provider.js';
import * as repo from './top-ups.repo.js';
import { creditTopUp } from './top-ups.service.js';
import { topUpFailedEvent, topUpMoneyEvent } from './top-ups.views.js';
import { queueTopUpReversalEmail } from './reversal-email.task.js';

/*
 * What Stripe's signed events do to top-ups (FUND-4..FUND-6, FUND-10..FUND-13). Each runs inside the transaction that
 * records the event id (payment_provider_events), so an event is acted on once however often Stripe sends it, and the
 * top-up's row lock serialises different events about one top-up.
 */

/** What handling one event did to a top-up, for the log line (the webhook answers 200 either way). */
export interface FundingOutcome {
  result:
    | 'credited'
    | 'processing'
    | 'failed'
    | 'expired'
    | 'refunded'
    | 'unchanged'
    | 'taken_back'
    | 'given_back'
    | 'not_a_top_up';
  topUpId: string | null;
}

const tenantOf = (t: repo.TopUpRow): Tenant => ({ organizationId: t.organization_id, environment: t.environment });

/**
 * Applies a Checkout Session report to the top-up of that session, in the caller's transaction (FUND-4, FUND-5):
 * paid (card at completion, bank debit by async_payment_succeeded) credits the balance once; completed unpaid waits
 * (processing); async_payment_failed credits nothing, marks the top-up failed and emits `balance.top_up_failed`;
 * expired marks it expired. A settled top-up is left as it is. A paid amount or currency other than asked is refunded
 * in full, never credited (FUND-6).
 * @returns null when the session is not a top-up's (a dashboard checkout's, or unknown).
 * @throws when Stripe refuses that refund: the transaction rolls back and Stripe delivers the event again.
 */
export async function settleTopUpSession(
  tx: Db,
  provider: HostedPaymentProvider,
  report: HostedPaymentReport,
  log: FastifyBaseLogger,
): Promise<FundingOutcome | null> {
  const topUp = await repo.lockBySession(tx, report.sessionId);
  if (!topUp) return null;
  const done = { topUpId: topUp.id };
  if (topUp.status !== 'pending' && topUp.status !== 'processing') return { result: 'unchanged', ...done };
  const tenant = tenantOf(topUp);
  if (report.outcome === 'processing') {
    await repo.setStatus(tx, topUp.id, 'processing');
    return { result: 'processing', ...done };
  }
  if (report.outcome === 'expired') {
    await repo.setStatus(tx, topUp.id, 'expired');
    return { result: 'expired', ...done };
  }
  if (report.outcome === 'failed') {
    await failTopUp(tx, tenant, topUp, 'The bank debit did not go through; nothing was added to the balance.');
    return { result: 'failed', ...done };
  }
  if (report.currency !== PAYMENT_CURRENCY || report.amountCents !== Number(topUp.amount_cents)) {
    log.error(
      { topUpId: topUp.id, paid: report.amountCents, currency: report.currency },
      'a top-up was paid with another amount or currency than asked; refunding it instead of crediting',
    );
    await provider.refund({
      reference: report.paymentReference,
      amountCents: report.amountCents,
      idempotencyKey: `${topUp.id}:refund`,
    });
    await failTopUp(
      tx,
      tenant,
      topUp,
      `Paid ${report.amountCents} in ${report.currency || 'an unstated currency'} instead of ${topUp.amount_cents} ${PAYMENT_CURRENCY} cents; the payment was refunded.`,
    );
    return { result: 'refunded', ...done };
  }
  await creditTopUp(tx, tenant, topUp, report.paymentReference, 'stripe');
  return { result: 'credited', ...done };
}

async function failTopUp(tx: Db, tenant: Tenant, topUp: repo.TopUpRow, message: string): Promise<void> {
  await repo.setStatus(tx, topUp.id, 'failed', { failureMessage: message });
  await emitEvent(tx, tenant, 'balance.top_up_failed', topUpFailedEvent(topUp, message));
}

/**
 * What a dispute or refund event says about a charge (FUND-10): its PaymentIntent, the dispute's amount or the
 * charge's refunded total (cents), and the reference the ledger entry is named and kept unique by.
 */
export interface ClawbackReport {
  reason: 'dispute' | 'refund';
  paymentIntent: string;
  /** dispute: the disputed amount; refund: the charge's whole refunded amount so far (Stripe's amount_refunded). */
  amountCents: number;
  /** The dispute id (dp_…), or the newest refund's id (re_…), else `<charge id>:<amount_refunded>`. */
  reference: string;
}

/**
 * The clawback facts of a `charge.dispute.created` or `charge.refunded` event, or null for another event or one
 * without a PaymentIntent.
 */
export function clawbackReportOf(event: Stripe.Event): ClawbackReport | null {
  const idOf = (v: unknown) =>
    typeof v === 'string'
      ? v
      : typeof (v as { id?: unknown } | null)?.id === 'string'
        ? (v as { id: string }).id
        : null;
  if (event.type === 'charge.dispute.created') {
    const dispute = event.data.object as Stripe.Dispute;
    const paymentIntent = idOf(dispute.payment_intent);
    if (!paymentIntent || typeof dispute.id !== 'string') return null;
    return { reason: 'dispute', paymentIntent, amountCents: Number(dispute.amount) || 0, reference: dispute.id };
  }
  if (event.type === 'charge.refunded') {
    const charge = event.data.object as Stripe.Charge;
    const paymentIntent = idOf(charge.payment_intent);
    if (!paymentIntent || typeof charge.id !== 'string') return null;
    const refunded = Number(charge.amount_refunded) || 0;
    const newest = charge.refunds?.data?.[0]?.id;
    return {
      reason: 'refund',
      paymentIntent,
      amountCents: refunded,
      reference: typeof newest === 'string' ? newest : `${charge.id}:${refunded}`,
    };
  }
  return null;
}

/**
 * Takes back from the balance what a dispute or a refund of a top-up's charge removed (FUND-10..FUND-13), in the
 * caller's transaction: one `clawback` entry naming the dispute or refund and the top-up, even when it takes the
 * balance below zero; `balance.top_up_reversed` to the integrator; a warning in the log for the operators. Never more
 * than the top-up brought in; a refund takes only what its charge's refunded total adds to what was taken for refunds
 * already. A PaymentIntent that paid no top-up (a dashboard card payment) is left alone.
 */
export async function takeBackTopUp(tx: Db, report: ClawbackReport, log: FastifyBaseLogger): Promise<FundingOutcome> {
  const topUp = await repo.lockByPaymentIntent(tx, report.paymentIntent);
  if (!topUp) return { result: 'not_a_top_up', topUpId: null };
  const done = { topUpId: topUp.id };
  if (topUp.status !== 'succeeded' || (await clawbackPosted(tx, report.reference)))
    return { result: 'unchanged', ...done };
  const amount = Number(topUp.amount_cents);
  const disputed = Number(topUp.disputed_cents);
  const refunded = Number(topUp.refunded_cents);
  const cents =
    report.reason === 'dispute'
      ? Math.min(report.amountCents, amount - disputed - refunded)
      : Math.min(report.amountCents, amount - disputed) - refunded;
  if (cents <= 0) return { result: 'unchanged', ...done };
  const tenant = tenantOf(topUp);
  const entry = await appendLedgerEntry(tx, tenant, {
    type: 'clawback',
    amountCents: -cents,
    lineType: report.reason,
    description: `${report.reason === 'dispute' ? 'Dispute' : 'Refund'} ${report.reference} of top-up ${topUp.id} (Stripe payment ${report.paymentIntent})`,
    reference: report.reference,
    createdBy: 'stripe',
  });
  await repo.addTakenBack(tx, topUp.id, report.reason, cents);
  // FUND-25: the integrator's contacts and the operators are emailed, from the transaction that took the money back.
  await queueTopUpReversalEmail(tx, {
    topUpId: topUp.id,
    kind: 'taken_back',
    reason: report.reason,
    reference: report.reference,
    amountCents: cents,
    balanceAfterCents: Number(entry.balance_after_cents),
  });
  await emitEvent(tx, tenant, 'balance.top_up_reversed', {
    reason: report.reason,
    reference: report.reference,
    ...topUpMoneyEvent(topUp.id, cents, entry),
  });
  // FUND-12: operators hear of every dispute and refund of a top-up (money left the platform's Stripe account).
  log.warn(
    {
      notice: 'top_up_taken_back',
      organizationId: tenant.organizationId,
      environment: tenant.environment,
      topUpId: topUp.id,
      reason: report.reason,
      reference: report.reference,
      amountCents: cents,
      balanceAfterCents: entry.balance_after_cents,
    },
    `a top-up's payment was ${report.reason === 'dispute' ? 'disputed' : 'refunded'}: its amount was taken back from the balance`,
  );
  return { result: 'taken_back', ...done };
}

/** A dispute Stripe closed in the platform's favour (FUND-26): the dispute and the PaymentIntent it was about. */
export interface DisputeWonReport {
  disputeId: string;
  paymentIntent: string;
}

/**
 * The facts of a `charge.dispute.closed` event whose dispute has `status` won, or null for any other event (a lost
 * dispute changes nothing: its money was taken back when it was opened).
 */
export function disputeWonReportOf(event: Stripe.Event): DisputeWonReport | null {
  if (event.type !== 'charge.dispute.closed') return null;
  const dispute = event.data.object as Stripe.Dispute;
  if (dispute.status !== 'won' || typeof dispute.id !== 'string') return null;
  const pi = dispute.payment_intent;
  const paymentIntent = typeof pi === 'string' ? pi : typeof pi?.id === 'string' ? pi.id : null;
  return paymentIntent ? { disputeId: dispute.id, paymentIntent } : null;
}

/**
 * Gives back what a dispute took from a top-up once Stripe closes it won (FUND-26), in the caller's transaction: one
 * `credit` entry (`lineType` `dispute_won`, `reference` the dispute id) of exactly what the dispute's clawback took,
 * `balance.top_up_reinstated` to the integrator, the email of FUND-25 and a log line for the operators. Once per
 * dispute (one credit per reference, and the top-up's row lock); nothing when the dispute took nothing.
 */
export async function giveBackDispute(
  tx: Db,
  report: DisputeWonReport,
  log: FastifyBaseLogger,
): Promise<FundingOutcome> {
  const topUp = await repo.lockByPaymentIntent(tx, report.paymentIntent);
  if (!topUp) return { result: 'not_a_top_up', topUpId: null };
  const done = { topUpId: topUp.id };
  const taken = await ledgerEntryByReference(tx, 'clawback', report.disputeId);
  if (!taken || (await ledgerEntryByReference(tx, 'credit', report.disputeId))) return { result: 'unchanged', ...done };
  const cents = -Number(taken.amount_cents);
  if (cents <= 0) return { result: 'unchanged', ...done };
  const tenant = tenantOf(topUp);
  const entry = await appendLedgerEntry(tx, tenant, {
    type: 'credit',
    amountCents: cents,
    lineType: 'dispute_won',
    description: `Dispute ${report.disputeId} of top-up ${topUp.id} won (Stripe payment ${report.paymentIntent}): given back`,
    reference: report.disputeId,
    createdBy: 'stripe',
  });
  await repo.giveBackDisputed(tx, topUp.id, cents);
  await queueTopUpReversalEmail(tx, {
    topUpId: topUp.id,
    kind: 'given_back',
    reason: 'dispute',
    reference: report.disputeId,
    amountCents: cents,
    balanceAfterCents: Number(entry.balance_after_cents),
  });
  await emitEvent(tx, tenant, 'balance.top_up_reinstated', {
    reason: 'dispute_won',
    reference: report.disputeId,
    ...topUpMoneyEvent(topUp.id, cents, entry),
  });
  log.warn(
    {
      notice: 'top_up_dispute_won',
      organizationId: tenant.organizationId,
      environment: tenant.environment,
      topUpId: topUp.id,
      reference: report.disputeId,
      amountCents: cents,
      balanceAfterCents: entry.balance_after_cents,
    },
    "a top-up's dispute was won: what it took was given back to the balance",
  );
  return { result: 'given_back', ...done };
}

import type { FastifyBaseLogger } from 'fastify';
import type Stripe from 'stripe';
import type { AppContext } from '../../context.js';
import type { Db } from '../../lib/db.js';
import type { StripePaymentProvider } from '../payments/stripe-provider.js';
import * as repo from './auto-recharge.repo.js';
import { creditRecharge, failAttempt } from './auto-recharge.service.js';
import { savedMethodOf } from './auto-recharge.stripe.js';

/*
 * What Stripe's signed events do to auto-recharge (FUND-31, FUND-35, FUND-36): a completed setup-mode Checkout Session
 * saves the method; a recharge's PaymentIntent that succeeded credits it (once, whoever reports it first: the job's
 * synchronous answer or this event); one that failed (a bank debit returned) counts a failed attempt. Each runs inside
 * the transaction that records the event id, so a redelivered event changes nothing.
 */

/** What a completed setup-mode Checkout Session of auto-recharge saved (FUND-31). */
export interface SetupReport {
  sessionId: string;
  customer: string | null;
  /** The saved PaymentMethod, read from the session's SetupIntent; null when it did not succeed. */
  paymentMethod: string | null;
}

/**
 * The facts of a `checkout.session.completed` event of a setup-mode session this service opened for auto-recharge
 * (metadata purpose `auto_recharge`), with the method its SetupIntent saved, read from Stripe now: call it BEFORE the
 * event's transaction. null for any other event.
 * @throws when Stripe cannot be reached (the webhook then answers 500 and Stripe delivers the event again).
 */
export async function setupReportOf(provider: StripePaymentProvider, event: Stripe.Event): Promise<SetupReport | null> {
  if (event.type !== 'checkout.session.completed') return null;
  const session = event.data.object as Stripe.Checkout.Session;
  if (session.mode !== 'setup' || session.metadata?.purpose !== 'auto_recharge') return null;
  const idOf = (v: string | { id: string } | null | undefined) => (typeof v === 'string' ? v : (v?.id ?? null));
  const setupIntent = idOf(session.setup_intent);
  return {
    sessionId: session.id,
    customer: idOf(session.customer),
    paymentMethod: setupIntent ? await savedMethodOf(provider, setupIntent) : null,
  };
}

/**
 * Saves the method of a completed setup session for the organization that opened it (FUND-31), in the event's
 * transaction: Stripe's Customer and PaymentMethod ids only; auto-recharge turns on when a threshold and an amount are
 * set. A session that is not the organization's newest setup page, or whose SetupIntent did not succeed, changes
 * nothing.
 */
export async function saveRechargeMethod(tx: Db, report: SetupReport): Promise<{ result: string }> {
  const settings = await repo.lockBySetupSession(tx, report.sessionId);
  if (!settings) return { result: 'unknown_session' };
  if (!report.paymentMethod || !report.customer) return { result: 'unchanged' };
  await repo.saveMethod(tx, settings.organization_id, report.customer, report.paymentMethod);
  return { result: 'method_saved' };
}

/** What a PaymentIntent event says about a recharge's payment (FUND-35, FUND-36). */
export type RechargeEventReport =
  | { outcome: 'succeeded'; rechargeId: string; paymentIntent: string; amountCents: number; currency: string }
  | { outcome: 'failed'; rechargeId: string; paymentIntent: string; message: string };

/**
 * The facts of a `payment_intent.succeeded` or `payment_intent.payment_failed` event about a recharge's PaymentIntent
 * (metadata `auto_recharge_id`), or null for any other event.
 */
export function rechargeReportOf(event: Stripe.Event): RechargeEventReport | null {
  if (event.type !== 'payment_intent.succeeded' && event.type !== 'payment_intent.payment_failed') return null;
  const intent = event.data.object as Stripe.PaymentIntent;
  const rechargeId = intent.metadata?.auto_recharge_id;
  if (intent.object !== 'payment_intent' || typeof intent.id !== 'string' || !rechargeId) return null;
  if (event.type === 'payment_intent.succeeded')
    return {
      outcome: 'succeeded',
      rechargeId,
      paymentIntent: intent.id,
      amountCents: Number(intent.amount_received ?? intent.amount) || 0,
      currency: typeof intent.currency === 'string' ? intent.currency.toLowerCase() : '',
    };
  return {
    outcome: 'failed',
    rechargeId,
    paymentIntent: intent.id,
    message: intent.last_payment_error?.message ?? 'The payment did not go through.',
  };
}

/**
 * Applies a recharge's PaymentIntent event in the event's transaction, the recharge row locked (FUND-35, FUND-36):
 * succeeded credits it unless that PaymentIntent was credited before; failed counts a failed attempt only for the
 * recharge's bank debit under way (`processing` with that PaymentIntent): a card declined at once was counted by the
 * job already.
 */
export async function settleRechargeEvent(
  ctx: Pick<AppContext, 'log'>,
  tx: Db,
  report: RechargeEventReport,
  log: FastifyBaseLogger,
): Promise<{ result: string; autoRechargeId: string }> {
  const recharge = await repo.lockRecharge(tx, report.rechargeId);
  const done = { autoRechargeId: report.rechargeId };
  if (!recharge) return { result: 'unknown_recharge', ...done };
  if (report.outcome === 'succeeded') return { result: await creditRecharge(tx, recharge, report, log), ...done };
  if (recharge.status !== 'processing' || recharge.payment_intent !== report.paymentIntent)
    return { result: 'unchanged', ...done };
  return { result: await failAttempt(ctx, tx, recharge, report.message, report.paymentIntent), ...done };
}

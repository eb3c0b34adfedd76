import type { FastifyBaseLogger } from 'fastify';
import type Stripe from 'stripe';
import type { AppContext } from '../../context.js';
import { withTransaction } from '../../lib/db.js';
import {
  rechargeReportOf,
  saveRechargeMethod,
  settleRechargeEvent,
  setupReportOf,
} from '../funding/auto-recharge-events.js';
import type { HostedPaymentReport } from '../payments/payment-provider.js';
import { settleHostedCheckout } from './hosted-checkout.js';
import { recordProviderEvent } from '../payments/card-checkouts.repo.js';
import type { StripePaymentProvider } from '../payments/stripe-provider.js';
import {
  clawbackReportOf,
  disputeWonReportOf,
  giveBackDispute,
  settleTopUpSession,
  takeBackTopUp,
} from '../funding/funding-events.js';

const HANDLED = new Set([
  'checkout.session.completed',
  'checkout.session.async_payment_succeeded',
  'checkout.session.async_payment_failed',
  'checkout.session.expired',
]);

/**
 * Handles one verified Stripe event once per event id, in ONE transaction (PAY-3, PAY-4, FUND-5, FUND-10): records the
 * event with the checkout or top-up it is about (a duplicate changes nothing), then settles that checkout or top-up,
 * or takes a disputed or refunded top-up's money back; saves auto-recharge's method or settles a recharge (FUND-31,
 * FUND-35).
 * @returns what happened: duplicate, ignored (another type or no payment facts), or the settlement's result.
 */
export async function handleStripeEvent(
  ctx: AppContext,
  provider: StripePaymentProvider,
  event: Stripe.Event,
  log: FastifyBaseLogger,
): Promise<{ result: string; checkoutId?: string | null; topUpId?: string | null }> {
  // FUND-31, FUND-35: auto-recharge's events. A completed setup session's saved method is read from Stripe here,
  // before the transaction (never a Stripe call while one is open).
  const recharge = rechargeReportOf(event);
  const setup = await setupReportOf(provider, event);
  const report = HANDLED.has(event.type) ? reportOf(event) : null;
  const clawback = clawbackReportOf(event);
  const won = disputeWonReportOf(event);
  return withTransaction(ctx.pool, async (tx) => {
    const recorded = await recordProviderEvent(tx, {
      id: event.id,
      provider: provider.name,
      type: event.type,
      sessionId: report?.sessionId ?? null,
      paymentIntent: clawback?.paymentIntent ?? won?.paymentIntent ?? null,
    });
    if (!recorded) return { result: 'duplicate', checkoutId: null };
    if (recharge) return settleRechargeEvent(ctx, tx, recharge, log);
    if (setup) return saveRechargeMethod(tx, setup);
    // FUND-10: a dispute or refund of a top-up's charge takes its money back from the balance.
    if (clawback) return takeBackTopUp(tx, clawback, log);
    // FUND-26: a dispute closed won gives back what it took.
    if (won) return giveBackDispute(tx, won, log);
    if (!report) return { result: 'ignored', checkoutId: null };
    // FUND-5: a session opened for a top-up credits the balance; any other is a dashboard checkout's (PAY-3).
    return (
      (await settleTopUpSession(tx, provider, report, log)) ?? settleHostedCheckout(tx, ctx, provider, report, log)
    );
  });
}

/** What a Checkout Session event says about the payment (PAY-3). */
function reportOf(event: Stripe.Event): HostedPaymentReport | null {
  const session = event.data.object as Stripe.Checkout.Session;
  if (session.object !== 'checkout.session' || typeof session.id !== 'string') return null;
  const paymentReference =
    typeof session.payment_intent === 'string' ? session.payment_intent : (session.payment_intent?.id ?? null);
  const paid = {
    outcome: 'paid' as const,
    sessionId: session.id,
    paymentReference: paymentReference ?? '',
    amountCents: session.amount_total ?? 0,
    currency: typeof session.currency === 'string' ? session.currency.toLowerCase() : '',
  };
  switch (event.type) {
    case 'checkout.session.completed':
      // Card payments are paid at completion; delayed methods (bank debits) complete unpaid and report later.
      if (session.payment_status === 'paid' && paymentReference) return paid;
      return { outcome: 'processing', sessionId: session.id };
    case 'checkout.session.async_payment_succeeded':
      return paymentReference ? paid : null;
    case 'checkout.session.async_payment_failed':
      return {
        outcome: 'failed',
        sessionId: session.id,
        message: 'The payment did not go through. Nothing was ordered; please order again with another payment method.',
      };
    case 'checkout.session.expired':
      return { outcome: 'expired', sessionId: session.id };
    default:
      return null;
  }
}

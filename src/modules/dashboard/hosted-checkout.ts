import type { FastifyBaseLogger } from 'fastify';
import type { AppContext, Tenant } from '../../context.js';
import { rollbackToSavepoint, savepoint, withTransaction, type Db } from '../../lib/db.js';
import { AppError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { open, seal, type Keyring } from '../../lib/secret-box.js';
import { checkOrderFacts, planOrder, type PricedLine } from '../orders/orders.service.js';
import * as checkouts from '../payments/card-checkouts.repo.js';
import {
  PAYMENT_CURRENCY,
  type HostedPaymentProvider,
  type HostedPaymentReport,
} from '../payments/payment-provider.js';
import { recordPayment } from '../payments/payments.service.js';
import { certificateLine } from './certificate-orders.js';
import {
  guardForm,
  placeCheckoutIntent,
  priceChangedOutcome,
  type CheckoutOutcome,
  type CheckoutSubmit,
  type PlacementIntent,
} from './checkout-placement.js';

/*
 * Customer-billed checkout through a hosted payment page (Stripe Checkout; rules PAY-2..PAY-5). The submit prices
 * the order with the same planner that places it, keeps what to place in card_checkouts (sealed: an EIN request
 * carries the responsible party's tax id) and sends the customer to the provider. Nothing is placed until the
 * provider confirms the payment through a signed event; then the orders are placed by the same function as every
 * other dashboard order (placeCheckoutIntent, billing 'checkout': retail, wholesale and margin recorded), with the
 * payment row, in ONE transaction.
 */

/**
 * Opens a hosted payment page for a validated checkout (inside the form token's lock, like a sandbox charge).
 * A form whose payment page is still open sends the customer back to that page instead of opening a second one.
 * @returns a redirect to the provider, or the outcome for the page (earlier order, price changed, provider down).
 * @throws AppError from the order rules (the caller turns them into page messages).
 */
export async function startHostedCheckout(
  ctx: AppContext,
  s: CheckoutSubmit,
  provider: HostedPaymentProvider,
  intent: PlacementIntent,
): Promise<CheckoutOutcome> {
  if (!s.hosted) throw new Error('startHostedCheckout needs the dashboard address and the customer e-mail');
  const hosted = s.hosted;
  return withTransaction(ctx.pool, async (tx): Promise<CheckoutOutcome> => {
    const form = await guardForm(tx, s);
    if ('outcome' in form) return form.outcome;
    if (form.key) {
      const open = await checkouts.findOpenForForm(tx, s.tenant, form.key);
      if (open?.redirect_url) return { ok: true, redirectTo: open.redirect_url };
      if (open)
        return {
          ok: false,
          errors: [],
          message: 'Your payment is being processed. The order appears on your company page once it is confirmed.',
        };
    }
    const lines = await linesOf(tx, s.tenant, intent);
    const totalCents = lines.reduce((sum, l) => sum + l.amountCents, 0);
    const changed = priceChangedOutcome(s.expectedTotalCents, totalCents);
    if (changed) return changed;
    if (totalCents <= 0) throw new AppError('conflict', 'There is nothing to pay for in this order.');
    const checkoutId = newId('cardCheckout');
    await checkouts.insertCheckout(tx, s.tenant, {
      id: checkoutId,
      userId: s.userId,
      companyId: s.company?.id ?? null,
      provider: provider.name,
      formKey: form.key ?? null,
      amountCents: totalCents,
      intent: sealIntent(ctx.secrets.dataKeys, checkoutId, intent),
    });
    const returnUrl = `${hosted.siteUrl}/checkout/return/${checkoutId}`;
    let session: { sessionId: string; url: string };
    try {
      session = await provider.createSession({
        checkoutId,
        lines: lines.map((l) => ({ description: l.description, amountCents: l.amountCents })),
        organizationName: s.organization.name,
        customerEmail: hosted.customerEmail,
        successUrl: returnUrl,
        cancelUrl: `${returnUrl}?cancelled=1`,
        idempotencyKey: checkoutId,
      });
    } catch (err) {
      ctx.log.error({ err, checkoutId }, 'the payment provider could not open a payment page');
      await checkouts.deleteCheckout(tx, checkoutId);
      return {
        ok: false,
        errors: [],
        message:
          'Card payment is temporarily unavailable. You have not been charged; please try again in a few minutes.',
      };
    }
    await checkouts.setSession(tx, checkoutId, session.sessionId, session.url);
    return { ok: true, redirectTo: session.url };
  });
}

/** The lines the customer pays (cents): the planner's lines of the request at retail, or the certificate's line. */
async function linesOf(tx: Db, tenant: Tenant, intent: PlacementIntent): Promise<PricedLine[]> {
  if (intent.kind === 'certificate') return [await certificateLine(tx, tenant, intent.filingState, 'checkout')];
  const plan = await planOrder(tx, tenant, intent.body, await checkOrderFacts(tx, tenant, intent.body), {
    ...intent.pricing,
    billing: 'checkout',
  });
  return plan.lines;
}

/** What handling a report did (logged; the webhook answers 200 either way). */
export type SettleResult =
  | 'placed'
  | 'processing'
  | 'failed'
  | 'expired'
  | 'refunded'
  | 'unchanged'
  | 'unknown_session';

/**
 * Applies a provider's report to its checkout inside the caller's transaction (PAY-3, PAY-4): paid -> the orders
 * are placed and the payment recorded; processing -> still waiting (asynchronous payment methods); failed/expired ->
 * nothing is placed. A checkout already settled is left as it is. When the paid order can no longer be placed (the
 * service became active meanwhile, prices changed, the amount or the currency differs), the payment is refunded in
 * full (PAY-5).
 * @throws when the provider refuses that refund: the caller's transaction then rolls back and the provider
 *   delivers the event again later.
 */
export async function settleHostedCheckout(
  tx: Db,
  ctx: AppContext,
  provider: HostedPaymentProvider,
  report: HostedPaymentReport,
  log: FastifyBaseLogger,
): Promise<{ result: SettleResult; checkoutId: string | null }> {
  const checkout = await checkouts.lockBySession(tx, report.sessionId);
  if (!checkout) return { result: 'unknown_session', checkoutId: null };
  const done = { checkoutId: checkout.id };
  const tenant: Tenant = { organizationId: checkout.organization_id, environment: checkout.environment };
  if (checkout.status !== 'open' && checkout.status !== 'processing') return { result: 'unchanged', ...done };
  if (report.outcome === 'processing') {
    await checkouts.setStatus(tx, checkout.id, 'processing', { keepIntent: true });
    return { result: 'processing', ...done };
  }
  if (report.outcome === 'expired' || report.outcome === 'failed') {
    if (report.outcome === 'failed') {
      const paymentId = await recordPayment(tx, tenant, {
        provider: provider.name,
        amountCents: Number(checkout.amount_cents),
        status: 'declined',
        cardLast4: null,
        failureMessage: report.message,
        userId: checkout.user_id,
        companyId: checkout.company_id,
      });
      await checkouts.setStatus(tx, checkout.id, 'failed', { failureMessage: report.message, paymentId });
    } else {
      await checkouts.setStatus(tx, checkout.id, 'expired', {});
    }
    return { result: report.outcome, ...done };
  }
  const payment = {
    provider: provider.name,
    amountCents: report.amountCents,
    cardLast4: null,
    userId: checkout.user_id,
    companyId: checkout.company_id,
    providerReference: report.paymentReference,
  };
  const opened = openIntent(ctx.secrets.dataKeys, checkout.id, checkout.intent);
  await savepoint(tx, 'hosted_place');
  try {
    if (!opened)
      throw new AppError(
        'conflict',
        'the order request could not be read back (its data encryption key is no longer configured)',
      );
    // PAY-5: the payment must be what was asked, in amount and in currency (a page could be paid in another one).
    if (report.currency !== PAYMENT_CURRENCY || report.amountCents !== Number(checkout.amount_cents))
      throw new AppError(
        'conflict',
        `paid ${report.amountCents} in ${report.currency || 'an unstated currency'}, the checkout asked for ${checkout.amount_cents} ${PAYMENT_CURRENCY}`,
      );
    const placed = await placeCheckoutIntent(
      tx,
      tenant,
      opened,
      'checkout',
      checkout.form_key ?? `card-checkout:${checkout.id}`,
      ctx.secrets.dataKeys,
    );
    if (!placed.groupId) throw new AppError('conflict', 'the service is already active for the company');
    if (placed.totalCents !== report.amountCents)
      throw new AppError('conflict', 'prices changed while the customer was paying');
    const paymentId = await recordPayment(tx, tenant, {
      ...payment,
      status: 'succeeded',
      groupId: placed.groupId,
      companyId: placed.companyId,
    });
    await checkouts.setStatus(tx, checkout.id, 'paid', {
      groupId: placed.groupId,
      paymentId,
      companyId: placed.companyId,
    });
    return { result: 'placed', ...done };
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    await rollbackToSavepoint(tx, 'hosted_place');
    log.warn(
      { checkoutId: checkout.id, reason: err.message },
      'a paid checkout could not be placed; refunding the payment',
    );
    // Keyed by the checkout: a redelivered event never refunds twice.
    await provider.refund({
      reference: report.paymentReference,
      amountCents: report.amountCents,
      idempotencyKey: `${checkout.id}:refund`,
    });
    const message = `The order could not be placed (${err.message}); the payment was refunded.`;
    const paymentId = await recordPayment(tx, tenant, {
      ...payment,
      status: 'refunded',
      failureMessage: message.slice(0, 300),
    });
    await checkouts.setStatus(tx, checkout.id, 'failed', { failureMessage: message.slice(0, 300), paymentId });
    return { result: 'refunded', ...done };
  }
}

/** What the customer sees on returning from the payment page (PAY-4). */
export type ReturnView =
  | { state: 'placed'; companyId: string; groupId: string }
  | { state: 'pending' | 'cancelled' | 'failed' | 'expired'; message: string };

/**
 * The state of the signed-in user's checkout on return from the provider. null: not this user's checkout.
 * `cancelled`: the customer left the payment page without paying (it stays open until it expires).
 */
export async function returnView(
  db: Db,
  tenant: Tenant,
  userId: string,
  checkoutId: string,
  cancelled: boolean,
): Promise<ReturnView | null> {
  const c = await checkouts.findForUser(db, tenant, userId, checkoutId);
  if (!c) return null;
  if (c.status === 'paid' && c.group_id && c.company_id)
    return { state: 'placed', companyId: c.company_id, groupId: c.group_id };
  if (c.status === 'failed')
    return { state: 'failed', message: c.failure_message ?? 'The payment did not go through. Nothing was ordered.' };
  if (c.status === 'expired')
    return {
      state: 'expired',
      message: 'The payment page expired before the payment was made. You have not been charged; please order again.',
    };
  if (cancelled && c.status === 'open')
    return {
      state: 'cancelled',
      message: 'You left the payment page without paying, so nothing was ordered. You can order again at any time.',
    };
  return {
    state: 'pending',
    message:
      'Your payment is being confirmed. Your order appears on your company page as soon as it is; reload this page to check.',
  };
}

// The order request waits in the database until the payment is confirmed; it may carry an EIN responsible party's
// full tax id, so it is sealed like every secret at rest (SEC-2: the data keyring, the checkout id as associated
// data) and cleared when the checkout settles.

/** Seals a placement intent for card_checkouts.intent (jsonb `{sealed}`). */
function sealIntent(keyring: Keyring, checkoutId: string, intent: PlacementIntent): { sealed: string } {
  return { sealed: seal(keyring, JSON.stringify(intent), checkoutId) };
}

/** The intent back, or null when it cannot be opened (cleared, its key no longer configured, tampered with). */
function openIntent(keyring: Keyring, checkoutId: string, stored: unknown): PlacementIntent | null {
  const sealed = (stored as { sealed?: unknown } | null)?.sealed;
  if (typeof sealed !== 'string') return null;
  try {
    // Only sealIntent wrote it (the seal is authenticated), so an order's body is still the checked one it sealed.
    return JSON.parse(open(keyring, sealed, checkoutId)) as PlacementIntent;
  } catch {
    return null;
  }
}

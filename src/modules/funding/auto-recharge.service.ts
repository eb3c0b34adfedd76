import type { FastifyBaseLogger } from 'fastify';
import type { AppContext, Tenant } from '../../context.js';
import { requestDollarsToCents } from '../../lib/amounts.js';
import { withTransaction, type Db } from '../../lib/db.js';
import { AppError, FieldErrors, notFound } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { addJob } from '../../lib/jobs.js';
import { formatCents } from '../../lib/money.js';
import { type AuditActor, recordAuditChange } from '../audit/audit.service.js';
import { emitEvent } from '../events/events.service.js';
import { findOrganization } from '../organizations/organizations.repo.js';
import { PAYMENT_CURRENCY } from '../payments/payment-provider.js';
import { stripeProvider } from '../payments/payments.service.js';
import * as repo from './auto-recharge.repo.js';
import {
  chargeSavedMethod,
  createRechargeCustomer,
  createSetupSession,
  type RechargeCharge,
} from './auto-recharge.stripe.js';
import { autoRechargeFailedEvent, autoRechargeSnapshot } from './auto-recharge.views.js';
import * as topUps from './top-ups.repo.js';
import { creditTopUp } from './top-ups.service.js';

/*
 * Auto-recharge of the live balance (FUND-30..FUND-39). An owner saves a card or US bank account (Checkout in setup
 * mode) and sets "below X, add Y". A debit that takes the live balance below X queues one recharge in its own
 * transaction (trigger queue_auto_recharge); the job run_auto_recharge charges the saved method off-session, outside
 * any transaction, and the answer (or Stripe's later event, for a bank debit) credits the balance once as a top-up.
 * Three failed attempts stop it, turn auto-recharge off and tell the owners.
 */

/** Failed attempts after which a recharge stops and auto-recharge is turned off (FUND-36). */
const RECHARGE_MAX_ATTEMPTS = 3;

/** How long after failed attempt 1 and 2 the next one runs, in ms (FUND-36): one hour, then six. */
const RETRY_DELAYS_MS = [60 * 60_000, 6 * 60 * 60_000];

/** Attempts before graphile-worker gives up on an email (its exponential backoff spans about a day). */
const EMAIL_MAX_ATTEMPTS = 12;

/** Largest threshold, in dollars (as lowBalanceThreshold, FUND-15). */
const MAX_THRESHOLD_DOLLARS = 10_000_000;

/** The organization's auto-recharge settings and newest recharge (FUND-30, FUND-37). */
export async function getAutoRecharge(db: Db, organizationId: string): Promise<repo.AutoRechargeState> {
  const [settings, [last]] = await Promise.all([
    repo.findSettings(db, organizationId),
    repo.listRecharges(db, organizationId, 1),
  ]);
  return { settings, last: last ?? null };
}

/** The new settings of PUT /balance/auto-recharge: on/off, threshold and amount in dollars (FUND-32). */
export interface AutoRechargeInput {
  enabled: boolean;
  threshold: number;
  amount: number;
}

/**
 * PUT /balance/auto-recharge and the portal's form (FUND-30, FUND-32): "when the live balance falls below
 * `threshold`, add `amount`" (dollars) and whether it is on. `amount` within TOP_UP_MIN..TOP_UP_MAX, `threshold` 0 to
 * $10,000,000; turning it on needs a saved method, and clears why the service turned it off. Organization-wide, so a
 * live key or a live portal session only. With `audit`, the change is recorded in the audit log in its transaction.
 * @throws ValidationError naming `threshold`, `amount` or `enabled`; AppError forbidden (403) from the test environment.
 */
export async function updateAutoRecharge(
  ctx: AppContext,
  tenant: Tenant,
  input: AutoRechargeInput,
  audit?: AuditActor,
): Promise<repo.AutoRechargeState> {
  if (tenant.environment !== 'live')
    throw new AppError(
      'forbidden',
      'Auto-recharge refills the live balance: change it with a live key (or in the portal while it shows Live).',
    );
  const errors = new FieldErrors();
  const cents = (field: string, dollars: number, positive: boolean) => {
    try {
      return requestDollarsToCents(field, dollars, { positive, max: positive ? undefined : MAX_THRESHOLD_DOLLARS });
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      errors.add(field, ((err.extra.errors ?? []) as Array<{ message: string }>)[0]?.message ?? err.message);
      return null;
    }
  };
  const thresholdCents = cents('threshold', input.threshold, false);
  const amountCents = cents('amount', input.amount, true);
  const { minCents, maxCents } = ctx.config.topUps;
  if (amountCents !== null && (amountCents < minCents || amountCents > maxCents))
    errors.add('amount', `must be between ${formatCents(minCents)} and ${formatCents(maxCents)}, got ${input.amount}`);
  errors.throwIfAny();
  return withTransaction(ctx.pool, async (tx) => {
    const before = await repo.lockSettings(tx, tenant.organizationId);
    if (input.enabled && !before.payment_method)
      errors
        .add(
          'enabled',
          'save a card or US bank account first (POST /balance/auto-recharge/setup, or the portal), then turn it on',
        )
        .throwIfAny();
    const after = await repo.saveSettings(tx, tenant.organizationId, {
      enabled: input.enabled,
      thresholdCents: thresholdCents!,
      amountCents: amountCents!,
    });
    if (audit)
      await recordAuditChange(tx, {
        actor: audit,
        organizationId: tenant.organizationId,
        environment: 'live',
        action: 'auto_recharge.updated',
        targetId: tenant.organizationId,
        before: autoRechargeSnapshot(before),
        after: autoRechargeSnapshot(after),
      });
    const [last] = await repo.listRecharges(tx, tenant.organizationId, 1);
    return { settings: after, last: last ?? null };
  });
}

/**
 * POST /balance/auto-recharge/setup and the portal's button (FUND-31): opens a Stripe Checkout page in setup mode where
 * an owner saves a card or US bank account for the live balance's recharges (creating the organization's Stripe
 * Customer first when it has none). Nothing is charged; `checkout.session.completed` of that session saves the method.
 * Stripe is called outside any transaction; the session is recorded after.
 * @param returnUrl where Stripe sends the owner back (`?autoRecharge=saved` or `cancelled` is appended).
 * @returns the page's address. @throws AppError forbidden (403) from the test environment; conflict (409) when
 *   Stripe is not configured; service_unavailable (503) when Stripe does not open the page.
 */
export async function startMethodSetup(ctx: AppContext, tenant: Tenant, returnUrl: string): Promise<{ url: string }> {
  if (tenant.environment !== 'live')
    throw new AppError(
      'forbidden',
      'Auto-recharge refills the live balance and is never charged in test: save a payment method with a live key.',
    );
  const provider = stripeProvider(ctx.config);
  if (!provider)
    throw new AppError(
      'conflict',
      'Auto-recharge is not available on this service yet: it charges cards and bank accounts through Stripe, which is not configured. Ask the operator.',
    );
  const organization = await findOrganization(ctx.pool, tenant.organizationId);
  if (!organization) throw notFound('organization', tenant.organizationId);
  const settings = await repo.findSettings(ctx.pool, tenant.organizationId);
  const back = (outcome: string) => `${returnUrl}${returnUrl.includes('?') ? '&' : '?'}autoRecharge=${outcome}`;
  let opened: { customer: string; sessionId: string; url: string };
  try {
    const customer =
      settings?.stripe_customer ??
      (await createRechargeCustomer(provider, { organizationId: organization.id, name: organization.name }));
    const session = await createSetupSession(provider, {
      organizationId: organization.id,
      customer,
      successUrl: back('saved'),
      cancelUrl: back('cancelled'),
      // One page per request: a fresh key (a retried request opens a new page, which is harmless).
      idempotencyKey: newId('autoRecharge'),
    });
    opened = { customer, ...session };
  } catch (err) {
    ctx.log.error({ err, organizationId: organization.id }, 'Stripe did not open an auto-recharge setup page');
    throw new AppError(
      'service_unavailable',
      'The page to save a payment method could not be opened; nothing was saved. Retry in a few minutes.',
    );
  }
  await withTransaction(ctx.pool, async (tx) => {
    await repo.lockSettings(tx, tenant.organizationId);
    await repo.setSetupSession(tx, tenant.organizationId, opened.customer, opened.sessionId);
  });
  return { url: opened.url };
}

/** What one run of a recharge did (for the job's log and the tests). */
export type RechargeRunResult = 'skipped' | 'credited' | 'processing' | 'retry_queued' | 'failed';

/**
 * One attempt of a queued recharge (FUND-35, FUND-36), the work of the job run_auto_recharge. Reads the recharge, and
 * unless it is still queued does nothing (settled, or a bank debit under way). Charges the saved method off-session
 * with the Idempotency-Key `<recharge id>-attempt-<n>`, holding no transaction or connection, then records the answer
 * in one transaction: succeeded credits the balance once (FUND-35); processing waits for Stripe's event; a refusal
 * counts a failed attempt (FUND-36).
 * @param lastTry the job's last try: an unknown outcome (Stripe unreachable) then counts as a failed attempt instead of
 *   being retried with the same key.
 * @throws when Stripe could not be reached (not on the last try): the job is retried with the same key.
 */
export async function runAutoRecharge(
  ctx: AppContext,
  rechargeId: string,
  log: Pick<FastifyBaseLogger, 'info' | 'warn' | 'error'>,
  lastTry = false,
): Promise<RechargeRunResult> {
  const recharge = await repo.findRecharge(ctx.pool, rechargeId);
  if (recharge?.status !== 'queued') return 'skipped';
  const attempt = recharge.attempts + 1;
  const provider = stripeProvider(ctx.config);
  let charge: RechargeCharge;
  if (!provider)
    charge = { outcome: 'declined', paymentIntent: null, message: 'Stripe is not configured on this service.' };
  else {
    try {
      charge = await chargeSavedMethod(provider, {
        rechargeId: recharge.id,
        customer: recharge.stripe_customer,
        paymentMethod: recharge.payment_method,
        amountCents: Number(recharge.amount_cents),
        idempotencyKey: `${recharge.id}-attempt-${attempt}`,
      });
    } catch (err) {
      if (!lastTry) throw err;
      log.error({ err, rechargeId }, 'Stripe could not be reached for an auto-recharge on its last try');
      charge = { outcome: 'declined', paymentIntent: null, message: 'Stripe could not be reached.' };
    }
  }
  return withTransaction(ctx.pool, async (tx) => {
    const now = await repo.lockRecharge(tx, rechargeId);
    if (charge.outcome === 'succeeded') {
      const done = await creditRecharge(tx, now!, charge, log);
      return done === 'credited' ? 'credited' : 'skipped';
    }
    // Another run of the same attempt (a duplicate job) got here first: nothing more to record.
    if (now?.status !== 'queued' || now.attempts !== recharge.attempts) return 'skipped';
    if (charge.outcome === 'processing') {
      await repo.markProcessing(tx, now.id, charge.paymentIntent);
      return 'processing';
    }
    return failAttempt(ctx, tx, now, charge.message, charge.paymentIntent);
  });
}

/**
 * Credits a recharge's payment (FUND-35), in the caller's transaction, the recharge row locked: a top-up of the
 * recharge's amount paid by `paymentIntent` (Idempotency-Key `auto-recharge:<PaymentIntent>`, unique per tenant) credited
 * through {@link creditTopUp} (one `credit` entry naming the top-up and the PaymentIntent, `balance.top_up_succeeded`),
 * and the recharge marked succeeded. A PaymentIntent credited before (the synchronous answer and Stripe's event, or a
 * redelivered event) changes nothing. A payment of another amount or currency is left uncredited and logged.
 * @returns credited, or unchanged.
 */
export async function creditRecharge(
  tx: Db,
  recharge: repo.AutoRechargeRow,
  paid: { paymentIntent: string; amountCents: number; currency: string },
  log: Pick<FastifyBaseLogger, 'error'>,
): Promise<'credited' | 'unchanged'> {
  const tenant: Tenant = { organizationId: recharge.organization_id, environment: 'live' };
  const key = `auto-recharge:${paid.paymentIntent}`;
  if (await topUps.findByIdempotencyKey(tx, tenant, key)) return 'unchanged';
  if (paid.amountCents !== Number(recharge.amount_cents) || paid.currency !== PAYMENT_CURRENCY) {
    log.error(
      { rechargeId: recharge.id, paymentIntent: paid.paymentIntent, paid: paid.amountCents, currency: paid.currency },
      'an auto-recharge was paid with another amount or currency than asked; not credited, check it in Stripe',
    );
    return 'unchanged';
  }
  const { topUp, created } = await topUps.claimTopUp(tx, tenant, {
    id: newId('topUp'),
    amountCents: Number(recharge.amount_cents),
    provider: 'stripe',
    idempotencyKey: key,
  });
  if (!created) return 'unchanged';
  await creditTopUp(tx, tenant, topUp, paid.paymentIntent, 'auto_recharge');
  if (recharge.status === 'queued' || recharge.status === 'processing')
    await repo.markSucceeded(tx, recharge.id, paid.paymentIntent, topUp.id);
  return 'credited';
}

/**
 * Counts a failed attempt of an in-flight recharge (FUND-36), in the caller's transaction, the recharge row locked:
 * before the third, queues the next attempt after its delay; at the third, marks the recharge failed, turns
 * auto-recharge off with the reason, emits `balance.auto_recharge_failed` and queues an email to each owner (to the
 * technical contact when the organization has no portal owner).
 */
export async function failAttempt(
  ctx: Pick<AppContext, 'log'>,
  tx: Db,
  recharge: repo.AutoRechargeRow,
  message: string,
  paymentIntent: string | null,
): Promise<'retry_queued' | 'failed'> {
  const attempts = recharge.attempts + 1;
  const delay = RETRY_DELAYS_MS[attempts - 1];
  const final = attempts >= RECHARGE_MAX_ATTEMPTS || delay === undefined;
  const nextAttemptAt = final ? null : new Date(Date.now() + delay);
  const failed = await repo.recordFailure(tx, recharge.id, { attempts, message, paymentIntent, nextAttemptAt });
  if (nextAttemptAt) {
    await addJob(tx, 'run_auto_recharge', { autoRechargeId: recharge.id }, { runAt: nextAttemptAt, maxAttempts: 10 });
    return 'retry_queued';
  }
  const reason = `The automatic recharge of ${formatCents(Number(recharge.amount_cents))} failed ${attempts} times (last: ${message}) and was turned off. Save a payment method again or turn it back on.`;
  await repo.disable(tx, recharge.organization_id, reason);
  await emitEvent(
    tx,
    { organizationId: recharge.organization_id, environment: 'live' },
    'balance.auto_recharge_failed',
    autoRechargeFailedEvent(failed),
  );
  // The owners; an organization without portal owners yet hears through its technical contact.
  const owners = await repo.ownerEmails(tx, recharge.organization_id);
  const contact = owners.length ? null : (await findOrganization(tx, recharge.organization_id))?.contact_email;
  for (const email of contact ? [contact] : owners)
    await addJob(
      tx,
      'send_auto_recharge_failed_email',
      { autoRechargeId: recharge.id, email },
      { maxAttempts: EMAIL_MAX_ATTEMPTS, jobKey: `auto-recharge-failed:${recharge.id}:${email}` },
    );
  // FUND-36: operators hear of it too, as of clawbacks (FUND-12): a notice in the log.
  ctx.log.warn(
    {
      notice: 'auto_recharge_failed',
      organizationId: recharge.organization_id,
      autoRechargeId: recharge.id,
      attempts,
      amountCents: Number(recharge.amount_cents),
      emailed: contact ? 1 : owners.length,
    },
    'an automatic recharge failed three times: auto-recharge was turned off and the owners were told',
  );
  return 'failed';
}

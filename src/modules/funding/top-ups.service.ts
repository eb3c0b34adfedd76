import type { AppContext, Tenant } from '../../context.js';
import { withTransaction, type Db } from '../../lib/db.js';
import { AppError, notFound, ValidationError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { formatCents } from '../../lib/money.js';
import { toPage, type Page, type PageParams } from '../../lib/pagination.js';
import { requestDollarsToCents } from '../../lib/amounts.js';
import { appendLedgerEntry, type LedgerEntryRow } from '../billing/ledger.js';
import { emitEvent } from '../events/events.service.js';
import { findOrganization } from '../organizations/organizations.repo.js';
import { stripeProvider } from '../payments/payments.service.js';
import * as repo from './top-ups.repo.js';
import { topUpMoneyEvent, topUpView } from './top-ups.views.js';

/*
 * Funding the prepaid balance (FUND-1..FUND-9). Live: POST /balance/top-ups opens a Stripe Checkout Session (card or
 * US bank account) and the balance is credited only when Stripe's signed event says the money is there
 * (funding-events.ts). Test: the same call credits at once, and Stripe is never called.
 */

/**
 * FUND-3: `amount` dollars as cents, within TOP_UP_MIN..TOP_UP_MAX, checked before anything is written or Stripe is
 * called. @throws ValidationError naming `amount`.
 */
function topUpCents(ctx: AppContext, amount: number): number {
  const cents = requestDollarsToCents('amount', amount, { positive: true });
  const { minCents, maxCents } = ctx.config.topUps;
  if (cents < minCents || cents > maxCents)
    throw new ValidationError([
      {
        field: 'amount',
        message: `must be between ${formatCents(minCents)} and ${formatCents(maxCents)}, got ${amount}`,
      },
    ]);
  return cents;
}

/**
 * POST /balance/top-ups (FUND-1..FUND-3, FUND-7, FUND-8, FUND-20). Test environment: one transaction writes the top-up,
 * its credit and its event, and answers it `succeeded` (no Stripe call). Live: writes the top-up `pending` (with its
 * Idempotency-Key), then, holding no transaction or connection, asks Stripe for its Checkout Session (Stripe's
 * idempotency key is the top-up id), then stores the page's address and answers it `pending`. A request whose
 * Idempotency-Key already made a top-up answers that top-up (opening its page first if that request has not yet), so
 * a retry or a racing twin never credits or opens twice and never fails on the key's unique index.
 * @param amount dollars, at most two decimals. @returns the top-up row.
 * @throws ValidationError on `amount` (outside TOP_UP_MIN..TOP_UP_MAX); AppError conflict (409) in live when Stripe is
 *   not configured; service_unavailable (503) when Stripe does not open the page (the top-up is kept `failed`, with
 *   its key released; nothing was charged or credited).
 */
export async function createTopUp(
  ctx: AppContext,
  tenant: Tenant,
  amount: number,
  idempotencyKey: string | undefined,
): Promise<repo.TopUpRow> {
  const amountCents = topUpCents(ctx, amount);
  const key = idempotencyKey ?? null;
  if (tenant.environment === 'test') {
    return withTransaction(ctx.pool, async (tx) => {
      const { topUp, created } = await repo.claimTopUp(tx, tenant, {
        id: newId('topUp'),
        amountCents,
        provider: 'test',
        idempotencyKey: key,
      });
      if (!created) return topUp;
      return (await creditTopUp(tx, tenant, topUp, null, 'api')).topUp;
    });
  }
  const provider = stripeProvider(ctx.config);
  if (!provider)
    throw new AppError(
      'conflict',
      'Top-ups are not available on this service yet: it takes card and bank payments through Stripe, which is not configured. Ask the operator, or use the test environment.',
    );
  if (key) {
    const earlier = await repo.findByIdempotencyKey(ctx.pool, tenant, key);
    if (earlier && (earlier.status !== 'pending' || earlier.provider_session_id)) return earlier;
  }
  const organization = await findOrganization(ctx.pool, tenant.organizationId);
  if (!organization) throw notFound('organization', tenant.organizationId);
  // FUND-20: one statement, no transaction held across the Stripe call below.
  const { topUp, created } = await repo.claimTopUp(ctx.pool, tenant, {
    id: newId('topUp'),
    amountCents,
    provider: 'stripe',
    idempotencyKey: key,
  });
  if (topUp.status !== 'pending' || topUp.provider_session_id) return topUp;
  return openTopUpPage(ctx, provider, topUp, organization.name, created);
}

/**
 * Opens the Checkout Session of a pending top-up and stores it (FUND-2, FUND-20), outside any transaction. `created`:
 * this request wrote the top-up, so a refusal by Stripe marks it failed; otherwise the request that wrote it is still
 * at work (or died), and a refusal leaves the top-up to it, answering what the top-up holds by then.
 * @throws AppError service_unavailable (503) when no page is open for it.
 */
async function openTopUpPage(
  ctx: AppContext,
  provider: NonNullable<ReturnType<typeof stripeProvider>>,
  topUp: repo.TopUpRow,
  organizationName: string,
  created: boolean,
): Promise<repo.TopUpRow> {
  const back = `${ctx.config.portalBaseUrl}/?topUp=${topUp.id}`;
  const unavailable = () =>
    new AppError(
      'service_unavailable',
      'The payment page could not be opened; nothing was charged. Retry in a few minutes.',
    );
  let session: { sessionId: string; url: string };
  try {
    session = await provider.createTopUpSession({
      topUpId: topUp.id,
      organizationName,
      amountCents: Number(topUp.amount_cents),
      successUrl: back,
      cancelUrl: `${back}&cancelled=1`,
    });
  } catch (err) {
    ctx.log.error({ err, topUpId: topUp.id }, 'Stripe did not open a top-up payment page');
    if (created) {
      await repo.failUnopened(ctx.pool, topUp.id, 'Stripe did not open the payment page; nothing was charged.');
      throw unavailable();
    }
    const now = await repo.findTopUp(ctx.pool, topUpTenant(topUp), topUp.id);
    if (now && (now.status !== 'pending' || now.provider_session_id)) return now;
    throw unavailable();
  }
  const stored = await repo.storeSession(ctx.pool, topUp.id, session.sessionId, session.url);
  if (stored) return stored;
  // It moved on meanwhile (its twin's Stripe call failed, or another session was stored): answer what it is.
  const now = await repo.findTopUp(ctx.pool, topUpTenant(topUp), topUp.id);
  if (now?.status === 'failed' && !now.provider_session_id) throw unavailable();
  return now!;
}

const topUpTenant = (t: repo.TopUpRow): Tenant => ({ organizationId: t.organization_id, environment: t.environment });

/**
 * Credits a top-up's whole amount to its tenant's balance in the caller's transaction (FUND-5): one `credit` entry
 * naming the top-up (its `reference`, unique per credit: a second credit of the same top-up is refused by the
 * database) and the PaymentIntent that paid it, the top-up marked succeeded, and `balance.top_up_succeeded` emitted.
 * @returns the top-up as it is now and the credit entry.
 */
export async function creditTopUp(
  tx: Db,
  tenant: Tenant,
  topUp: repo.TopUpRow,
  paymentIntent: string | null,
  createdBy: string,
): Promise<{ topUp: repo.TopUpRow; entry: LedgerEntryRow }> {
  const amountCents = Number(topUp.amount_cents);
  const entry = await appendLedgerEntry(tx, tenant, {
    type: 'credit',
    amountCents,
    lineType: 'top_up',
    description: paymentIntent
      ? `Top-up ${topUp.id} (Stripe payment ${paymentIntent})`
      : `Top-up ${topUp.id} (test money)`,
    reference: topUp.id,
    createdBy,
  });
  const settled = await repo.setStatus(tx, topUp.id, 'succeeded', { paymentIntent });
  await emitEvent(tx, tenant, 'balance.top_up_succeeded', topUpMoneyEvent(topUp.id, amountCents, entry));
  return { topUp: settled, entry };
}

/** GET /balance/top-ups: the tenant's top-ups, newest first (FUND-1). @throws AppError not_found for a foreign cursor. */
export async function listTopUpPage(
  db: Db,
  tenant: Tenant,
  page: PageParams,
): Promise<Page<ReturnType<typeof topUpView>>> {
  const limit = page.limit ?? 20;
  if (page.startingAfter && !(await repo.findTopUp(db, tenant, page.startingAfter)))
    throw notFound('top-up', page.startingAfter);
  return toPage(await repo.listTopUps(db, tenant, limit, page.startingAfter), limit, topUpView);
}

/** GET /balance/top-ups/{id} (FUND-1). @throws AppError not_found (404), also for another tenant's id. */
export async function getTopUp(db: Db, tenant: Tenant, id: string): Promise<repo.TopUpRow> {
  const row = await repo.findTopUp(db, tenant, id);
  if (!row) throw notFound('top-up', id);
  return row;
}

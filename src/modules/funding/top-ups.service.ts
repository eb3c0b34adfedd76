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
 * POST /balance/top-ups (FUND-1..FUND-3, FUND-7, FUND-8). Test environment: one transaction writes the top-up, its
 * credit and its event, and answers it `succeeded` (no Stripe call). Live: writes the top-up and opens its Checkout
 * Session (card and US bank account), answering it `pending` with the page's address. A request whose
 * Idempotency-Key already made a top-up answers that top-up again (a retry after a crash never credits or opens twice).
 * @param amount dollars, at most two decimals. @returns the top-up row.
 * @throws ValidationError on `amount` (outside TOP_UP_MIN..TOP_UP_MAX); AppError conflict (409) in live when Stripe is
 *   not configured; service_unavailable (503) when Stripe does not open the page (nothing is kept).
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
      const earlier = key ? await repo.findByIdempotencyKey(tx, tenant, key) : null;
      if (earlier) return earlier;
      const topUp = await repo.insertTopUp(tx, tenant, {
        id: newId('topUp'),
        amountCents,
        provider: 'test',
        idempotencyKey: key,
      });
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
    if (earlier) return earlier;
  }
  const organization = await findOrganization(ctx.pool, tenant.organizationId);
  if (!organization) throw notFound('organization', tenant.organizationId);
  return withTransaction(ctx.pool, async (tx) => {
    const topUp = await repo.insertTopUp(tx, tenant, {
      id: newId('topUp'),
      amountCents,
      provider: 'stripe',
      idempotencyKey: key,
    });
    const back = `${ctx.config.portalBaseUrl}/?topUp=${topUp.id}`;
    let session: { sessionId: string; url: string };
    try {
      session = await provider.createTopUpSession({
        topUpId: topUp.id,
        organizationName: organization.name,
        amountCents,
        successUrl: back,
        cancelUrl: `${back}&cancelled=1`,
      });
    } catch (err) {
      // The transaction rolls back: no top-up is kept for a page that was never opened.
      ctx.log.error({ err, topUpId: topUp.id }, 'Stripe did not open a top-up payment page');
      throw new AppError(
        'service_unavailable',
        'The payment page could not be opened; nothing was charged. Retry in a few minutes.',
      );
    }
    return repo.setSession(tx, topUp.id, session.sessionId, session.url);
  });
}

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

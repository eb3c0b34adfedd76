import type { AppContext, Tenant } from '../../context.js';
import { withTransaction, type Db } from '../../lib/db.js';
import { debitOrThrow, lockBalance, type DebitLine } from '../billing/ledger.js';
import { stateFeeCents, wholesaleCents, type EntityType } from '../billing/pricing.js';
import { changeOrderStatus, extendSubscriptionPeriod } from '../orders/order-status.js';
import { todayUtc } from '../filings/transitions.js';
import type { SubscriptionStatus } from '../orders/order-statuses.js';
import type { OrderRow } from '../orders/orders.repo.js';
import * as repo from './subscriptions.repo.js';
import type { SubscriptionRow } from './subscriptions.repo.js';
import { pastDueDetail, reactivatedDetail } from './subscriptions.views.js';

/*
 * Yearly renewal of subscription orders (registered_agent, annual_report; SUB-1 to SUB-9;
 * renewals are a graphile-worker task, see docs/architecture.md "Background work"). The public API leaves the
 * transitions open; they follow Stripe's subscription model:
 *  - a balance-billed subscription whose period has ended is charged the CURRENT wholesale of its product
 *    (annual_report: + the state's current annual report fee) from the prepaid balance, and its period moves a year;
 *  - when the balance cannot cover it: active -> past_due, nothing is debited; every later run retries, and a
 *    past_due subscription that can be paid is charged for every period it owes and goes back to active;
 *  - a checkout-paid (card at dashboard checkout) subscription goes past_due at period end: no card is stored;
 *  - cancelled orders (filingStatus cancelled, subscriptionStatus canceled) never renew; one-time orders have no
 * period. Each subscription is renewed in ONE transaction: order row lock, company lock, balance lock, debits, renewal
 * rows, status, event. Every subscriptionStatus change emits filing.status_changed and is recorded
 * (subscription_status_changes).
 */

/** What a run did to one subscription. */
type RenewalResult =
  | 'renewed' // active, charged, period advanced
  | 'reactivated' // past_due -> active, charged for every period owed
  | 'past_due' // active -> past_due (balance short, or checkout-paid)
  | 'still_past_due' // past_due and the balance is still short
  | 'canceled' // past_due registered agent superseded by newer active service in the same state
  | 'skipped' // no longer due when locked (a concurrent run renewed it, or it was cancelled)
  | 'failed'; // unexpected error; the transaction rolled back and the next run retries

/** One subscription's outcome. Money in cents; dates 'YYYY-MM-DD'. */
interface RenewalOutcome {
  orderId: string;
  result: RenewalResult;
  organizationId?: string;
  environment?: 'live' | 'test';
  orderType?: string;
  subscriptionStatus?: SubscriptionStatus;
  currentPeriodEnd?: string;
  /** Debited by this run (0 unless renewed or reactivated). */
  amountCents: number;
  /** Periods paid by this run. */
  periods: number;
  error?: string;
}

/** A whole run. `asOf` is the UTC date whose due subscriptions were processed. */
export interface RenewalRunSummary {
  asOf: string;
  counts: Record<RenewalResult, number>;
  outcomes: RenewalOutcome[];
}

/** Options of a run. `actor` goes to ledger `created_by` and the status-change records: `worker`, `cli`. */
export interface RenewalRunOptions extends repo.RenewalScope {
  /** 'YYYY-MM-DD' (UTC); default today. Subscriptions with current_period_end <= asOf are due. */
  asOf?: string;
  actor: string;
}

/**
 * Renews every subscription due on `asOf`, each in its own transaction (a failure of one is logged, reported as
 * `failed` and does not stop the others). Idempotent: running again for the same date charges nothing more.
 * @returns per-subscription outcomes and counts. @throws only when the due list cannot be read.
 */
export async function renewDueSubscriptions(ctx: AppContext, options: RenewalRunOptions): Promise<RenewalRunSummary> {
  const asOf = options.asOf ?? todayUtc();
  const ids = await repo.listDueSubscriptionIds(ctx.pool, asOf, options);
  const outcomes: RenewalOutcome[] = [];
  for (const id of ids) {
    try {
      outcomes.push(await renewSubscription(ctx, id, asOf, options.actor));
    } catch (err) {
      ctx.log.error({ err, orderId: id, asOf }, 'subscription renewal failed');
      outcomes.push({
        orderId: id,
        result: 'failed',
        amountCents: 0,
        periods: 0,
        error: err instanceof Error ? err.message : String(err),
      });
    }
  }
  const counts = { renewed: 0, reactivated: 0, past_due: 0, still_past_due: 0, canceled: 0, skipped: 0, failed: 0 };
  for (const o of outcomes) counts[o.result] += 1;
  ctx.log.info({ asOf, counts }, 'subscription renewal run');
  return { asOf, counts, outcomes };
}

/**
 * Renews one subscription if it is due on `asOf`, in ONE transaction (see the module comment for the rules).
 * @returns its outcome. @throws on database errors (nothing of this subscription is written then).
 */
function renewSubscription(ctx: AppContext, orderId: string, asOf: string, actor: string): Promise<RenewalOutcome> {
  return withTransaction(ctx.pool, async (tx) => {
    const sub = await repo.lockDueSubscription(tx, orderId, asOf);
    if (!sub) return { orderId, result: 'skipped', amountCents: 0, periods: 0 };
    const tenant: Tenant = { organizationId: sub.organization_id, environment: sub.environment };
    const entityType = await repo.lockCompany(tx, tenant, sub.company_id);
    if (!entityType) throw new Error(`company ${sub.company_id} of order ${sub.id} not found`);
    const change = (to: SubscriptionStatus, reason: string, detail?: Record<string, unknown>) =>
      changeStatus(tx, tenant, sub, to, sub.current_period_end, { reason, detail, actor });

    if (sub.billing === 'checkout') {
      // Checkout collected a one-off card payment; there is no stored card to charge again (docs/integrating.md, "Subscriptions").
      return outcome(await change('past_due', 'no_payment_method'), 'past_due');
    }
    if (sub.subscription_status === 'past_due' && sub.order_type === 'registered_agent') {
      const other = await repo.findOtherActiveAgent(tx, sub);
      if (other) return outcome(await change('canceled', 'superseded', { byOrderId: other.id }), 'canceled');
    }
    const periods = duePeriods(sub.current_period_end, asOf);
    const lines = await renewalLines(tx, sub, entityType, periods);
    const totalCents = lines.reduce((s, l) => s + l.amountCents, 0);
    const balance = await lockBalance(tx, tenant);
    if (balance < totalCents) {
      if (sub.subscription_status === 'past_due') return outcome(sub, 'still_past_due');
      const detail = pastDueDetail(totalCents, balance, periods[0].start);
      return outcome(await change('past_due', 'insufficient_balance', detail), 'past_due');
    }
    const entries = await debitOrThrow(tx, tenant, lines, actor);
    for (const [i, p] of periods.entries()) {
      const own = entries.filter((_, j) => lines[j].period === i);
      await repo.insertRenewal(tx, tenant, {
        orderId: sub.id,
        periodStart: p.start,
        periodEnd: p.end,
        createdBy: actor,
        amountCents: own.reduce((s, e) => s - e.amount_cents, 0),
        ledgerEntryIds: own.map((e) => e.id),
      });
    }
    const newEnd = periods[periods.length - 1].end;
    const paid = { amountCents: totalCents, periods: periods.length };
    if (sub.subscription_status === 'active')
      return outcome(await extendSubscriptionPeriod(tx, tenant, sub.id, newEnd), 'renewed', paid);
    const row = await changeStatus(tx, tenant, sub, 'active', newEnd, {
      reason: 'paid',
      detail: reactivatedDetail(totalCents),
      actor,
    });
    return outcome(row, 'reactivated', paid);
  });
}

/** One period to pay: [start, end), 'YYYY-MM-DD'. */
interface Period {
  start: string;
  end: string;
}

/** Every whole year from `periodEnd` that has started by `asOf` (normally one; more after a long past_due). */
function duePeriods(periodEnd: string, asOf: string): Period[] {
  const out: Period[] = [];
  for (let start = periodEnd; start <= asOf; start = addYears(start, 1)) out.push({ start, end: addYears(start, 1) });
  return out;
}

/**
 * `date` ('YYYY-MM-DD') plus `years`, clamped to the month's last day (Feb 29 -> Feb 28) like PostgreSQL's
 * `date + interval 'n years'`, which set the first period end at placement.
 */
function addYears(date: string, years: number): string {
  const [y, m, d] = date.split('-').map(Number);
  const lastDay = new Date(Date.UTC(y + years, m, 0)).getUTCDate();
  return new Date(Date.UTC(y + years, m - 1, Math.min(d, lastDay))).toISOString().slice(0, 10);
}

/**
 * The debit lines of the periods at today's prices, through the pricing module used at placement (BILL-1,
 * BILL-8, SUB-3, PRICE-4): the organization's wholesale of the product, and for annual reports the state's current fee
 * for the company's entity type. Each line is linked to the order.
 */
async function renewalLines(
  db: Db,
  sub: SubscriptionRow,
  entityType: EntityType,
  periods: Period[],
): Promise<Array<DebitLine & { period: number }>> {
  const service = await wholesaleCents(db, sub.organization_id, sub.order_type);
  const fee =
    sub.order_type === 'annual_report' ? await stateFeeCents(db, sub.filing_state, 'annual_report', entityType) : null;
  const what =
    sub.order_type === 'registered_agent'
      ? `Registered agent service in ${sub.filing_state}`
      : `Annual report service (${sub.filing_state})`;
  return periods.flatMap((p, period) => {
    const span = `renewal ${p.start} to ${p.end}`;
    const lines: Array<DebitLine & { period: number }> = [
      { amountCents: service, lineType: sub.order_type, description: `${what}, ${span}`, orderId: sub.id, period },
    ];
    if (fee !== null) {
      lines.push({
        amountCents: fee,
        lineType: 'state_fee',
        description: `${sub.filing_state} annual report state fee (${entityType}), ${span}`,
        orderId: sub.id,
        period,
      });
    }
    return lines;
  });
}

/** Changes the status (and period end), emits filing.status_changed and records the change, in `tx`. */
async function changeStatus(
  tx: Db,
  tenant: Tenant,
  sub: SubscriptionRow,
  to: SubscriptionStatus,
  periodEnd: string,
  why: { reason: string; detail?: Record<string, unknown>; actor: string },
): Promise<OrderRow> {
  // ORD-14: the orders module writes the row and the event; the subscription's own history is kept here.
  const { order, event } = await changeOrderStatus(tx, tenant, {
    orderId: sub.id,
    actor: why.actor,
    subscription: { status: to, currentPeriodEnd: periodEnd },
  });
  await repo.insertStatusChange(tx, tenant, {
    orderId: sub.id,
    fromStatus: sub.subscription_status,
    toStatus: to,
    reason: why.reason,
    detail: why.detail,
    eventId: event.id,
    actor: why.actor,
  });
  return order;
}

/** The columns of an order (as locked, or as changed) that an outcome reports. */
type OutcomeColumns = Pick<
  OrderRow,
  'id' | 'organization_id' | 'environment' | 'order_type' | 'subscription_status' | 'current_period_end'
>;

function outcome(row: OutcomeColumns, result: RenewalResult, paid = { amountCents: 0, periods: 0 }): RenewalOutcome {
  return {
    orderId: row.id,
    result,
    organizationId: row.organization_id,
    environment: row.environment,
    orderType: row.order_type,
    subscriptionStatus: row.subscription_status ?? undefined,
    currentPeriodEnd: row.current_period_end ?? undefined,
    ...paid,
  };
}

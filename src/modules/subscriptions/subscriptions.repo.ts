import type { Environment, Tenant } from '../../context.js';
import { many, one, type Db } from '../../lib/db.js';
import { newId } from '../../lib/ids.js';
import type { SubscriptionStatus } from '../orders/order-statuses.js';
import { orderSummaryColumns, type OrderRow, type OrderSummaryRow } from '../orders/orders.repo.js';

/** The product types sold as yearly subscriptions (SUB-1, ORD-RA-5, ORD-AR-2). */
const SUBSCRIPTION_ORDER_TYPES = ['registered_agent', 'annual_report'] as const;

/** One of SUBSCRIPTION_ORDER_TYPES. */
type SubscriptionOrderType = (typeof SUBSCRIPTION_ORDER_TYPES)[number];

/**
 * A due subscription order as the renewal run locks it: the orders module's summary columns and the period end,
 * narrowed to what the due query ({@link lockDueSubscription}) selects. Dates 'YYYY-MM-DD' (UTC); money in cents.
 */
export interface SubscriptionRow extends OrderSummaryRow, Pick<OrderRow, 'current_period_end'> {
  order_type: SubscriptionOrderType;
  subscription_status: SubscriptionStatus;
  /** End (exclusive) of the period paid for; the renewal is due on this date. */
  current_period_end: string;
}

const COLUMNS = `${orderSummaryColumns('o')}, o.current_period_end`;

// Live subscriptions of a subscription product whose period has ended. A past-due checkout subscription has nothing
// left to do (no stored card), so it is not picked up again.
const DUE = `o.order_type IN ('registered_agent', 'annual_report') AND o.subscription_status IN ('active', 'past_due')
  AND o.filing_status <> 'cancelled' AND o.current_period_end IS NOT NULL AND o.current_period_end <= $1::date
  AND NOT (o.billing = 'checkout' AND o.subscription_status = 'past_due')`;

/** Narrows a run to one organization and/or environment (operators, tests). */
export interface RenewalScope {
  organizationId?: string;
  environment?: Environment;
}

/** Ids of the subscriptions due on `asOf` ('YYYY-MM-DD'), oldest period end first. Not locked: each renewal re-checks. */
export async function listDueSubscriptionIds(db: Db, asOf: string, scope: RenewalScope = {}): Promise<string[]> {
  const rows = await many<{ id: string }>(
    db,
    `SELECT o.id FROM orders o
      WHERE ${DUE} AND ($2::text IS NULL OR o.organization_id = $2) AND ($3::text IS NULL OR o.environment = $3)
      ORDER BY o.current_period_end, o.id`,
    [asOf, scope.organizationId ?? null, scope.environment ?? null],
  );
  return rows.map((r) => r.id);
}

/**
 * Locks the order row (SELECT … FOR UPDATE, the same lock a filing transition takes first) and returns it when it
 * is still due on `asOf`, else null: a concurrent run renewed it, or it was cancelled meanwhile.
 */
export function lockDueSubscription(tx: Db, orderId: string, asOf: string): Promise<SubscriptionRow | null> {
  return one<SubscriptionRow>(tx, `SELECT ${COLUMNS} FROM orders o WHERE ${DUE} AND o.id = $2 FOR UPDATE OF o`, [
    asOf,
    orderId,
  ]);
}

/**
 * Locks the company row like POST /orders does for an existing company (before the balance), so reactivating a
 * registered agent cannot race an order for new service in the same state. @returns its entity type, or null.
 */
export async function lockCompany(tx: Db, tenant: Tenant, companyId: string): Promise<'LLC' | 'CORP' | null> {
  const row = await one<{ entity_type: 'LLC' | 'CORP' }>(
    tx,
    'SELECT entity_type FROM companies WHERE id = $1 AND organization_id = $2 AND environment = $3 FOR UPDATE',
    [companyId, tenant.organizationId, tenant.environment],
  );
  return row?.entity_type ?? null;
}

/** Another active registered agent service of the company in the same state (ORD-RA-4, SUB-6), or null. */
export function findOtherActiveAgent(db: Db, sub: SubscriptionRow): Promise<{ id: string } | null> {
  return one(
    db,
    `SELECT id FROM orders
      WHERE organization_id = $1 AND environment = $2 AND company_id = $3 AND filing_state = $4 AND id <> $5
        AND order_type = 'registered_agent' AND subscription_status = 'active' AND filing_status <> 'cancelled'
      LIMIT 1`,
    [sub.organization_id, sub.environment, sub.company_id, sub.filing_state, sub.id],
  );
}

/** One paid period to record. Money in cents; dates 'YYYY-MM-DD'. */
export interface NewRenewal {
  orderId: string;
  periodStart: string;
  periodEnd: string;
  amountCents: number;
  ledgerEntryIds: string[];
  createdBy: string;
}

/**
 * Records a paid period. The unique (order_id, period_start) is the last guard against charging a period twice:
 * a duplicate fails the transaction, which rolls its debit back.
 */
export async function insertRenewal(tx: Db, tenant: Tenant, r: NewRenewal): Promise<string> {
  const id = newId('subscriptionRenewal');
  await tx.query(
    `INSERT INTO subscription_renewals (id, order_id, organization_id, environment, period_start, period_end, amount_cents, ledger_entry_ids, created_by)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [
      id,
      r.orderId,
      tenant.organizationId,
      tenant.environment,
      r.periodStart,
      r.periodEnd,
      r.amountCents,
      r.ledgerEntryIds,
      r.createdBy,
    ],
  );
  return id;
}

/** A subscriptionStatus change to record (`reason`: insufficient_balance, no_payment_method, paid, superseded). */
export interface NewStatusChange {
  orderId: string;
  fromStatus: SubscriptionStatus | null;
  toStatus: SubscriptionStatus;
  reason: string;
  detail?: Record<string, unknown>;
  eventId: string;
  actor: string;
}

/** Appends a subscription_status_changes row in the caller's transaction. */
export async function insertStatusChange(tx: Db, tenant: Tenant, c: NewStatusChange): Promise<void> {
  await tx.query(
    `INSERT INTO subscription_status_changes (id, order_id, organization_id, environment, from_status, to_status, reason, detail, event_id, actor)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [
      newId('subscriptionStatusChange'),
      c.orderId,
      tenant.organizationId,
      tenant.environment,
      c.fromStatus,
      c.toStatus,
      c.reason,
      c.detail ?? {},
      c.eventId,
      c.actor,
    ],
  );
}

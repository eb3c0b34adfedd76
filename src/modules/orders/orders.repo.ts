import type { Tenant } from '../../context.js';
import { one, type Db } from '../../lib/db.js';
import type { CompanyRow } from '../companies/companies.repo.js';
import { KEY_TTL_HOURS } from '../idempotency/idempotency.repo.js';

/** An orders row (migrations/001). Money in cents; dates 'YYYY-MM-DD'. */
export interface OrderRow {
  id: string;
  organization_id: string;
  environment: 'live' | 'test';
  group_id: string;
  company_id: string;
  user_id: string;
  order_type: string;
  filing_state: string;
  filing_status: string;
  filing_type: string | null;
  filing_date: string | null;
  subscription_status: string | null;
  exception_code: string | null;
  exception_message: string | null;
  details: Record<string, unknown>;
  billing: 'balance' | 'checkout';
  amount_cents: number;
  retail_cents: number | null;
  margin_cents: number | null;
  created_at: Date;
  updated_at: Date;
}

/**
 * The orders columns other modules read: the row without `details` and the retail/margin split, which stay with
 * the order's own module (and the console's full view, which selects o.*). One list, so each SELECT and its row
 * type agree.
 */
export const ORDER_SUMMARY_COLUMNS = [
  'id', 'organization_id', 'environment', 'group_id', 'company_id', 'user_id', 'order_type', 'filing_state', 'filing_status',
  'filing_type', 'filing_date', 'subscription_status', 'exception_code', 'exception_message', 'billing', 'amount_cents', 'created_at', 'updated_at',
] as const satisfies ReadonlyArray<keyof OrderRow>;

/** An orders row as read through {@link ORDER_SUMMARY_COLUMNS}. Money in cents; dates 'YYYY-MM-DD'. */
export type OrderSummaryRow = Pick<OrderRow, (typeof ORDER_SUMMARY_COLUMNS)[number]>;

/**
 * {@link ORDER_SUMMARY_COLUMNS} as a SELECT or RETURNING list; with `alias` each column is qualified
 * (`orderSummaryColumns('o')` gives 'o.id, o.organization_id, …') for queries that join other tables.
 */
export function orderSummaryColumns(alias?: string): string {
  return ORDER_SUMMARY_COLUMNS.map((c) => (alias ? `${alias}.${c}` : c)).join(', ');
}

/** The company fields the order rules read. */
export type OrderCompanyRow = Pick<CompanyRow, 'id' | 'entity_type' | 'formation_state' | 'ein'>;

/**
 * The tenant's company, or null. With `forUpdate` the row stays locked until the transaction ends, so two
 * requests for one company (EIN, registered agent, qualification) are checked one after the other.
 */
export function findOrderCompany(db: Db, tenant: Tenant, companyId: string, forUpdate = false): Promise<OrderCompanyRow | null> {
  return one<OrderCompanyRow>(
    db,
    `SELECT id, entity_type, formation_state, ein FROM companies
      WHERE id = $1 AND organization_id = $2 AND environment = $3${forUpdate ? ' FOR UPDATE' : ''}`,
    [companyId, tenant.organizationId, tenant.environment],
  );
}

/** The company's active registered agent service in `state` (registeredAgent rule 4), or null. */
export function findActiveRegisteredAgent(db: Db, tenant: Tenant, companyId: string, state: string): Promise<OrderRow | null> {
  return one<OrderRow>(
    db,
    `SELECT * FROM orders
      WHERE organization_id = $1 AND environment = $2 AND company_id = $3 AND order_type = 'registered_agent'
        AND filing_state = $4 AND filing_status <> 'cancelled' AND subscription_status = 'active'
      ORDER BY created_at LIMIT 1`,
    [tenant.organizationId, tenant.environment, companyId, state],
  );
}

/** The company's non-cancelled EIN order (EIN rule: "has requested an EIN"), or null. */
export function findEinOrder(db: Db, tenant: Tenant, companyId: string): Promise<{ id: string } | null> {
  return one(
    db,
    `SELECT id FROM orders
      WHERE organization_id = $1 AND environment = $2 AND company_id = $3 AND order_type = 'ein' AND filing_status <> 'cancelled'
      LIMIT 1`,
    [tenant.organizationId, tenant.environment, companyId],
  );
}

/**
 * The company's PAID foreign qualification in `state` (foreignQualification rule 4), or null. Not paid:
 * cancelled orders (their debit was reversed), orders stopped in exception 460/461 (payment required or
 * failed), and checkout orders without a succeeded payment.
 */
export function findPaidQualification(db: Db, tenant: Tenant, companyId: string, state: string): Promise<{ id: string } | null> {
  return one(
    db,
    `SELECT o.id FROM orders o
      WHERE o.organization_id = $1 AND o.environment = $2 AND o.company_id = $3 AND o.order_type = 'foreign_qualification'
        AND o.filing_state = $4 AND o.filing_status <> 'cancelled'
        AND NOT (o.filing_status = 'exception' AND o.exception_code IN ('460', '461'))
        AND (o.billing = 'balance'
             OR EXISTS (SELECT 1 FROM payments p WHERE p.group_id = o.group_id AND p.status = 'succeeded'))
      LIMIT 1`,
    [tenant.organizationId, tenant.environment, companyId, state],
  );
}

/** An order_groups row to insert (one per request). */
export interface NewOrderGroup {
  id: string;
  userId: string;
  companyId: string;
  filingState: string;
  source: 'api' | 'dashboard';
  billing: 'balance' | 'checkout';
  request: Record<string, unknown>;
  totalCents: number;
  /** The request's Idempotency-Key, when it carried one. */
  idempotencyKey?: string | null;
}

/**
 * Inserts the order_groups row of one request, in the placing transaction. `totalCents`: the whole request's
 * debit or charge, in cents.
 */
export async function insertOrderGroup(tx: Db, tenant: Tenant, g: NewOrderGroup): Promise<void> {
  await tx.query(
    `INSERT INTO order_groups (id, organization_id, environment, user_id, company_id, filing_state, source, billing, request, total_cents, idempotency_key)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
    [g.id, tenant.organizationId, tenant.environment, g.userId, g.companyId, g.filingState, g.source, g.billing, g.request, g.totalCents, g.idempotencyKey ?? null],
  );
}

/**
 * The group an earlier request with this Idempotency-Key placed within the key's 24 hours, with its orders (oldest
 * first), or null. A group placed longer ago gives its key up here (IDEM-7), so a reused expired key places a new
 * order, as it does for every other POST.
 */
export async function findGroupByIdempotencyKey(db: Db, tenant: Tenant, key: string): Promise<{ id: string; company_id: string; total_cents: number; orders: OrderRow[] } | null> {
  await db.query(
    `UPDATE order_groups SET idempotency_key = NULL
      WHERE organization_id = $1 AND environment = $2 AND idempotency_key = $3 AND created_at < now() - make_interval(hours => ${KEY_TTL_HOURS})`,
    [tenant.organizationId, tenant.environment, key],
  );
  const group = await one<{ id: string; company_id: string; total_cents: number }>(
    db,
    'SELECT id, company_id, total_cents FROM order_groups WHERE organization_id = $1 AND environment = $2 AND idempotency_key = $3',
    [tenant.organizationId, tenant.environment, key],
  );
  if (!group) return null;
  const { rows } = await db.query<OrderRow>('SELECT * FROM orders WHERE group_id = $1 ORDER BY created_at, id', [group.id]);
  return { ...group, orders: rows };
}

/**
 * An orders row to insert; filing_status starts at submitted (spec "States and transitions"). A subscription order
 * (subscriptionStatus set: registered_agent, annual_report) also gets current_period_end = placement date (UTC) + 1 year,
 * when the yearly renewal falls due (src/modules/subscriptions, migration 010).
 */
export interface NewOrder {
  id: string;
  groupId: string;
  companyId: string;
  userId: string;
  orderType: string;
  filingState: string;
  filingType: string | null;
  subscriptionStatus: 'active' | null;
  details: Record<string, unknown>;
  billing: 'balance' | 'checkout';
  amountCents: number;
  retailCents: number | null;
  marginCents: number | null;
}

/** Inserts one order item as `submitted` and returns the row; call in the placing transaction, after insertOrderGroup. */
export async function insertOrder(tx: Db, tenant: Tenant, o: NewOrder): Promise<OrderRow> {
  const row = await one<OrderRow>(
    tx,
    `INSERT INTO orders (id, organization_id, environment, group_id, company_id, user_id, order_type, filing_state, filing_status,
                         filing_type, subscription_status, details, billing, amount_cents, retail_cents, margin_cents, current_period_end)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'submitted', $9, $10, $11, $12, $13, $14, $15,
             CASE WHEN $10::text IS NOT NULL THEN ((now() AT TIME ZONE 'UTC')::date + interval '1 year')::date END) RETURNING *`,
    [o.id, tenant.organizationId, tenant.environment, o.groupId, o.companyId, o.userId, o.orderType, o.filingState,
      o.filingType, o.subscriptionStatus, o.details, o.billing, o.amountCents, o.retailCents, o.marginCents],
  );
  return row!;
}

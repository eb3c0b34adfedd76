import type { Tenant } from '../../context.js';
import { many, one, type Db } from '../../lib/db.js';
import { newId } from '../../lib/ids.js';
import { withFields } from '../../lib/objects.js';
import type { CompanyRow } from '../companies/companies.repo.js';
import { KEY_TTL_HOURS } from '../idempotency/idempotency.repo.js';
import type { FilingStatus, SubscriptionStatus } from './order-statuses.js';

/**
 * An orders row, every column (migrations/001, 010): the one row type of an order. Other modules read narrower views
 * of it ({@link OrderSummaryRow}, `Pick<OrderRow, …>`), never a type of their own. Money in cents; dates 'YYYY-MM-DD'.
 */
export interface OrderRow {
  id: string;
  organization_id: string;
  environment: 'live' | 'test';
  group_id: string;
  company_id: string;
  user_id: string;
  order_type: string;
  filing_state: string;
  filing_status: FilingStatus;
  filing_type: string | null;
  filing_date: string | null;
  subscription_status: SubscriptionStatus | null;
  exception_code: string | null;
  exception_message: string | null;
  details: Record<string, unknown>;
  billing: 'balance' | 'checkout';
  amount_cents: number;
  retail_cents: number | null;
  margin_cents: number | null;
  created_at: Date;
  updated_at: Date;
  /** Subscriptions: end (exclusive) of the period paid for, 'YYYY-MM-DD'; null on one-time filings. */
  current_period_end: string | null;
}

/**
 * The orders columns other modules read: the row without `details` and the retail/margin split, which stay with
 * the order's own module (and the console's full view, which selects o.*). One list, so each SELECT and its row
 * type agree.
 */
const ORDER_SUMMARY_COLUMNS = [
  'id',
  'organization_id',
  'environment',
  'group_id',
  'company_id',
  'user_id',
  'order_type',
  'filing_state',
  'filing_status',
  'filing_type',
  'filing_date',
  'subscription_status',
  'exception_code',
  'exception_message',
  'billing',
  'amount_cents',
  'created_at',
  'updated_at',
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
export function findOrderCompany(
  db: Db,
  tenant: Tenant,
  companyId: string,
  forUpdate = false,
): Promise<OrderCompanyRow | null> {
  return one<OrderCompanyRow>(
    db,
    `SELECT id, entity_type, formation_state, ein FROM companies
      WHERE id = $1 AND organization_id = $2 AND environment = $3${forUpdate ? ' FOR UPDATE' : ''}`,
    [companyId, tenant.organizationId, tenant.environment],
  );
}

/** The company's active registered agent service in `state` (ORD-RA-4), or null. */
export function findActiveRegisteredAgent(
  db: Db,
  tenant: Tenant,
  companyId: string,
  state: string,
): Promise<OrderRow | null> {
  return one<OrderRow>(
    db,
    `SELECT * FROM orders
      WHERE organization_id = $1 AND environment = $2 AND company_id = $3 AND order_type = 'registered_agent'
        AND filing_state = $4 AND filing_status <> 'cancelled' AND subscription_status = 'active'
      ORDER BY created_at LIMIT 1`,
    [tenant.organizationId, tenant.environment, companyId, state],
  );
}

/**
 * ORD-RA-7: an agent the company supplied for `state` on an earlier order that is not cancelled (a formation, annual
 * report or foreign qualification filed there with `details.registeredAgent`), as `{id}` of the latest such order;
 * null when none.
 */
export function findSuppliedAgentOnFile(
  db: Db,
  tenant: Tenant,
  companyId: string,
  state: string,
): Promise<{ id: string } | null> {
  return one(
    db,
    `SELECT id FROM orders
      WHERE organization_id = $1 AND environment = $2 AND company_id = $3 AND filing_state = $4
        AND order_type IN ('formation', 'annual_report', 'foreign_qualification') AND filing_status <> 'cancelled'
        AND jsonb_typeof(details -> 'registeredAgent') = 'object'
      ORDER BY created_at DESC LIMIT 1`,
    [tenant.organizationId, tenant.environment, companyId, state],
  );
}

/**
 * CAL-35: how many consecutive filing years one annual report order may cover in `state` for the entity type (the
 * compliance rule's `prepayYears`); 1 when the rule gives none.
 */
export async function findPrepayYears(db: Db, state: string, entityType: 'LLC' | 'CORP'): Promise<number> {
  const row = await one<{ years: number | null }>(
    db,
    `SELECT (rule -> $2 ->> 'prepayYears')::int AS years FROM compliance_rules WHERE state = $1`,
    [state, entityType === 'LLC' ? 'llc' : 'corporation'],
  );
  return row?.years ?? 1;
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
 * The company's PAID foreign qualification in `state` (ORD-FQ-4), or null. Not paid:
 * cancelled orders (their debit was reversed), orders stopped in exception 460/461 (payment required or
 * failed), and checkout orders without a succeeded payment.
 */
export function findPaidQualification(
  db: Db,
  tenant: Tenant,
  companyId: string,
  state: string,
): Promise<{ id: string } | null> {
  return one(
    db,
    `SELECT o.id FROM orders o
      WHERE o.organization_id = $1 AND o.environment = $2 AND o.company_id = $3 AND o.order_type = 'foreign_qualification'
        AND o.filing_state = $4 AND o.filing_status <> 'cancelled'
        AND NOT (o.filing_status = 'exception' AND o.exception_code IN ('460', '461'))
        AND (o.billing = 'balance'
             OR EXISTS (SELECT 1 FROM payments p WHERE p.group_id = o.group_id AND payment_status(p.id) = 'succeeded'))
      LIMIT 1`,
    [tenant.organizationId, tenant.environment, companyId, state],
  );
}

/**
 * The group an earlier request with this Idempotency-Key placed within the key's 24 hours, with its orders (oldest
 * first), or null. A group placed longer ago gives its key up here (IDEM-7), so a reused expired key places a new
 * order, as it does for every other POST.
 */
export async function findGroupByIdempotencyKey(
  db: Db,
  tenant: Tenant,
  key: string,
): Promise<{ id: string; company_id: string; total_cents: number; orders: OrderRow[] } | null> {
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
  const { rows } = await db.query<OrderRow>('SELECT * FROM orders WHERE group_id = $1 ORDER BY created_at, id', [
    group.id,
  ]);
  return withFields(group, { orders: rows });
}

/**
 * Writes a status change and, for a filing status, its history row, in ONE statement (see order-status.ts).
 * `keepSubscriptionStatus`: only the period end changes. @returns the whole row after the change, or null.
 */
export async function updateOrderStatus(
  tx: Db,
  tenant: Tenant,
  c: {
    orderId: string;
    actor: string;
    filing?: {
      from: FilingStatus | null;
      to: FilingStatus;
      exceptionCode?: string | null;
      exceptionMessage?: string | null;
      filingDate?: string | null;
    };
    subscription?: { status: SubscriptionStatus | null; currentPeriodEnd?: string };
  },
  keepSubscriptionStatus = false,
): Promise<OrderRow | null> {
  const f = c.filing;
  const s = c.subscription;
  return one(
    tx,
    `WITH changed AS (
       UPDATE orders SET
              filing_status = CASE WHEN $4::boolean THEN $5 ELSE filing_status END,
              exception_code = CASE WHEN $4::boolean THEN $6 ELSE exception_code END,
              exception_message = CASE WHEN $4::boolean THEN $7 ELSE exception_message END,
              filing_date = COALESCE($8::date, filing_date),
              subscription_status = CASE WHEN $9::boolean THEN $10 ELSE subscription_status END,
              current_period_end = COALESCE($11::date, current_period_end),
              updated_at = now()
        WHERE id = $1 AND organization_id = $2 AND environment = $3
       RETURNING *
     ), history AS (
       INSERT INTO order_status_history (id, order_id, organization_id, environment, from_status, to_status, exception_code, exception_message, filing_date, actor)
       SELECT $12, changed.id, $2, $3, $13, $5, $6, $7, $8::date, $14 FROM changed WHERE $4::boolean
     )
     SELECT * FROM changed`,
    [
      c.orderId,
      tenant.organizationId,
      tenant.environment,
      Boolean(f),
      f?.to ?? null,
      f?.exceptionCode ?? null,
      f?.exceptionMessage ?? null,
      f?.filingDate ?? null,
      Boolean(s) && !keepSubscriptionStatus,
      s?.status ?? null,
      s?.currentPeriodEnd ?? null,
      newId('statusChange'),
      f?.from ?? null,
      c.actor,
    ],
  );
}

/**
 * Filters of a tenant's order list (the partner portal, PORTAL-30); each optional. `from` and `to` are UTC days
 * ('YYYY-MM-DD', both included) of created_at. `afterId` is the last order of the previous page (keyset).
 */
export interface TenantOrderFilter {
  filingStatus?: FilingStatus;
  orderType?: string;
  filingState?: string;
  userId?: string;
  from?: string;
  to?: string;
  afterId?: string;
  limit: number;
}

/** An order of a tenant's list, with its company's legal name and its user's name. */
export type TenantOrderListRow = OrderSummaryRow & { company_legal_name: string; user_name: string };

/**
 * One page of the tenant's orders, newest first by (created_at, id), `limit + 1` rows so the caller can tell whether
 * another page follows. Each filter has an index ending in that order (migration 110), and the cursor is a row
 * comparison on it, so a deep page costs what the first does and nothing counts the tenant's orders. An `afterId`
 * that is not one of the tenant's orders gives an empty page.
 */
export function listTenantOrders(db: Db, tenant: Tenant, f: TenantOrderFilter): Promise<TenantOrderListRow[]> {
  const params: unknown[] = [tenant.organizationId, tenant.environment];
  const where = ['o.organization_id = $1', 'o.environment = $2'];
  const add = (sql: string, value: unknown) => {
    params.push(value);
    where.push(sql.replaceAll('?', `$${params.length}`));
  };
  if (f.filingStatus) add('o.filing_status = ?', f.filingStatus);
  if (f.orderType) add('o.order_type = ?', f.orderType);
  if (f.filingState) add('o.filing_state = ?', f.filingState);
  if (f.userId) add('o.user_id = ?', f.userId);
  if (f.from) add(`o.created_at >= (?::date)::timestamp AT TIME ZONE 'UTC'`, f.from);
  if (f.to) add(`o.created_at < (?::date + 1)::timestamp AT TIME ZONE 'UTC'`, f.to);
  if (f.afterId)
    add(
      '(o.created_at, o.id) < (SELECT a.created_at, a.id FROM orders a WHERE a.id = ? AND a.organization_id = $1 AND a.environment = $2)',
      f.afterId,
    );
  params.push(f.limit + 1);
  return many<TenantOrderListRow>(
    db,
    `SELECT ${orderSummaryColumns('o')}, c.legal_name AS company_legal_name, u.full_name AS user_name
       FROM orders o JOIN companies c ON c.id = o.company_id JOIN users u ON u.id = o.user_id
      WHERE ${where.join(' AND ')}
      ORDER BY o.created_at DESC, o.id DESC LIMIT $${params.length}`,
    params,
  );
}

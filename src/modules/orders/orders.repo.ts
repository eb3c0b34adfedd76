import type { Tenant } from '../../context.js';
import { manyPrepared, one, type Db } from '../../lib/db.js';
import { newId } from '../../lib/ids.js';
import { withFields } from '../../lib/objects.js';
import { type LedgerLine, ledgerLineValues } from '../billing/billing.repo.js';
import { insufficientBalance } from '../billing/ledger.js';
import type { CompanyColumns, CompanyRow } from '../companies/companies.repo.js';
import { eventValues } from '../events/events.repo.js';
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

/** One order of a placement, as inserted (filing_status submitted). Money in cents. */
export interface PlacementOrder {
  id: string;
  company_id: string;
  user_id: string;
  order_type: string;
  filing_state: string;
  filing_type: string | null;
  subscription_status: 'active' | null;
  details: Record<string, unknown>;
  billing: 'balance' | 'checkout';
  amount_cents: number;
  retail_cents: number | null;
  margin_cents: number | null;
}

/** Everything one placement inserts besides the ledger and the events (ORD-13). */
export interface PlacementRows {
  /** A company formed by this placement, with the slug to use; null when the orders are for an existing company. */
  company: { id: string; slug: string; columns: CompanyColumns; adminUserId: string } | null;
  group: NewOrderGroup;
  orders: PlacementOrder[];
  /** Status-history actor of the `submitted` rows. */
  actor: string;
}

/** Everything {@link insertPlacements} writes for one placement, planned in full by the caller (ids, amounts, event data, ledger lines). */
export interface PlacementWrite {
  rows: PlacementRows;
  /** One `submitted` history row per order, in the order of `rows.orders`. */
  history: Array<{ id: string; order_id: string }>;
  /** One filing.status_changed event per order: {id, type, data}. */
  events: Array<{ id: string; type: string; data: Record<string, unknown> }>;
  /** Ledger entries to post last (empty for checkout). */
  debits: LedgerLine[];
  /** The balance must be at least this many cents for the debits to be posted. */
  minBalanceCents: number;
}

/**
 * What the placement statement did with one placement: placed (with the orders' created_at), or nothing because of
 * the user, the slug, or an earlier order group with the same Idempotency-Key (see `place_order_groups_v2`).
 */
export type PlacementOutcome =
  | { outcome: 'placed'; createdAt: Date }
  | { outcome: 'unknown_user' | 'slug_taken' | 'earlier' };

/**
 * Writes placements of ONE tenant in ONE statement through the database function `place_order_groups_v2` (ORD-13,
 * ORD-17): for each, the company of a formation and its admin link, the order group, the orders, their `submitted`
 * history, the events with their deliveries; and last the debits of all of them in one posting (the balance row is
 * locked only for it and the commit). On a pool the statement is its own transaction; on a client it joins the
 * caller's.
 * @returns one outcome per write, in order; a write refused for its user, slug or Idempotency-Key wrote nothing.
 * @throws AppError insufficient_balance (402) when the balance is below the sum of the writes' `minBalanceCents`:
 * NOTHING was written (inside a transaction the transaction is aborted and must be rolled back). With several
 * writes the caller cannot tell which of them the balance would cover: it places them one at a time.
 */
export async function insertPlacements(db: Db, tenant: Tenant, writes: PlacementWrite[]): Promise<PlacementOutcome[]> {
  try {
    const [row] = await manyPrepared<{ r: { outcomes: Array<PlacementOutcome['outcome']>; created_at: string } }>(
      db,
      'place_order_groups_v2',
      'SELECT place_order_groups_v2($1::jsonb) AS r',
      [JSON.stringify(placementsPayload(tenant, writes))],
    );
    const { outcomes, created_at } = row!.r;
    const createdAt = new Date(created_at);
    return outcomes.map((outcome) => (outcome === 'placed' ? { outcome, createdAt } : { outcome }));
  } catch (err) {
    const e = err as { code?: string; detail?: string };
    if (e.code === 'FC402') {
      const needed = writes.reduce((sum, w) => sum + w.minBalanceCents, 0);
      throw insufficientBalance(tenant, needed, Number(e.detail));
    }
    throw err;
  }
}

/**
 * The batch as `place_order_groups_v2` takes it (migration 097): the groups, companies and orders as arrays of values
 * in the function's column order, a company or order tagged with `n`, the 1-based position of its placement's group;
 * an order's group, company, user, filing state and billing are its group's (ORD-4), so they are not repeated. The
 * events and debits are emit_events' and post_ledger_entries' rows, with their placements' `n` in a list beside them.
 */
function placementsPayload(tenant: Tenant, writes: PlacementWrite[]) {
  const payload = {
    organization_id: tenant.organizationId,
    environment: tenant.environment,
    idempotency_key_ttl_hours: KEY_TTL_HOURS,
    groups: [] as unknown[][],
    companies: [] as unknown[][],
    orders: [] as unknown[][],
    events: [] as unknown[][],
    event_placements: [] as number[],
    debits: [] as unknown[][],
    debit_placements: [] as number[],
  };
  for (const [i, w] of writes.entries()) {
    const n = i + 1;
    const { group, company, orders, actor } = w.rows;
    payload.groups.push([
      group.id,
      group.userId,
      group.companyId,
      company !== null,
      group.filingState,
      group.source,
      group.billing,
      group.request,
      group.totalCents,
      group.idempotencyKey ?? null,
      w.minBalanceCents,
      actor,
    ]);
    if (company) payload.companies.push(companyValues(n, company.id, company.slug, company.columns));
    for (const [j, o] of orders.entries()) {
      sameAsGroup(o, group);
      payload.orders.push([
        n,
        o.id,
        w.history[j]!.id,
        o.order_type,
        o.filing_type,
        o.subscription_status,
        o.details,
        o.amount_cents,
        o.retail_cents,
        o.margin_cents,
      ]);
    }
    for (const e of w.events) {
      payload.events.push(eventValues(e));
      payload.event_placements.push(n);
    }
    for (const d of w.debits) {
      payload.debits.push(ledgerLineValues(d));
      payload.debit_placements.push(n);
    }
  }
  return payload;
}

/**
 * The statement takes an order's company, user, filing state and billing from its group (ORD-4): an order planned with
 * others would be written with its group's, so it is refused here instead. @throws Error naming the column.
 */
function sameAsGroup(o: PlacementOrder, group: NewOrderGroup): void {
  const differs =
    (o.company_id !== group.companyId && 'company_id') ||
    (o.user_id !== group.userId && 'user_id') ||
    (o.filing_state !== group.filingState && 'filing_state') ||
    (o.billing !== group.billing && 'billing');
  if (differs) throw new Error(`order ${o.id}: ${differs} differs from its group's (ORD-4)`);
}

/** A formed company's row for `place_order_groups_v2`, in the function's column order (migration 097). */
function companyValues(n: number, id: string, slug: string, c: CompanyColumns): unknown[] {
  return [
    n,
    id,
    slug,
    c.legal_name,
    c.trade_name,
    c.ein,
    c.entity_type,
    c.structure_type,
    c.tax_election,
    c.fiscal_end_month,
    c.formation_date,
    c.formation_state,
    c.principal_address,
    c.mailing_address,
    c.officers,
  ];
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
      from: string | null;
      to: string;
      exceptionCode?: string | null;
      exceptionMessage?: string | null;
      filingDate?: string | null;
    };
    subscription?: { status: string | null; currentPeriodEnd?: string };
  },
  keepSubscriptionStatus = false,
): Promise<(OrderRow & { current_period_end: string | null }) | null> {
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

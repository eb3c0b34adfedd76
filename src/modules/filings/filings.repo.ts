import type { Environment, Tenant } from '../../context.js';
import { many, one, type Db } from '../../lib/db.js';
import type { LedgerEntryRow } from '../billing/ledger.js';
import type { DocumentRow } from '../documents/documents.repo.js';
import { orderSummaryColumns, type OrderRow, type OrderSummaryRow } from '../orders/orders.repo.js';
import type { FilingStatus } from '../orders/order-statuses.js';
import { type RequestGroup, type RequestOrder, requestFromOrders } from '../orders/placed-request.js';

/** An order_status_history row; filing_date 'YYYY-MM-DD'. */
export interface StatusHistoryRow {
  id: string;
  from_status: string | null;
  to_status: string;
  exception_code: string | null;
  exception_message: string | null;
  filing_date: string | null;
  actor: string;
  created_at: Date;
}

const ORDER_COLUMNS = orderSummaryColumns();

/**
 * Reads an order and locks its row until the transaction ends (SELECT … FOR UPDATE), so two transitions of
 * one order serialize and the second sees the first's result. `tenant` null: any tenant (operators).
 */
export function lockOrder(tx: Db, tenant: Tenant | null, orderId: string): Promise<OrderSummaryRow | null> {
  return one<OrderSummaryRow>(
    tx,
    `SELECT ${ORDER_COLUMNS} FROM orders WHERE id = $1 ${tenantFilter(tenant, 2)} FOR UPDATE`,
    [orderId, ...tenantParams(tenant)],
  );
}

/**
 * The status of the formation placed in the same request as an order (its order group), or null when there is
 * none. The formation's row is share-locked until the transaction ends, so a cancellation under way is waited for
 * and seen (FIL-13).
 */
export async function formationStatusOfGroup(tx: Db, groupId: string): Promise<string | null> {
  const row = await one<{ filing_status: string }>(
    tx,
    `SELECT filing_status FROM orders WHERE group_id = $1 AND order_type = 'formation' FOR SHARE`,
    [groupId],
  );
  return row?.filing_status ?? null;
}

/** An order's status history, oldest first. */
export function listStatusHistory(db: Db, orderId: string): Promise<StatusHistoryRow[]> {
  return many<StatusHistoryRow>(
    db,
    `SELECT id, from_status, to_status, exception_code, exception_message, filing_date, actor, created_at
       FROM order_status_history WHERE order_id = $1 ORDER BY created_at, id`,
    [orderId],
  );
}

/** Filters of the operator's order queue. Every filter is optional. */
export interface OrderQueueFilter {
  filingStatus?: FilingStatus;
  filingState?: string;
  orderType?: string;
  environment?: Environment;
  organizationId?: string;
  /** Cursor: orders after this id (the queue is oldest first). */
  startingAfter?: string;
  limit: number;
}

/** The operator's queue across tenants, oldest first (the order the filing team works in). Fetches limit + 1. */
export function listOrdersForOperators(
  db: Db,
  f: OrderQueueFilter,
): Promise<Array<OrderSummaryRow & { company_legal_name: string; organization_name: string }>> {
  const where: string[] = [];
  const params: unknown[] = [];
  const add = (sql: string, value: unknown) => {
    params.push(value);
    where.push(sql.replace('?', `$${params.length}`));
  };
  if (f.filingStatus) add('o.filing_status = ?', f.filingStatus);
  if (f.filingState) add('o.filing_state = ?', f.filingState);
  if (f.orderType) add('o.order_type = ?', f.orderType);
  if (f.environment) add('o.environment = ?', f.environment);
  if (f.organizationId) add('o.organization_id = ?', f.organizationId);
  if (f.startingAfter) add('o.id > ?', f.startingAfter);
  params.push(f.limit + 1);
  return many(
    db,
    `SELECT ${orderSummaryColumns('o')}, c.legal_name AS company_legal_name, g.name AS organization_name
       FROM orders o JOIN companies c ON c.id = o.company_id JOIN organizations g ON g.id = o.organization_id
      ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
      ORDER BY o.id LIMIT $${params.length}`,
    params,
  );
}

/** An order (every column, o.*) with what the order page shows around it. */
export interface OrderDetailRow extends OrderRow {
  organization_name: string;
  /** The request that placed the order's group, as kept or put together again from the group's orders (ORD-19). */
  group_request: Record<string, unknown>;
  group_source: string;
  group_total_cents: number;
  user_name: string;
  user_email: string;
  company: Record<string, unknown>;
}

/** The order (any organization, any environment: operators see everything) or null. */
export async function findOrderDetail(db: Db, orderId: string): Promise<OrderDetailRow | null> {
  const row = await one<
    OrderDetailRow & { group_kept: Omit<RequestGroup, 'formsCompany'> | null; group_orders: RequestOrder[] | null }
  >(
    db,
    `SELECT o.*, org.name AS organization_name, g.request AS group_request, g.source AS group_source, g.total_cents AS group_total_cents,
            u.full_name AS user_name, u.email AS user_email, to_jsonb(c) AS company,
            CASE WHEN g.request IS NULL THEN jsonb_build_object(
              'userId', g.user_id, 'filingState', g.filing_state, 'companyId', g.company_id)
            END AS group_kept,
            CASE WHEN g.request IS NULL THEN (
              SELECT jsonb_agg(jsonb_build_object('orderType', s.order_type, 'details', s.details) ORDER BY s.id)
                FROM orders s WHERE s.group_id = g.id)
            END AS group_orders
       FROM orders o
       JOIN organizations org ON org.id = o.organization_id
       JOIN order_groups g ON g.id = o.group_id
       JOIN users u ON u.id = o.user_id
       JOIN companies c ON c.id = o.company_id
      WHERE o.id = $1`,
    [orderId],
  );
  if (!row) return null;
  const { group_kept, group_orders, ...order } = row;
  if (group_kept) {
    const orders = group_orders ?? [];
    // A group forms its company exactly when it has a formation order (ORD-3: every other product names a company).
    const formsCompany = orders.some((o) => o.orderType === 'formation');
    order.group_request = requestFromOrders({ ...group_kept, formsCompany }, orders);
  }
  return order;
}

/** Another order placed by the same request: id, product and filing status. */
export type SiblingOrderRow = Pick<OrderRow, 'id' | 'order_type' | 'filing_status'>;

/** The other orders placed by the same request (e.g. the EIN ordered with a formation), by id. */
export function findSiblingOrders(db: Db, groupId: string, orderId: string): Promise<SiblingOrderRow[]> {
  return many<SiblingOrderRow>(
    db,
    'SELECT id, order_type, filing_status FROM orders WHERE group_id = $1 AND id <> $2 ORDER BY id',
    [groupId, orderId],
  );
}

/** An event of an order as the operators' views read it. */
export interface OrderEventRow {
  id: string;
  type: string;
  data: Record<string, unknown>;
  created_at: Date;
}

/** The events of one order (data.orderId), oldest first, within the order's tenant. */
export function findOrderEvents(
  db: Db,
  o: { id: string; organization_id: string; environment: string },
): Promise<OrderEventRow[]> {
  return many<OrderEventRow>(
    db,
    `SELECT id, type, data, created_at FROM events
      WHERE data ? 'orderId' AND data->>'orderId' = $1 AND organization_id = $2 AND environment = $3 ORDER BY id`,
    [o.id, o.organization_id, o.environment],
  );
}

/** A webhook delivery with its endpoint URL and every attempt (status code null: no HTTP answer). */
export interface DeliveryRow {
  id: string;
  event_id: string;
  endpoint_id: string;
  url: string;
  status: string;
  attempt_count: number;
  next_attempt_at: Date | null;
  attempts: Array<{
    attempt_number: number;
    status_code: number | null;
    duration_ms: number;
    error: string | null;
    created_at: string;
  }>;
}

/** Deliveries of the given events with every attempt (oldest first). */
export function findDeliveries(db: Db, eventIds: string[]): Promise<DeliveryRow[]> {
  if (!eventIds.length) return Promise.resolve([]);
  return many<DeliveryRow>(
    db,
    `SELECT d.id, d.event_id, d.endpoint_id, e.url, d.status, d.attempt_count, d.next_attempt_at,
            COALESCE((SELECT json_agg(json_build_object('attempt_number', a.attempt_number, 'status_code', a.status_code,
                        'duration_ms', a.duration_ms, 'error', a.error, 'created_at', a.created_at) ORDER BY a.attempt_number)
                        FROM webhook_attempts a WHERE a.delivery_id = d.id), '[]') AS attempts
       FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
      WHERE d.event_id = ANY($1) ORDER BY d.id`,
    [eventIds],
  );
}

/** Ledger entries that reference the order (debits, reversals), oldest first; amounts in cents, debits negative. */
export function findOrderLedger(db: Db, orderId: string): Promise<LedgerEntryRow[]> {
  return many<LedgerEntryRow>(db, 'SELECT * FROM ledger_entries WHERE order_id = $1 ORDER BY id', [orderId]);
}

/** Documents attached to the order, oldest first. */
export function findOrderDocuments(db: Db, orderId: string): Promise<DocumentRow[]> {
  return many<DocumentRow>(db, 'SELECT * FROM documents WHERE order_id = $1 ORDER BY created_at, id', [orderId]);
}

function tenantFilter(tenant: Tenant | null, firstParam: number): string {
  return tenant ? `AND organization_id = $${firstParam} AND environment = $${firstParam + 1}` : '';
}

function tenantParams(tenant: Tenant | null): string[] {
  return tenant ? [tenant.organizationId, tenant.environment] : [];
}

/** Names of operators by id, for showing `operator:<id>` actors. */
export async function operatorNames(db: Db, ids: string[]): Promise<Map<string, string>> {
  if (!ids.length) return new Map();
  const rows = await many<{ id: string; name: string; email: string }>(
    db,
    'SELECT id, name, email FROM operators WHERE id = ANY($1)',
    [ids],
  );
  return new Map(rows.map((r) => [r.id, `${r.name} <${r.email}>`]));
}

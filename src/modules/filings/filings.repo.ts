import type { Environment, Tenant } from '../../context.js';
import { many, one, type Db } from '../../lib/db.js';
import { orderSummaryColumns, type OrderSummaryRow } from '../orders/orders.repo.js';
import type { FilingStatus } from './transitions.js';

/**
 * An orders row as the filing pipeline reads it: the orders module's summary columns, with the statuses narrowed
 * to the pipeline's own types. Dates 'YYYY-MM-DD'; money in cents.
 */
export interface OrderRow extends OrderSummaryRow {
  filing_status: FilingStatus;
  subscription_status: 'active' | 'canceled' | 'past_due' | null;
}

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
export function lockOrder(tx: Db, tenant: Tenant | null, orderId: string): Promise<OrderRow | null> {
  return one<OrderRow>(tx, `SELECT ${ORDER_COLUMNS} FROM orders WHERE id = $1 ${tenantFilter(tenant, 2)} FOR UPDATE`, [orderId, ...tenantParams(tenant)]);
}

/** Reads an order without locking. `tenant` null: any tenant. */
export function findOrder(db: Db, tenant: Tenant | null, orderId: string): Promise<OrderRow | null> {
  return one<OrderRow>(db, `SELECT ${ORDER_COLUMNS} FROM orders WHERE id = $1 ${tenantFilter(tenant, 2)}`, [orderId, ...tenantParams(tenant)]);
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
export function listOrdersForOperators(db: Db, f: OrderQueueFilter): Promise<Array<OrderRow & { company_legal_name: string; organization_name: string }>> {
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

function tenantFilter(tenant: Tenant | null, firstParam: number): string {
  return tenant ? `AND organization_id = $${firstParam} AND environment = $${firstParam + 1}` : '';
}

function tenantParams(tenant: Tenant | null): string[] {
  return tenant ? [tenant.organizationId, tenant.environment] : [];
}

import type { Environment } from '../../context.js';
import { many, one, type Db } from '../../lib/db.js';
import type { LedgerEntryRow } from '../billing/ledger.js';
import type { DocumentRow } from '../documents/documents.repo.js';
import type { StatusHistoryRow } from '../filings/filings.repo.js';
import type { OrderRow } from '../orders/orders.repo.js';

/** Statuses the filing team works on (CONS-2). */
export const QUEUE_STATUSES = ['submitted', 'pending', 'exception'] as const;

/** One of QUEUE_STATUSES. */
export type QueueStatus = (typeof QUEUE_STATUSES)[number];

/** Queue filters; empty strings mean "any". */
export interface QueueFilter {
  environment: Environment;
  status: QueueStatus | '';
  state: string;
  orderType: string;
  organizationId: string;
  /** An order id, company id or a piece of the company's legal name. */
  q: string;
}

/** A queue row: the order with its organization and company names; `status_since` is the last history row's time. */
export interface QueueRow
  extends Pick<OrderRow, 'id' | 'environment' | 'order_type' | 'filing_state' | 'filing_type' | 'exception_code' | 'created_at' | 'organization_id' | 'company_id'> {
  filing_status: QueueStatus;
  status_since: Date;
  organization_name: string;
  company_name: string;
}

// One WHERE clause for the list and the counts, so the numbers on the tabs match the rows.
function where(f: QueueFilter, withStatus: boolean): { sql: string; params: unknown[] } {
  const params: unknown[] = [f.environment];
  const parts = ['o.environment = $1'];
  const add = (sql: string, value: unknown) => {
    params.push(value);
    parts.push(sql.replace('?', `$${params.length}`));
  };
  add('o.filing_status = ANY(?)', withStatus && f.status ? [f.status] : [...QUEUE_STATUSES]);
  if (f.state) add('o.filing_state = ?', f.state);
  if (f.orderType) add('o.order_type = ?', f.orderType);
  if (f.organizationId) add('o.organization_id = ?', f.organizationId);
  if (f.q) {
    // The search text is compared as an id, and searched in the legal name with its LIKE wildcards taken literally.
    params.push(f.q, `%${f.q.replace(/[\\%_]/g, '\\$&')}%`);
    parts.push(`(o.id = $${params.length - 1} OR c.id = $${params.length - 1} OR c.legal_name ILIKE $${params.length})`);
  }
  return { sql: parts.join(' AND '), params };
}

/**
 * One page of the queue, oldest order first (the partial index orders_queue_order serves it), keyset-paginated: `afterId`
 * is the last order of the previous page (its created_at and id are the cursor), so a deep page costs what the first
 * does (API-8). An unknown `afterId` gives an empty page.
 */
export function listQueue(db: Db, f: QueueFilter, limit: number, afterId?: string): Promise<QueueRow[]> {
  const w = where(f, true);
  if (afterId) {
    w.params.push(afterId);
    w.sql += ` AND (o.created_at, o.id) > ((SELECT a.created_at FROM orders a WHERE a.id = $${w.params.length}), $${w.params.length})`;
  }
  return many<QueueRow>(
    db,
    `SELECT o.id, o.environment, o.order_type, o.filing_state, o.filing_status, o.filing_type, o.exception_code, o.created_at,
            COALESCE((SELECT max(h.created_at) FROM order_status_history h WHERE h.order_id = o.id), o.created_at) AS status_since,
            org.id AS organization_id, org.name AS organization_name, c.id AS company_id, c.legal_name AS company_name
       FROM orders o
       JOIN organizations org ON org.id = o.organization_id
       JOIN companies c ON c.id = o.company_id
      WHERE ${w.sql}
      ORDER BY o.created_at, o.id
      LIMIT $${w.params.length + 1}`,
    [...w.params, limit],
  );
}

/** How many orders match the filter in each queue status (the status filter itself is ignored). */
export async function countQueue(db: Db, f: QueueFilter): Promise<Record<QueueStatus, number>> {
  const w = where(f, false);
  const rows = await many<{ filing_status: QueueStatus; n: number }>(
    db,
    // The company is joined only when the search needs its name: the counts then read the queue's index alone.
    `SELECT o.filing_status, count(*)::int AS n FROM orders o ${f.q ? 'JOIN companies c ON c.id = o.company_id' : ''} WHERE ${w.sql} GROUP BY 1`,
    w.params,
  );
  const out: Record<QueueStatus, number> = { submitted: 0, pending: 0, exception: 0 };
  for (const r of rows) out[r.filing_status] = r.n;
  return out;
}

/** Values for the filter menus: states, products and organizations that have orders in the environment. */
export async function queueFacets(db: Db, environment: Environment): Promise<{ states: string[]; orderTypes: string[]; organizations: Array<{ id: string; name: string }> }> {
  const [states, types, orgs] = await Promise.all([
    many<{ v: string }>(db, `SELECT DISTINCT filing_state AS v FROM orders WHERE environment = $1 ORDER BY 1`, [environment]),
    many<{ v: string }>(db, `SELECT DISTINCT order_type AS v FROM orders WHERE environment = $1 ORDER BY 1`, [environment]),
    many<{ id: string; name: string }>(db, `SELECT id, name FROM organizations ORDER BY lower(name)`),
  ]);
  return { states: states.map((r) => r.v), orderTypes: types.map((r) => r.v), organizations: orgs };
}

/** An order (every column, o.*) with what the order page shows around it. */
export interface OrderDetailRow extends OrderRow {
  organization_name: string;
  group_request: Record<string, unknown>;
  group_source: string;
  group_total_cents: number;
  user_name: string;
  user_email: string;
  company: Record<string, unknown>;
}

/** The order (any organization, any environment: operators see everything) or null. */
export function findOrderDetail(db: Db, orderId: string): Promise<OrderDetailRow | null> {
  return one<OrderDetailRow>(
    db,
    `SELECT o.*, org.name AS organization_name, g.request AS group_request, g.source AS group_source, g.total_cents AS group_total_cents,
            u.full_name AS user_name, u.email AS user_email, to_jsonb(c) AS company
       FROM orders o
       JOIN organizations org ON org.id = o.organization_id
       JOIN order_groups g ON g.id = o.group_id
       JOIN users u ON u.id = o.user_id
       JOIN companies c ON c.id = o.company_id
      WHERE o.id = $1`,
    [orderId],
  );
}

/** The other orders placed by the same request (e.g. the EIN ordered with a formation). */
export function findSiblingOrders(db: Db, groupId: string, orderId: string) {
  return many<{ id: string; order_type: string; filing_status: string }>(
    db, 'SELECT id, order_type, filing_status FROM orders WHERE group_id = $1 AND id <> $2 ORDER BY id', [groupId, orderId]);
}

/** An order's status history, oldest first, with the actor of each change. */
export function findStatusHistory(db: Db, orderId: string) {
  return many<StatusHistoryRow>(db, 'SELECT * FROM order_status_history WHERE order_id = $1 ORDER BY created_at, id', [orderId]);
}

/** The events of one order (data.orderId), oldest first, within the order's tenant. */
export function findOrderEvents(db: Db, o: { id: string; organization_id: string; environment: string }) {
  return many<{ id: string; type: string; data: Record<string, unknown>; created_at: Date }>(
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
  attempts: Array<{ attempt_number: number; status_code: number | null; duration_ms: number; error: string | null; created_at: string }>;
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
export function findOrderLedger(db: Db, orderId: string) {
  return many<LedgerEntryRow>(db, 'SELECT * FROM ledger_entries WHERE order_id = $1 ORDER BY id', [orderId]);
}

/** Documents attached to the order, oldest first. */
export function findOrderDocuments(db: Db, orderId: string) {
  return many<DocumentRow>(db, 'SELECT * FROM documents WHERE order_id = $1 ORDER BY created_at, id', [orderId]);
}

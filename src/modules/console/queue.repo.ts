import type { Environment } from '../../context.js';
import { many, type Db } from '../../lib/db.js';
import type { OrderRow } from '../orders/orders.repo.js';
import { ORDER_TYPES } from '../orders/orders.schemas.js';
import { withFields } from '../../lib/objects.js';

/** Statuses the filing team works on (CONS-2). */
export const QUEUE_STATUSES = ['submitted', 'pending', 'exception'] as const;

/** Every order type the filing team files: the API's products, the DBA of formation tier 3 and certificates. */
const QUEUE_ORDER_TYPES = [...ORDER_TYPES, 'dba', 'certificate_of_good_standing'] as const;

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
  extends Pick<
    OrderRow,
    | 'id'
    | 'environment'
    | 'order_type'
    | 'filing_state'
    | 'filing_type'
    | 'exception_code'
    | 'created_at'
    | 'organization_id'
    | 'company_id'
  > {
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
    parts.push(
      `(o.id = $${params.length - 1} OR c.id = $${params.length - 1} OR c.legal_name ILIKE $${params.length})`,
    );
  }
  return { sql: parts.join(' AND '), params };
}

/**
 * One page of the queue, oldest order first (the partial index orders_queue_order serves it), keyset-paginated:
 * `afterId` is the last order of the previous page (its created_at and id are the cursor), so a deep page costs what
 * the first does (API-8). An unknown `afterId` gives an empty page.
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

/** Counts above this are shown as "more than": counting stops there, so a long queue costs what a short one does. */
export const QUEUE_COUNT_CAP = 1000;

/**
 * How many orders match the filter in each queue status (the status filter itself is ignored), each counted up to
 * QUEUE_COUNT_CAP + 1 through the partial index orders_queue: a number above the cap means "more than the cap".
 */
export async function countQueue(db: Db, f: QueueFilter): Promise<Record<QueueStatus, number>> {
  const join = f.q ? 'JOIN companies c ON c.id = o.company_id' : '';
  const params: unknown[] = [];
  const parts = QUEUE_STATUSES.map((status) => {
    const w = where(withFields(f, { status }), true);
    const offset = params.length;
    params.push(...w.params);
    // Renumber this part's placeholders after the parts before it.
    const sql = w.sql.replace(/\$(\d+)/g, (_m, n: string) => `$${Number(n) + offset}`);
    return `SELECT '${status}' AS filing_status, (SELECT count(*)::int FROM (SELECT 1 FROM orders o ${join} WHERE ${sql} LIMIT ${QUEUE_COUNT_CAP + 1}) x) AS n`;
  });
  const rows = await many<{ filing_status: QueueStatus; n: number }>(db, parts.join(' UNION ALL '), params);
  const out: Record<QueueStatus, number> = { submitted: 0, pending: 0, exception: 0 };
  for (const r of rows) out[r.filing_status] = r.n;
  return out;
}

/**
 * Values for the filter menus: every jurisdiction of the fee schedule, every order type, every organization. Read
 * from those small tables and lists, never from the orders, so the menus cost the same at any number of orders.
 */
export async function queueFacets(
  db: Db,
): Promise<{ states: string[]; orderTypes: string[]; organizations: Array<{ id: string; name: string }> }> {
  const [states, orgs] = await Promise.all([
    many<{ v: string }>(db, 'SELECT state AS v FROM state_fees ORDER BY 1'),
    many<{ id: string; name: string }>(db, 'SELECT id, name FROM organizations ORDER BY lower(name)'),
  ]);
  return { states: states.map((r) => r.v), orderTypes: [...QUEUE_ORDER_TYPES].sort(), organizations: orgs };
}

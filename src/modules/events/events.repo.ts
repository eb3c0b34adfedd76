import type { Tenant } from '../../context.js';
import { many, onePrepared, type Db } from '../../lib/db.js';
import { currentTraceparent } from '../../lib/trace-context.js';

/** An events row. */
export interface EventRow {
  id: string;
  type: string;
  data: Record<string, unknown>;
  created_at: Date;
}

/** Filters of GET /events. */
export interface EventFilter {
  type?: string;
  orderId?: string;
  /** Events whose data names this company (the portal's events explorer, PORTAL-23). */
  companyId?: string;
  /** The one event of this id. */
  id?: string;
  startingAfter?: string;
  limit: number;
}

/** The tenant's events, newest first (ids are time-sortable); fetches limit + 1 rows (see toPage). */
export function listEvents(db: Db, tenant: Tenant, f: EventFilter): Promise<EventRow[]> {
  const params: unknown[] = [tenant.organizationId, tenant.environment];
  const where = ['organization_id = $1', 'environment = $2'];
  const add = (sql: string, value: unknown) => {
    params.push(value);
    where.push(sql.replace('?', `$${params.length}`));
  };
  if (f.type) add('type = ?', f.type);
  if (f.orderId) add(`data->>'orderId' = ?`, f.orderId);
  if (f.companyId) add(`data->>'companyId' = ?`, f.companyId);
  if (f.id) add('id = ?', f.id);
  if (f.startingAfter) add('id < ?', f.startingAfter);
  params.push(f.limit + 1);
  return many<EventRow>(
    db,
    `SELECT id, type, data, created_at FROM events WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT $${params.length}`,
    params,
  );
}

/** One event of the tenant, or null. */
export function findEvent(db: Db, tenant: Tenant, id: string): Promise<EventRow | null> {
  return onePrepared<EventRow>(
    db,
    'event_by_id',
    'SELECT id, type, data, created_at FROM events WHERE id = $1 AND organization_id = $2 AND environment = $3',
    [id, tenant.organizationId, tenant.environment],
  );
}

/**
 * Writes events of one tenant and their deliveries (one per subscribed enabled endpoint, due now) in one statement
 * through the database function emit_events (EVT-5). @returns each event's id and created_at.
 */
export async function insertEvents(
  tx: Db,
  tenant: Tenant,
  rows: Array<{ id: string; type: string; data: Record<string, unknown> }>,
): Promise<Array<{ id: string; created_at: Date }>> {
  const { rows: written } = await tx.query<{ id: string; created_at: Date }>(
    'SELECT id, created_at FROM emit_events($1, $2, $3::jsonb)',
    [tenant.organizationId, tenant.environment, JSON.stringify(rows.map(eventRow))],
  );
  return written;
}

/**
 * An event as `emit_events` reads it, by name (migrations/repeatable/emit_events.sql): `{id, type, data}`, and the
 * writer's `traceparent` when a span is active (OPS-31; left out otherwise, read as NULL).
 */
function eventRow(e: { id: string; type: string; data: Record<string, unknown> }): {
  id: string;
  type: string;
  data: Record<string, unknown>;
  traceparent?: string;
} {
  return { id: e.id, type: e.type, data: e.data, traceparent: currentTraceparent() ?? undefined };
}

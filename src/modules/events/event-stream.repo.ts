import type { Tenant } from '../../context.js';
import { one, many, type Db } from '../../lib/db.js';
import type { EventRow } from './events.repo.js';

/**
 * A place in a tenant's events in commit order: after every event whose (inserting transaction, id) sorts at or
 * before (xactId, id). `xactId` is a PostgreSQL xid8 as a decimal string.
 */
export interface StreamPosition {
  xactId: string;
  id: string;
}

/** An events row with its transaction id and the reading snapshot's xmin (both xid8 as decimal strings). */
export interface StreamRow extends EventRow {
  xact_id: string;
  /** Every transaction below this one has ended: rows with xact_id < xmin can no longer be overtaken. */
  xmin: string;
}

/**
 * Up to `limit` events of the tenant after `after`, in commit order (xact_id, id), each with the snapshot's xmin.
 * Rows whose xact_id is not below xmin may still be joined by rows of older transactions: the caller stops there.
 */
export function eventsAfter(db: Db, tenant: Tenant, after: StreamPosition, limit: number): Promise<StreamRow[]> {
  return many<StreamRow>(
    db,
    `SELECT id, type, data, created_at, xact_id::text AS xact_id, pg_snapshot_xmin(pg_current_snapshot())::text AS xmin
       FROM events
      WHERE organization_id = $1 AND environment = $2 AND (xact_id, id) > ($3::xid8, $4::text)
      ORDER BY xact_id, id
      LIMIT $5`,
    [tenant.organizationId, tenant.environment, after.xactId, after.id, limit],
  );
}

/** The position of one of the tenant's events (to resume after it), or null when the tenant has no such event. */
export function positionOf(db: Db, tenant: Tenant, eventId: string): Promise<StreamPosition | null> {
  return one<StreamPosition>(
    db,
    'SELECT xact_id::text AS "xactId", id FROM events WHERE id = $1 AND organization_id = $2 AND environment = $3',
    [eventId, tenant.organizationId, tenant.environment],
  );
}

/**
 * The position "from now on": before every transaction still running (and so before every event not yet
 * committed). Events committed by transactions newer than the oldest running one may follow too.
 */
export async function currentPosition(db: Db): Promise<StreamPosition> {
  const row = await one<{ xmin: string }>(db, 'SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS xmin');
  return { xactId: row!.xmin, id: '' };
}

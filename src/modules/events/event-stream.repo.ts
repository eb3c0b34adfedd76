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

/** An events row with its transaction id and the reading snapshot's boundary (both xid8 as decimal strings). */
export interface StreamRow extends EventRow {
  xact_id: string;
  /** Every row with xact_id below this one is final: no transaction that could still add one is running. */
  boundary: string;
}

/*
 * The boundary of a snapshot. Cheap: its xmin, the oldest transaction still running anywhere on the database
 * server. Precise: the oldest running transaction that may belong to this database, else the snapshot's xmax. A
 * backend is bound to one database, so a transaction holding relation locks only in another database (another
 * application, a long load elsewhere on a shared server) can never write these events and must not hold the
 * stream up. A running transaction whose database cannot be told (no relation lock seen) still counts.
 * pg_locks is readable by every role; reading it costs more, so the precise form is used only when rows are
 * held back by the cheap one.
 */
const BOUNDARY = `CASE WHEN NOT $6::boolean THEN pg_snapshot_xmin(snap.s) ELSE COALESCE(
  (SELECT min(x) FROM pg_snapshot_xip(snap.s) AS x
    WHERE (x::text::numeric % 4294967296)::text NOT IN (
      SELECT t.transactionid::text
        FROM pg_locks t JOIN pg_locks r ON r.virtualtransaction = t.virtualtransaction
       WHERE t.locktype = 'transactionid' AND r.locktype = 'relation'
         AND r.database NOT IN (0, (SELECT oid FROM pg_database WHERE datname = current_database())))),
  pg_snapshot_xmax(snap.s)) END`;

/**
 * Up to `limit` events of the tenant after `after`, in commit order (xact_id, id), each with the snapshot's
 * boundary (cheap or `precise`, see above). Rows whose xact_id is not below the boundary may still be joined by rows
 * of older transactions: the caller stops there.
 */
export function eventsAfter(
  db: Db,
  tenant: Tenant,
  after: StreamPosition,
  limit: number,
  precise = false,
): Promise<StreamRow[]> {
  return many<StreamRow>(
    db,
    `WITH snap AS MATERIALIZED (SELECT pg_current_snapshot() AS s)
     SELECT e.id, e.type, e.data, e.created_at, e.xact_id::text AS xact_id, (${BOUNDARY})::text AS boundary
       FROM snap, events e
      WHERE e.organization_id = $1 AND e.environment = $2 AND (e.xact_id, e.id) > ($3::xid8, $4::text)
      ORDER BY e.xact_id, e.id
      LIMIT $5`,
    [tenant.organizationId, tenant.environment, after.xactId, after.id, limit, precise],
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

/** The snapshot's xmax (xid8 as a decimal string): no transaction at or above it has started yet. */
export async function transactionHorizon(db: Db): Promise<string> {
  const row = await one<{ xmax: string }>(db, 'SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS xmax');
  return row!.xmax;
}

/**
 * The position "from now on": before every transaction still running (and so before every event not yet
 * committed). Events committed by transactions newer than the oldest running one may follow too.
 */
export async function currentPosition(db: Db): Promise<StreamPosition> {
  const row = await one<{ xmin: string }>(db, 'SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS xmin');
  return { xactId: row!.xmin, id: '' };
}

/**
 * Records that the stream hub `hubId` streams `tenants` until `ttlSeconds` from now by the database clock (the rows
 * of `event_stream_tenants` the placement reads, OPS-6): new rows are added, existing ones pushed back.
 */
export async function keepStreamTenants(db: Db, hubId: string, tenants: Tenant[], ttlSeconds: number): Promise<void> {
  await db.query(
    `INSERT INTO event_stream_tenants (organization_id, environment, hub_id, expires_at)
     SELECT t.organization_id, t.environment, $3, now() + make_interval(secs => $4)
       FROM unnest($1::text[], $2::text[]) AS t(organization_id, environment)
     ON CONFLICT (organization_id, environment, hub_id) DO UPDATE SET expires_at = EXCLUDED.expires_at`,
    [tenants.map((t) => t.organizationId), tenants.map((t) => t.environment), hubId, ttlSeconds],
  );
}

/** Removes the hub's rows of `tenants`, or all of its rows when `tenants` is null (OPS-6). */
export async function dropStreamTenants(db: Db, hubId: string, tenants: Tenant[] | null): Promise<void> {
  await db.query(
    `DELETE FROM event_stream_tenants s
      WHERE s.hub_id = $1
        AND ($2::text[] IS NULL
             OR (s.organization_id, s.environment) IN (SELECT * FROM unnest($2::text[], $3::text[])))`,
    [hubId, tenants?.map((t) => t.organizationId) ?? null, tenants?.map((t) => t.environment) ?? null],
  );
}

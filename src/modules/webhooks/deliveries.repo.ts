import type { Tenant } from '../../context.js';
import { many, one, type Db } from '../../lib/db.js';
import { newId } from '../../lib/ids.js';
import { currentTraceparent } from '../../lib/trace-context.js';
import { eventsWritten } from '../events/events.service.js';

/**
 * pending: an attempt is scheduled or running; succeeded: a 2xx arrived; failed: no attempt follows (retries used up,
 * a test ping's single attempt failed, or the endpoint was disabled or deleted).
 */
export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

/** A webhook_deliveries row with its event's type. */
export interface DeliveryRow {
  id: string;
  organization_id: string;
  environment: 'live' | 'test';
  endpoint_id: string;
  event_id: string;
  event_type: string;
  status: DeliveryStatus;
  attempt_count: number;
  auto_retry: boolean;
  next_attempt_at: Date | null;
  last_attempt_at: Date | null;
  failure_reason: string | null;
  created_at: Date;
  updated_at: Date;
}

/** A webhook_attempts row: one HTTP try. */
export interface AttemptRow {
  id: string;
  delivery_id: string;
  attempt_number: number;
  url: string;
  status_code: number | null;
  duration_ms: number;
  response_body: string | null;
  /** The receiver's response headers where kept (PORTAL-21); null otherwise and for attempts before they were kept. */
  response_headers: Record<string, string> | null;
  error: string | null;
  created_at: Date;
}

/** Filters of GET /webhook-deliveries; every one optional. */
export interface DeliveryFilters {
  endpointId?: string;
  eventId?: string;
  status?: DeliveryStatus;
}

const DELIVERY_COLUMNS = `d.id, d.organization_id, d.environment, d.endpoint_id, d.event_id, e.type AS event_type, d.status,
  d.attempt_count, d.auto_retry, d.next_attempt_at, d.last_attempt_at, d.failure_reason, d.created_at, d.updated_at`;

/** A page of the tenant's deliveries, newest first (`limit + 1` rows). */
export function listDeliveries(
  db: Db,
  tenant: Tenant,
  f: DeliveryFilters,
  limit: number,
  startingAfter?: string,
): Promise<DeliveryRow[]> {
  return many<DeliveryRow>(
    db,
    `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
      WHERE d.organization_id = $1 AND d.environment = $2
        AND ($3::text IS NULL OR d.endpoint_id = $3) AND ($4::text IS NULL OR d.event_id = $4)
        AND ($5::text IS NULL OR d.status = $5) AND ($6::text IS NULL OR d.id < $6)
      ORDER BY d.id DESC LIMIT $7`,
    [
      tenant.organizationId,
      tenant.environment,
      f.endpointId ?? null,
      f.eventId ?? null,
      f.status ?? null,
      startingAfter ?? null,
      limit + 1,
    ],
  );
}

/** The tenant's delivery, optionally locked; null when absent. */
export function findDelivery(db: Db, tenant: Tenant, id: string, forUpdate = false): Promise<DeliveryRow | null> {
  return one<DeliveryRow>(
    db,
    `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
      WHERE d.id = $1 AND d.organization_id = $2 AND d.environment = $3 ${forUpdate ? 'FOR UPDATE OF d' : ''}`,
    [id, tenant.organizationId, tenant.environment],
  );
}

/** Every attempt of one of the tenant's deliveries, first to last (attempts carry the tenant, so the read filters on it). */
export function listAttempts(db: Db, tenant: Tenant, deliveryId: string): Promise<AttemptRow[]> {
  return many<AttemptRow>(
    db,
    'SELECT * FROM webhook_attempts WHERE delivery_id = $1 AND organization_id = $2 AND environment = $3 ORDER BY attempt_number',
    [deliveryId, tenant.organizationId, tenant.environment],
  );
}

/** What makes a delivery pending again for one manual attempt now: no automatic retries follow (resend, recovery). */
const REOPEN = `status = 'pending', auto_retry = false, failure_reason = NULL, next_attempt_at = now(), updated_at = now()`;

/** Makes a delivery pending again for one manual attempt now (resend; no automatic retries follow). */
export async function reopenDelivery(db: Db, id: string): Promise<void> {
  await db.query(`UPDATE webhook_deliveries SET ${REOPEN} WHERE id = $1`, [id]);
}

/**
 * Re-queues, as {@link reopenDelivery} does, the next `limit` failed deliveries of one endpoint of the tenant whose
 * ids lie after `after` and before `before` (PORTAL-22), in id order, through the endpoint's index. Locks them first,
 * in id order like every multi-row write of deliveries. @returns how many were re-queued and the last id reached.
 */
export async function reopenFailedDeliveries(
  db: Db,
  tenant: Tenant,
  r: { endpointId: string; after: string; before: string; limit: number },
): Promise<{ count: number; last: string | null }> {
  const row = await one<{ count: number; last: string | null }>(
    db,
    `WITH batch AS (
       SELECT id FROM webhook_deliveries
        WHERE endpoint_id = $1 AND organization_id = $2 AND environment = $3 AND id > $4 AND id < $5 AND status = 'failed'
        ORDER BY id LIMIT $6 FOR UPDATE
     ), reopened AS (
       UPDATE webhook_deliveries d SET ${REOPEN} FROM batch WHERE d.id = batch.id RETURNING d.id
     )
     SELECT count(*)::int AS count, max(id) AS last FROM reopened`,
    [r.endpointId, tenant.organizationId, tenant.environment, r.after, r.before, r.limit],
  );
  return row ?? { count: 0, last: null };
}

/** How many of one endpoint's deliveries with ids between `after` and `before` are failed (PORTAL-22). */
export async function countFailedDeliveries(
  db: Db,
  tenant: Tenant,
  r: { endpointId: string; after: string; before: string },
): Promise<number> {
  const row = await one<{ n: number }>(
    db,
    `SELECT count(*)::int AS n FROM webhook_deliveries
      WHERE endpoint_id = $1 AND organization_id = $2 AND environment = $3 AND id > $4 AND id < $5 AND status = 'failed'`,
    [r.endpointId, tenant.organizationId, tenant.environment, r.after, r.before],
  );
  return row?.n ?? 0;
}

/**
 * Moves a pending delivery's next retry to now (resend while it waits). The job still queued for the old time
 * does nothing when it runs: by then the delivery has succeeded, or its failure set a later next_attempt_at
 * (the task's staleness check).
 */
export async function bringRetryForward(db: Db, id: string): Promise<void> {
  await db.query(
    `UPDATE webhook_deliveries SET next_attempt_at = now(), updated_at = now() WHERE id = $1 AND status = 'pending'`,
    [id],
  );
}

/**
 * Writes a `webhook.test` event row (no fan-out: only the endpoint under test receives it) and wakes the tenant's event
 * streams once the transaction on `db` commits (OPS-5), as every writer of events does.
 */
export async function insertTestEvent(
  db: Db,
  tenant: Tenant,
  data: Record<string, unknown>,
): Promise<{ id: string; created_at: Date }> {
  const row = await one<{ id: string; created_at: Date }>(
    db,
    `INSERT INTO events (id, organization_id, environment, type, data, traceparent) VALUES ($1, $2, $3, 'webhook.test', $4, $5)
     RETURNING id, created_at`,
    [newId('event'), tenant.organizationId, tenant.environment, data, currentTraceparent()],
  );
  eventsWritten(db, tenant);
  return row!;
}

/** Inserts one pending webhook delivery of an event to an endpoint, due now; `autoRetry` false: one attempt only. */
export async function insertDelivery(
  tx: Db,
  tenant: Tenant,
  id: string,
  endpointId: string,
  eventId: string,
  autoRetry: boolean,
): Promise<void> {
  await tx.query(
    `INSERT INTO webhook_deliveries (id, organization_id, environment, endpoint_id, event_id, next_attempt_at, auto_retry)
     VALUES ($1, $2, $3, $4, $5, now(), $6)`,
    [id, tenant.organizationId, tenant.environment, endpointId, eventId, autoRetry],
  );
}

import type { Tenant } from '../../context.js';
import { many, one, type Db } from '../../lib/db.js';
import { newId } from '../../lib/ids.js';

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
export function listDeliveries(db: Db, tenant: Tenant, f: DeliveryFilters, limit: number, startingAfter?: string): Promise<DeliveryRow[]> {
  return many<DeliveryRow>(
    db,
    `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
      WHERE d.organization_id = $1 AND d.environment = $2
        AND ($3::text IS NULL OR d.endpoint_id = $3) AND ($4::text IS NULL OR d.event_id = $4)
        AND ($5::text IS NULL OR d.status = $5) AND ($6::text IS NULL OR d.id < $6)
      ORDER BY d.id DESC LIMIT $7`,
    [tenant.organizationId, tenant.environment, f.endpointId ?? null, f.eventId ?? null, f.status ?? null, startingAfter ?? null, limit + 1],
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

/** Everything the delivery task needs, read without locks before the HTTP call. */
export interface DeliveryJobRow {
  id: string;
  organization_id: string;
  status: DeliveryStatus;
  attempt_count: number;
  next_attempt_at: Date | null;
  endpoint_id: string;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  endpoint_disabled: boolean;
  endpoint_disabled_reason: string | null;
  endpoint_deleted: boolean;
  event_id: string;
  event_type: string;
  event_data: Record<string, unknown>;
  event_created_at: Date;
  /** The database clock, so "is it due" and "is the old secret still valid" never depend on the worker's clock. */
  db_now: Date;
}

/** The delivery with its endpoint and event (any tenant: the task has only the delivery id), or null when unknown. */
export function loadDeliveryJob(db: Db, deliveryId: string): Promise<DeliveryJobRow | null> {
  return one<DeliveryJobRow>(
    db,
    `SELECT d.id, d.organization_id, d.status, d.attempt_count, d.next_attempt_at, w.id AS endpoint_id, w.url, w.secret, w.previous_secret,
            w.previous_secret_expires_at, w.disabled AS endpoint_disabled, w.disabled_reason AS endpoint_disabled_reason,
            w.deleted_at IS NOT NULL AS endpoint_deleted, e.id AS event_id, e.type AS event_type, e.data AS event_data,
            e.created_at AS event_created_at, now() AS db_now
       FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id JOIN events e ON e.id = d.event_id
      WHERE d.id = $1`,
    [deliveryId],
  );
}

/** Locks a delivery for the post-attempt transaction. */
export function lockDelivery(db: Db, deliveryId: string): Promise<{ status: DeliveryStatus; attempt_count: number; auto_retry: boolean; environment: 'live' | 'test'; organization_id: string } | null> {
  return one(db, 'SELECT status, attempt_count, auto_retry, environment, organization_id FROM webhook_deliveries WHERE id = $1 FOR UPDATE', [deliveryId]);
}

/** Records one HTTP try (issue 4 item 7: status code, duration, first 4 KB of the response, error). */
export async function insertAttempt(
  db: Db,
  a: { deliveryId: string; organizationId: string; environment: string; attemptNumber: number; url: string; statusCode: number | null; durationMs: number; responseBody: string; error: string | null },
): Promise<void> {
  await db.query(
    `INSERT INTO webhook_attempts (id, delivery_id, organization_id, environment, attempt_number, url, status_code, duration_ms, response_body, error)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [newId('webhookAttempt'), a.deliveryId, a.organizationId, a.environment, a.attemptNumber, a.url, a.statusCode, a.durationMs, a.responseBody || null, a.error],
  );
}

/**
 * Writes a delivery's state after an attempt. `retryInSeconds` (may be fractional) sets next_attempt_at;
 * null clears it. `status` null keeps the current status (an attempt that raced with a finished one).
 */
export async function updateDeliveryAfterAttempt(
  db: Db,
  id: string,
  u: { attemptNumber: number; status: DeliveryStatus | null; retryInSeconds: number | null; failureReason: string | null },
): Promise<void> {
  await db.query(
    `UPDATE webhook_deliveries SET attempt_count = GREATEST(attempt_count, $2), last_attempt_at = now(), updated_at = now(),
       status = COALESCE($3, status),
       next_attempt_at = CASE WHEN $3 IS NULL THEN next_attempt_at WHEN $4::float8 IS NULL THEN NULL ELSE now() + make_interval(secs => $4::float8) END,
       failure_reason = CASE WHEN $3 IS NULL THEN failure_reason ELSE $5 END
     WHERE id = $1`,
    [id, u.attemptNumber, u.status, u.retryInSeconds, u.failureReason],
  );
}

/** Ends a pending delivery without an attempt (endpoint disabled or deleted). */
export async function failPendingDelivery(db: Db, id: string, reason: string): Promise<void> {
  await db.query(
    `UPDATE webhook_deliveries SET status = 'failed', failure_reason = $2, next_attempt_at = NULL, updated_at = now() WHERE id = $1 AND status = 'pending'`,
    [id, reason],
  );
}

/** Makes a delivery pending again for one manual attempt now (resend; no automatic retries follow). */
export async function reopenDelivery(db: Db, id: string): Promise<void> {
  await db.query(
    `UPDATE webhook_deliveries SET status = 'pending', auto_retry = false, failure_reason = NULL, next_attempt_at = now(), updated_at = now() WHERE id = $1`,
    [id],
  );
}

/**
 * Moves a pending delivery's next retry to now (resend while it waits). The job still queued for the old time
 * does nothing when it runs: by then the delivery has succeeded, or its failure set a later next_attempt_at
 * (the task's staleness check).
 */
export async function bringRetryForward(db: Db, id: string): Promise<void> {
  await db.query(`UPDATE webhook_deliveries SET next_attempt_at = now(), updated_at = now() WHERE id = $1 AND status = 'pending'`, [id]);
}

/** Marks a delivery as single-attempt (webhook.test pings). */
export async function disableAutoRetry(db: Db, id: string): Promise<void> {
  await db.query('UPDATE webhook_deliveries SET auto_retry = false WHERE id = $1', [id]);
}

/** Writes a `webhook.test` event row (no fan-out: only the endpoint under test receives it). */
export async function insertTestEvent(db: Db, tenant: Tenant, data: Record<string, unknown>): Promise<{ id: string; created_at: Date }> {
  const row = await one<{ id: string; created_at: Date }>(
    db,
    `INSERT INTO events (id, organization_id, environment, type, data) VALUES ($1, $2, $3, 'webhook.test', $4) RETURNING id, created_at`,
    [newId('event'), tenant.organizationId, tenant.environment, data],
  );
  return row!;
}

import { signalAtCommit } from '../../lib/commit-signals.js';
import { many, one, type Db } from '../../lib/db.js';
import { newId } from '../../lib/ids.js';
import type { DeliveryStatus } from './deliveries.repo.js';

/** Channel that wakes the dispatchers for deliveries made due outside `emitEvents` (resend, test events; WH-16). */
export const DELIVERIES_DUE_CHANNEL = 'webhook_deliveries_due';

/**
 * Wakes every dispatcher once the caller's transaction has committed (nothing on rollback; OPS-5). Deliveries
 * written by `emitEvents` need no call: it signals the events channel, which the dispatchers hear too.
 */
export function notifyDeliveriesDue(tx: Db): void {
  signalAtCommit(tx, DELIVERIES_DUE_CHANNEL, '');
}

/** A claimed delivery with everything its attempt needs, read in the claiming statement. */
export interface ClaimedDelivery {
  id: string;
  organization_id: string;
  environment: 'live' | 'test';
  endpoint_id: string;
  /** Attempts recorded before this one (this attempt is number attempt_count + 1). */
  attempt_count: number;
  auto_retry: boolean;
  url: string;
  secret: string;
  /** The replaced secret while its rotation grace lasts (by the database clock), else null. */
  previous_secret: string | null;
  endpoint_disabled: boolean;
  endpoint_disabled_reason: string | null;
  endpoint_deleted: boolean;
  endpoint_failing: boolean;
  event_id: string;
  event_type: string;
  event_data: Record<string, unknown>;
  event_created_at: Date;
  /** The W3C trace context of the request that wrote the event, null when none was stored (OPS-31). */
  event_traceparent: string | null;
}

/**
 * How many more rows a claim may take for each organization and endpoint the claiming process holds rows of
 * already (WH-17); the others get the claim's defaults.
 */
export interface ClaimRoom {
  byOrganization: Record<string, number>;
  byEndpoint: Record<string, number>;
}

/**
 * Claims due deliveries for one process (WH-16, WH-17), in one statement: for every endpoint, its oldest due
 * pending rows that no live lease holds, at most the room the process has left for that endpoint
 * (`room.byEndpoint[endpoint] ?? endpointCap`) and for its organization (`room.byOrganization[org] ??
 * organizationCap`), locked with SKIP LOCKED so concurrent claims by other processes take other rows. Within an
 * organization the rows are taken round-robin across its endpoints (every endpoint's oldest first, then every
 * endpoint's second, …) up to its room; across organizations round-robin again (every organization's first row,
 * then every one's second, …) up to `limit`. So neither one endpoint's backlog nor an organization's many
 * endpoints push another organization's new event back.
 * Each row gets `leased_until = now() + leaseMs` and `leased_by = owner`; neither column is indexed (a HOT update).
 * @param limit rows at most (the process's free slots); @param leaseMs ms.
 */
export function claimDueDeliveries(
  db: Db,
  a: {
    owner: string;
    limit: number;
    endpointCap: number;
    organizationCap: number;
    room: ClaimRoom;
    leaseMs: number;
  },
): Promise<ClaimedDelivery[]> {
  return many<ClaimedDelivery>(
    db,
    `WITH RECURSIVE w(id) AS (
       -- The endpoints that have pending deliveries, one index descent each (a skip scan), so a claim costs the
       -- number of endpoints with work, not of all endpoints ever registered.
       (SELECT endpoint_id FROM webhook_deliveries WHERE status = 'pending' ORDER BY endpoint_id LIMIT 1)
       UNION ALL
       SELECT (SELECT d.endpoint_id FROM webhook_deliveries d WHERE d.status = 'pending' AND d.endpoint_id > w.id ORDER BY d.endpoint_id LIMIT 1)
         FROM w WHERE w.id IS NOT NULL
     ), ready AS (
       -- Each endpoint's turn numbers its rows; an organization without room locks none of its endpoints' rows.
       SELECT d.id, e.organization_id, d.next_attempt_at, d.turn FROM w
       JOIN webhook_endpoints e ON e.id = w.id
       CROSS JOIN LATERAL (
         SELECT x.id, x.next_attempt_at, row_number() OVER (ORDER BY x.next_attempt_at) AS turn FROM (
           SELECT d.id, d.next_attempt_at FROM webhook_deliveries d
            WHERE d.endpoint_id = w.id AND d.status = 'pending' AND d.next_attempt_at <= now()
              AND (d.leased_until IS NULL OR d.leased_until < now())
            ORDER BY d.next_attempt_at
            LIMIT LEAST(COALESCE(($4::jsonb ->> w.id)::int, $3), COALESCE(($7::jsonb ->> e.organization_id)::int, $6))
            FOR UPDATE OF d SKIP LOCKED) x
       ) d
     ), ranked AS (
       SELECT id, organization_id, next_attempt_at,
              row_number() OVER (PARTITION BY organization_id ORDER BY turn, next_attempt_at) AS organization_turn
         FROM ready
     ), picked AS (
       SELECT id FROM ranked
        WHERE organization_turn <= COALESCE(($7::jsonb ->> organization_id)::int, $6)
        ORDER BY organization_turn, next_attempt_at
        LIMIT $2
     ), claimed AS (
       UPDATE webhook_deliveries d SET leased_until = now() + $5 * interval '1 millisecond', leased_by = $1
         FROM picked WHERE d.id = picked.id
       RETURNING d.id, d.organization_id, d.environment, d.endpoint_id, d.event_id, d.attempt_count, d.auto_retry
     )
     SELECT c.id, c.organization_id, c.environment, c.endpoint_id, c.attempt_count, c.auto_retry,
            w.url, w.secret, CASE WHEN w.previous_secret_expires_at > now() THEN w.previous_secret END AS previous_secret,
            w.disabled AS endpoint_disabled, w.disabled_reason AS endpoint_disabled_reason,
            w.deleted_at IS NOT NULL AS endpoint_deleted, w.failing_since IS NOT NULL AS endpoint_failing,
            e.id AS event_id, e.type AS event_type, e.data AS event_data, e.created_at AS event_created_at,
            e.traceparent AS event_traceparent
       FROM claimed c JOIN webhook_endpoints w ON w.id = c.endpoint_id JOIN events e ON e.id = c.event_id`,
    [
      a.owner,
      a.limit,
      a.endpointCap,
      JSON.stringify(a.room.byEndpoint),
      a.leaseMs,
      a.organizationCap,
      JSON.stringify(a.room.byOrganization),
    ],
  );
}

/**
 * Extends the leases `owner` holds on `ids` by `leaseMs` from now, for attempts still under way (WH-16).
 * @returns the ids whose lease was extended (a missing id was taken back meanwhile).
 */
export async function renewLeases(db: Db, owner: string, ids: string[], leaseMs: number): Promise<string[]> {
  const rows = await many<{ id: string }>(
    db,
    // A row whose outcome is being written at the same moment is skipped, not waited for (no lock-order deadlock
    // with that write); its lease is released by the write anyway.
    `UPDATE webhook_deliveries SET leased_until = now() + $3 * interval '1 millisecond'
      WHERE id IN (SELECT id FROM webhook_deliveries WHERE id = ANY($1::text[]) AND leased_by = $2 AND status = 'pending' FOR UPDATE SKIP LOCKED)
      RETURNING id`,
    [ids, owner, leaseMs],
  );
  return rows.map((r) => r.id);
}

/** Gives back leases `owner` holds on `ids` (rows claimed but never started), so any process may claim them at once. */
export async function releaseLeases(db: Db, owner: string, ids: string[]): Promise<void> {
  await db.query(
    `UPDATE webhook_deliveries SET leased_until = NULL, leased_by = NULL
      WHERE id IN (SELECT id FROM webhook_deliveries WHERE id = ANY($1::text[]) AND leased_by = $2 AND status = 'pending' FOR UPDATE SKIP LOCKED)`,
    [ids, owner],
  );
}

/** The outcome of one claimed delivery, as written by {@link recordOutcomes}. */
export interface DeliveryOutcome {
  id: string;
  /** The attempt_count seen at claim time: the outcome decides the schedule only if no other attempt was recorded since. */
  claimedAttemptCount: number;
  /** False when no HTTP attempt was made (endpoint disabled or deleted): no attempt row, the count stays. */
  attempted: boolean;
  url: string;
  statusCode: number | null;
  durationMs: number;
  responseBody: string;
  /** The receiver's response headers where kept (PORTAL-21); absent otherwise. */
  responseHeaders?: Record<string, string>;
  error: string | null;
  status: DeliveryStatus;
  /** Seconds (may be fractional) to the next attempt while pending; null otherwise. */
  retryInSeconds: number | null;
  failureReason: string | null;
}

/**
 * Writes a batch of outcomes in ONE statement (WH-4, WH-15, WH-16): one webhook_attempts row per attempted
 * delivery (status code, duration, first 4 KB of the answer and its headers where kept, error, number = the delivery's count after it) and each
 * delivery's next state, releasing the lease if `owner` still holds it. An outcome whose delivery moved on meanwhile
 * (its lease ran out and another attempt was recorded first, or it is no longer pending) only records its attempt:
 * a success is kept, nothing is scheduled.
 */
export async function recordOutcomes(db: Db, owner: string, outcomes: DeliveryOutcome[]): Promise<void> {
  if (!outcomes.length) return;
  // Not a prepared statement (unlike the hot reads): its cost is shared by the whole batch anyway, and the generic
  // plan PostgreSQL settles on for a prepared one ran the claim-and-record cycle at a third of the throughput.
  await db.query(
    `WITH r AS (
       SELECT * FROM jsonb_to_recordset($1::jsonb) AS r(id text, attempt_id text, claimed int, attempted boolean, url text, status_code int,
         duration_ms int, response_body text, response_headers jsonb, error text, status text, retry_in float8, failure_reason text)
     ), upd AS (
       UPDATE webhook_deliveries d SET
         attempt_count = d.attempt_count + r.attempted::int,
         last_attempt_at = CASE WHEN r.attempted THEN now() ELSE d.last_attempt_at END,
         updated_at = now(),
         status = CASE WHEN d.status = 'pending' AND d.attempt_count = r.claimed THEN r.status
                       WHEN d.status = 'pending' AND r.status = 'succeeded' AND r.attempted THEN 'succeeded' ELSE d.status END,
         next_attempt_at = CASE WHEN d.status = 'pending' AND d.attempt_count = r.claimed
                                THEN CASE WHEN r.retry_in IS NULL THEN NULL ELSE now() + make_interval(secs => r.retry_in) END
                                WHEN d.status = 'pending' AND r.status = 'succeeded' AND r.attempted THEN NULL
                                ELSE d.next_attempt_at END,
         failure_reason = CASE WHEN d.status = 'pending' AND d.attempt_count = r.claimed THEN r.failure_reason ELSE d.failure_reason END,
         leased_until = CASE WHEN d.leased_by = $2 THEN NULL ELSE d.leased_until END,
         leased_by = CASE WHEN d.leased_by = $2 THEN NULL ELSE d.leased_by END
         FROM r WHERE d.id = r.id
       RETURNING d.id, d.organization_id, d.environment, d.attempt_count
     )
     INSERT INTO webhook_attempts (id, delivery_id, organization_id, environment, attempt_number, url, status_code, duration_ms, response_body, response_headers, error)
     SELECT r.attempt_id, u.id, u.organization_id, u.environment, u.attempt_count, r.url, r.status_code, r.duration_ms,
            NULLIF(r.response_body, ''), r.response_headers, r.error
       FROM upd u JOIN r ON r.id = u.id WHERE r.attempted`,
    [
      // In id order, like every multi-row write of deliveries here, so two writes never wait on each other in a cycle.
      JSON.stringify(
        [...outcomes]
          .sort((x, y) => (x.id < y.id ? -1 : x.id > y.id ? 1 : 0))
          .map((o) => ({
            id: o.id,
            attempt_id: newId('webhookAttempt'),
            claimed: o.claimedAttemptCount,
            attempted: o.attempted,
            url: o.url,
            status_code: o.statusCode,
            duration_ms: o.durationMs,
            response_body: o.responseBody,
            response_headers: o.responseHeaders ?? null,
            error: o.error,
            status: o.status,
            retry_in: o.retryInSeconds,
            failure_reason: o.failureReason,
          })),
      ),
      owner,
    ],
  );
}

/** The backlog: deliveries due now (in flight included) and how long the oldest has been due. */
export interface WebhookBacklog {
  dueDeliveries: number;
  /** Seconds since the oldest due delivery became due; 0 when none is. */
  oldestDueSeconds: number;
}

/** Reads the backlog across every tenant (WH-19), from the partial index of pending deliveries. */
export async function webhookBacklog(db: Db): Promise<WebhookBacklog> {
  const row = await one<{ due: number; oldest: number | null }>(
    db,
    `SELECT count(*)::int AS due, extract(epoch FROM now() - min(next_attempt_at))::float8 AS oldest
       FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= now()`,
  );
  return { dueDeliveries: row?.due ?? 0, oldestDueSeconds: Math.max(0, row?.oldest ?? 0) };
}

import type { Tenant } from '../../context.js';
import { many, one, type Db } from '../../lib/db.js';

/**
 * A webhook_endpoints row. `secret` and `previous_secret` are sealed (SEC-2): open them only through
 * `signingSecrets` (endpoint-secrets.ts).
 */
export interface EndpointRow {
  id: string;
  organization_id: string;
  environment: 'live' | 'test';
  url: string;
  description: string | null;
  event_types: string[];
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  disabled: boolean;
  disabled_reason: string | null;
  failing_since: Date | null;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

/** Inserts an endpoint of the tenant with its signing `secret`, already sealed (sealEndpointSecret), and returns the row. */
export async function insertEndpoint(
  db: Db,
  tenant: Tenant,
  e: { id: string; url: string; description: string | null; eventTypes: string[]; secret: string },
): Promise<EndpointRow> {
  const row = await one<EndpointRow>(
    db,
    `INSERT INTO webhook_endpoints (id, organization_id, environment, url, description, event_types, secret)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
    [e.id, tenant.organizationId, tenant.environment, e.url, e.description, e.eventTypes, e.secret],
  );
  return row!;
}

/**
 * Takes the tenant's endpoint-creation lock (a transaction-scoped advisory lock, released at commit) and counts its
 * endpoints that are not deleted. Call inside a transaction.
 */
export async function lockAndCountEndpoints(db: Db, tenant: Tenant): Promise<number> {
  await db.query(`SELECT pg_advisory_xact_lock(hashtext('webhook-endpoints:' || $1 || ':' || $2))`, [
    tenant.organizationId,
    tenant.environment,
  ]);
  const row = await one<{ n: number }>(
    db,
    'SELECT count(*)::int AS n FROM webhook_endpoints WHERE organization_id = $1 AND environment = $2 AND deleted_at IS NULL',
    [tenant.organizationId, tenant.environment],
  );
  return row!.n;
}

/** The tenant's endpoint (not deleted), optionally locked for update; null when absent. */
export function findEndpoint(db: Db, tenant: Tenant, id: string, forUpdate = false): Promise<EndpointRow | null> {
  return one<EndpointRow>(
    db,
    `SELECT * FROM webhook_endpoints WHERE id = $1 AND organization_id = $2 AND environment = $3 AND deleted_at IS NULL
     ${forUpdate ? 'FOR UPDATE' : ''}`,
    [id, tenant.organizationId, tenant.environment],
  );
}

/** A page of the tenant's endpoints, newest first: `limit + 1` rows so the caller can tell `hasMore`. */
export function listEndpoints(db: Db, tenant: Tenant, limit: number, startingAfter?: string): Promise<EndpointRow[]> {
  return many<EndpointRow>(
    db,
    `SELECT * FROM webhook_endpoints
      WHERE organization_id = $1 AND environment = $2 AND deleted_at IS NULL AND ($3::text IS NULL OR id < $3)
      ORDER BY id DESC LIMIT $4`,
    [tenant.organizationId, tenant.environment, startingAfter ?? null, limit + 1],
  );
}

/** Fields PATCH may change; undefined leaves a column as it is. */
export interface EndpointChanges {
  url?: string;
  description?: string | null;
  eventTypes?: string[];
  /** true disables with `disabledReason`; false re-enables and clears the failure clock. */
  disabled?: boolean;
  disabledReason?: string;
}

/**
 * Applies PATCH changes to the tenant's (not deleted) endpoint and returns the row, or null when there is none.
 * The write itself filters on the tenant, so a check made earlier in another statement is never relied on.
 */
export function updateEndpoint(db: Db, tenant: Tenant, id: string, c: EndpointChanges): Promise<EndpointRow | null> {
  return one<EndpointRow>(
    db,
    `UPDATE webhook_endpoints SET
       url = COALESCE($2, url),
       description = CASE WHEN $3 THEN $4 ELSE description END,
       event_types = COALESCE($5, event_types),
       disabled = COALESCE($6, disabled),
       disabled_reason = CASE WHEN $6 IS NULL THEN disabled_reason WHEN $6 THEN COALESCE($7, disabled_reason) ELSE NULL END,
       failing_since = CASE WHEN $6 = false THEN NULL ELSE failing_since END,
       updated_at = now()
     WHERE id = $1 AND organization_id = $8 AND environment = $9 AND deleted_at IS NULL RETURNING *`,
    [
      id,
      c.url ?? null,
      c.description !== undefined,
      c.description ?? null,
      c.eventTypes ?? null,
      c.disabled ?? null,
      c.disabledReason ?? null,
      tenant.organizationId,
      tenant.environment,
    ],
  );
}

/**
 * Marks the tenant's endpoint deleted (the row stays for its delivery history).
 * @returns false when the tenant has no such endpoint, or it was deleted already.
 */
export async function softDeleteEndpoint(db: Db, tenant: Tenant, id: string): Promise<boolean> {
  const res = await db.query(
    'UPDATE webhook_endpoints SET deleted_at = now(), updated_at = now() WHERE id = $1 AND organization_id = $2 AND environment = $3 AND deleted_at IS NULL',
    [id, tenant.organizationId, tenant.environment],
  );
  return (res.rowCount ?? 0) > 0;
}

/**
 * Moves the current secret of the tenant's (not deleted) endpoint to `previous_secret` for `graceHours` and installs
 * `secret` (sealed; both are sealed with the endpoint id as associated data, so the move keeps them valid). @returns
 * the row, or null when the tenant has no such endpoint (a deleted one included).
 */
export function rotateEndpointSecret(
  db: Db,
  tenant: Tenant,
  id: string,
  secret: string,
  graceHours: number,
): Promise<EndpointRow | null> {
  return one<EndpointRow>(
    db,
    `UPDATE webhook_endpoints SET previous_secret = secret, previous_secret_expires_at = now() + make_interval(hours => $3),
       secret = $2, updated_at = now()
     WHERE id = $1 AND organization_id = $4 AND environment = $5 AND deleted_at IS NULL RETURNING *`,
    [id, secret, graceHours, tenant.organizationId, tenant.environment],
  );
}

/** A successful (non-test) delivery ends the endpoint's failure streak. */
export async function clearEndpointFailing(db: Db, id: string): Promise<void> {
  await db.query('UPDATE webhook_endpoints SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL', [id]);
}

/**
 * Starts the failure clock if it is not running, then disables the endpoint when it has been failing for at
 * least `disableAfterHours` (WEBHOOK_DISABLE_AFTER_HOURS). @returns the disabled reason when this call disabled it.
 */
export async function markEndpointFailing(db: Db, id: string, disableAfterHours: number): Promise<string | null> {
  await db.query('UPDATE webhook_endpoints SET failing_since = now() WHERE id = $1 AND failing_since IS NULL', [id]);
  // Hours may be fractional (WEBHOOK_DISABLE_AFTER_HOURS=0.5).
  const row = await one<{ disabled_reason: string }>(
    db,
    `UPDATE webhook_endpoints
        SET disabled = true, updated_at = now(),
            disabled_reason = 'Every delivery has failed since ' || to_char(failing_since AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
                              || ' (' || $3::text || ' hours or more)'
      WHERE id = $1 AND NOT disabled AND failing_since <= now() - $2::float8 * interval '1 hour'
      RETURNING disabled_reason`,
    [id, disableAfterHours, String(disableAfterHours)],
  );
  return row?.disabled_reason ?? null;
}

/** Disables an endpoint at once (HTTP 410 Gone). @returns true when it was enabled before. */
export async function disableEndpoint(db: Db, id: string, reason: string): Promise<boolean> {
  const row = await one(
    db,
    `UPDATE webhook_endpoints SET disabled = true, disabled_reason = $2, updated_at = now() WHERE id = $1 AND NOT disabled RETURNING id`,
    [id, reason],
  );
  return row !== null;
}

/**
 * Locks (FOR UPDATE) and returns up to `limit` endpoints after id `after`, by id, whose secret or previous secret is
 * stale: still in clear when `currentPattern` is null, else not sealed with the LIKE pattern of the current key.
 * Deleted endpoints included.
 */
export async function lockStaleSecrets(
  tx: Db,
  after: string,
  limit: number,
  currentPattern: string | null,
): Promise<Array<{ id: string; secret: string; previous_secret: string | null }>> {
  const stale =
    currentPattern === null
      ? `(secret NOT LIKE 'sealed:%' OR previous_secret NOT LIKE 'sealed:%')`
      : `(secret NOT LIKE $2 OR previous_secret NOT LIKE $2)`;
  const params: unknown[] = [after];
  if (currentPattern !== null) params.push(currentPattern);
  const { rows } = await tx.query<{ id: string; secret: string; previous_secret: string | null }>(
    `SELECT id, secret, previous_secret FROM webhook_endpoints WHERE id > $1 AND ${stale} ORDER BY id LIMIT ${limit} FOR UPDATE`,
    params,
  );
  return rows;
}

/** Stores an endpoint's (sealed) signing secret and previous secret. */
export async function updateEndpointSecrets(
  tx: Db,
  id: string,
  secret: string,
  previousSecret: string | null,
): Promise<void> {
  await tx.query('UPDATE webhook_endpoints SET secret = $2, previous_secret = $3 WHERE id = $1', [
    id,
    secret,
    previousSecret,
  ]);
}

/** How many endpoint secrets match the LIKE pattern (e.g. sealed under one key). */
export async function countSecretsLike(db: Db, pattern: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM webhook_endpoints WHERE secret LIKE $1',
    [pattern],
  );
  return rows[0]!.n;
}

/** Stored secrets and previous secrets counted by sealing key id (`plaintext` for values still in clear). */
export async function countSecretsByKey(db: Db): Promise<Array<{ key: string; n: number }>> {
  const { rows } = await db.query<{ key: string; n: number }>(
    `SELECT CASE WHEN v LIKE 'sealed:v1:%' THEN split_part(v, ':', 3) ELSE 'plaintext' END AS key, count(*)::int AS n
       FROM (SELECT secret AS v FROM webhook_endpoints UNION ALL SELECT previous_secret FROM webhook_endpoints WHERE previous_secret IS NOT NULL) s
      GROUP BY 1 ORDER BY 1`,
  );
  return rows;
}

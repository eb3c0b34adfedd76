import type { Tenant } from '../../context.js';
import { one, type Db } from '../../lib/db.js';

/** An idempotency_keys row (migrations/001). */
export interface IdempotencyRow {
  request_hash: string;
  status: 'running' | 'done';
  response_status: number | null;
  response_body: unknown;
  created_at: Date;
}

/** A key is remembered this long (IDEM-4: 24 hours). */
export const KEY_TTL_HOURS = 24;
/** A `running` key older than this belongs to a request that died (crash, lost connection) and may be taken over. */
const ABANDONED_AFTER_MINUTES = 5;

/**
 * Claims `key` for a new request: inserts it as running, or takes over an expired key (older than 24 h) or an
 * abandoned running one with the same request hash. One statement, so two concurrent claims cannot both win.
 * @returns true when this request owns the key now.
 */
export async function claimKey(db: Db, tenant: Tenant, key: string, requestHash: string): Promise<boolean> {
  const row = await one(
    db,
    `INSERT INTO idempotency_keys (organization_id, environment, key, request_hash, status)
     VALUES ($1, $2, $3, $4, 'running')
     ON CONFLICT (organization_id, environment, key) DO UPDATE
        SET request_hash = EXCLUDED.request_hash, status = 'running', response_status = NULL, response_body = NULL, created_at = now()
      WHERE idempotency_keys.created_at < now() - make_interval(hours => ${KEY_TTL_HOURS})
         OR (idempotency_keys.status = 'running' AND idempotency_keys.request_hash = EXCLUDED.request_hash
             AND idempotency_keys.created_at < now() - make_interval(mins => ${ABANDONED_AFTER_MINUTES}))
     RETURNING 1 AS claimed`,
    [tenant.organizationId, tenant.environment, key, requestHash],
  );
  return row !== null;
}

/** The key's row while it is still within its 24 hours, or null. */
export function findKey(db: Db, tenant: Tenant, key: string): Promise<IdempotencyRow | null> {
  return one<IdempotencyRow>(
    db,
    `SELECT request_hash, status, response_status, response_body, created_at FROM idempotency_keys
      WHERE organization_id = $1 AND environment = $2 AND key = $3 AND created_at >= now() - make_interval(hours => ${KEY_TTL_HOURS})`,
    [tenant.organizationId, tenant.environment, key],
  );
}

/** Stores the first response for replays. */
export async function completeKey(db: Db, tenant: Tenant, key: string, status: number, body: unknown): Promise<void> {
  await db.query(
    `UPDATE idempotency_keys SET status = 'done', response_status = $4, response_body = $5
      WHERE organization_id = $1 AND environment = $2 AND key = $3 AND status = 'running'`,
    [tenant.organizationId, tenant.environment, key, status, JSON.stringify(body)],
  );
}

/** Forgets a running key (the first attempt failed with a 5xx: a retry must run again). */
export async function releaseKey(db: Db, tenant: Tenant, key: string): Promise<void> {
  await db.query(
    `DELETE FROM idempotency_keys WHERE organization_id = $1 AND environment = $2 AND key = $3 AND status = 'running'`,
    [tenant.organizationId, tenant.environment, key],
  );
}

import type { Db } from '../../lib/db.js';
import { one, many } from '../../lib/db.js';
import type { Environment, Tenant } from '../../context.js';

/** A row of `api_keys` without its hash; `redacted` is the display form of the secret, which is never stored. */
export interface ApiKeyRow {
  id: string;
  organization_id: string;
  environment: Environment;
  /** The member's label for the key (PORTAL-11); '' for keys made without one. */
  name: string;
  redacted: string;
  created_at: Date;
  revoked_at: Date | null;
  /** When a roll ends this key (PORTAL-12); null while it has no end. */
  expires_at: Date | null;
}

/** A key as the portal lists it: the row and when it last authenticated a request (PORTAL-12), null if never. */
export interface ApiKeyListRow extends ApiKeyRow {
  last_used_at: Date | null;
}

const KEY_COLUMNS = 'id, organization_id, environment, name, redacted, created_at, revoked_at, expires_at';

/**
 * Stores a checksummed key by its sha256 `keyHash` and `redacted` form (AUTH-3) with its `name` (PORTAL-11, already
 * validated); returns the row without the hash.
 */
export async function insertApiKey(
  db: Db,
  key: {
    id: string;
    organizationId: string;
    environment: Environment;
    name: string;
    keyHash: string;
    redacted: string;
  },
): Promise<ApiKeyRow> {
  const row = await one<ApiKeyRow>(
    db,
    `INSERT INTO api_keys (id, organization_id, environment, name, key_hash, redacted, checksummed)
     VALUES ($1, $2, $3, $4, $5, $6, true)
     RETURNING ${KEY_COLUMNS}`,
    [key.id, key.organizationId, key.environment, key.name, key.keyHash, key.redacted],
  );
  return row!;
}

/**
 * Every key of an organization (of one environment when given), revoked and expired ones included, oldest first, with
 * when each last authenticated a request.
 */
export function listApiKeys(db: Db, organizationId: string, environment?: Environment): Promise<ApiKeyListRow[]> {
  return many<ApiKeyListRow>(
    db,
    `SELECT k.id, k.organization_id, k.environment, k.name, k.redacted, k.created_at, k.revoked_at, k.expires_at,
            u.last_used_at
       FROM api_keys k LEFT JOIN api_key_uses u ON u.api_key_id = k.id
      WHERE k.organization_id = $1 AND ($2::text IS NULL OR k.environment = $2)
      ORDER BY k.created_at, k.id`,
    [organizationId, environment ?? null],
  );
}

/**
 * The key of this id (of the organization, or of any when null; of `environment` when given), locked until the
 * transaction ends; null when none.
 */
export function lockApiKey(
  db: Db,
  organizationId: string | null,
  keyId: string,
  environment?: Environment,
): Promise<ApiKeyRow | null> {
  return one<ApiKeyRow>(
    db,
    `SELECT ${KEY_COLUMNS} FROM api_keys
      WHERE id = $1 AND ($2::text IS NULL OR organization_id = $2) AND ($3::text IS NULL OR environment = $3) FOR UPDATE`,
    [keyId, organizationId, environment ?? null],
  );
}

/**
 * Revokes a key at once; returns null when the organization (any, when null) has no such key, or none of
 * `environment` when given. The hash is for the key cache only.
 */
export function revokeApiKey(
  db: Db,
  organizationId: string | null,
  keyId: string,
  environment?: Environment,
): Promise<(ApiKeyRow & { key_hash: string }) | null> {
  return one<ApiKeyRow & { key_hash: string }>(
    db,
    `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now())
      WHERE id = $1 AND ($2::text IS NULL OR organization_id = $2) AND ($3::text IS NULL OR environment = $3)
     RETURNING ${KEY_COLUMNS}, key_hash`,
    [keyId, organizationId, environment ?? null],
  );
}

/**
 * The condition an api_keys row meets while its key authenticates: one text for the request check and the event
 * streams' check (EVT-9), so a key that stops resolving for a request (revoked, or past the end a roll gave it,
 * PORTAL-12) also ends the streams opened with it.
 */
const KEY_RESOLVES = 'revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())';

/**
 * Gives the tenant's key `keyId`, while it still resolves, an end `overlapSeconds` from now (an earlier end it has
 * stays) and locks it until commit (PORTAL-12). @returns its row with the hash (for the key cache only), or null when
 * the tenant has no such key that still resolves.
 */
export function endApiKeyAfter(
  db: Db,
  tenant: Tenant,
  keyId: string,
  overlapSeconds: number,
): Promise<(ApiKeyRow & { key_hash: string }) | null> {
  return one<ApiKeyRow & { key_hash: string }>(
    db,
    `UPDATE api_keys SET expires_at = LEAST(COALESCE(expires_at, 'infinity'), now() + make_interval(secs => $4))
      WHERE id = $1 AND organization_id = $2 AND environment = $3 AND ${KEY_RESOLVES}
     RETURNING ${KEY_COLUMNS}, key_hash`,
    [keyId, tenant.organizationId, tenant.environment, overlapSeconds],
  );
}

/**
 * Notes that key `keyId` authenticated a request now, unless a use was noted less than `everySeconds` ago (PORTAL-12).
 * Kept in api_key_uses, so it announces no key change.
 */
export async function recordApiKeyUse(db: Db, keyId: string, everySeconds: number): Promise<void> {
  await db.query(
    `INSERT INTO api_key_uses AS u (api_key_id, last_used_at) VALUES ($1, now())
     ON CONFLICT (api_key_id) DO UPDATE SET last_used_at = now()
      WHERE u.last_used_at < now() - make_interval(secs => $2)`,
    [keyId, everySeconds],
  );
}

/** The active key with this hash, or null (unknown, revoked or ended); `expires_at` lets a cached entry lapse. */
export function findActiveKeyByHash(
  db: Db,
  keyHash: string,
): Promise<{ id: string; organization_id: string; environment: Environment; expires_at: Date | null } | null> {
  return one(
    db,
    `SELECT id, organization_id, environment, expires_at FROM api_keys WHERE key_hash = $1 AND ${KEY_RESOLVES}`,
    [keyHash],
  );
}

/** Those of `keyHashes` (SHA-256 hex) whose key still resolves as {@link findActiveKeyByHash} resolves it (EVT-9). */
export async function findActiveKeyHashes(db: Db, keyHashes: string[]): Promise<string[]> {
  const rows = await many<{ key_hash: string }>(
    db,
    `SELECT key_hash FROM api_keys WHERE key_hash = ANY($1::text[]) AND ${KEY_RESOLVES}`,
    [keyHashes],
  );
  return rows.map((r) => r.key_hash);
}

/**
 * The hashes of the active keys issued before keys carried a checksum (AUTH-3): the only keys without one that may be
 * looked up. A partial index (migration 104) holds exactly these rows.
 */
export async function findUncheckedKeyHashes(db: Db): Promise<string[]> {
  const rows = await many<{ key_hash: string }>(
    db,
    'SELECT key_hash FROM api_keys WHERE NOT checksummed AND revoked_at IS NULL',
  );
  return rows.map((r) => r.key_hash);
}

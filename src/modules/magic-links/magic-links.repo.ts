import type { Tenant } from '../../context.js';
import { one, type Db } from '../../lib/db.js';

/**
 * A magic_links row without the token hash. `used_at`: when a browser spent the link (single use,
 * ML-3).
 */
export interface MagicLinkRow {
  id: string;
  organization_id: string;
  environment: 'live' | 'test';
  user_id: string;
  company_id: string | null;
  expires_at: Date;
  used_at: Date | null;
  /** Lower-case host name the link was issued for; null for links older than that rule (the default dashboard host). */
  host: string | null;
}

/** Stores a new link; only the token's sha256 is kept, with the `host` name it opens on. `ttlSeconds` from now. */
export function insertMagicLink(
  db: Db,
  tenant: Tenant,
  link: { id: string; userId: string; companyId: string | null; tokenHash: string; ttlSeconds: number; host: string },
): Promise<MagicLinkRow | null> {
  return one<MagicLinkRow>(
    db,
    `INSERT INTO magic_links (id, organization_id, environment, user_id, company_id, token_hash, expires_at, host)
     VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(secs => $7), $8)
     RETURNING ${COLUMNS}`,
    [
      link.id,
      tenant.organizationId,
      tenant.environment,
      link.userId,
      link.companyId,
      link.tokenHash,
      link.ttlSeconds,
      link.host,
    ],
  );
}

const COLUMNS = 'id, organization_id, environment, user_id, company_id, expires_at, used_at, host';

/**
 * Spends a link in ONE statement: only the first of any number of concurrent callers gets the row back
 * (the row lock serialises them and the later ones see used_at set), so exactly one session results
 * (ML-3). `organizationId` restricts it to one organization's links (a
 * white-label host accepts only its own); `host` must be the host the link was issued for (a link without one
 * counts as issued for `defaultHost`). Returns null for unknown, used, expired, foreign or misdirected tokens.
 */
export function consumeMagicLink(
  db: Db,
  tokenHash: string,
  where: { organizationId: string | null; host: string; defaultHost: string },
): Promise<MagicLinkRow | null> {
  return one<MagicLinkRow>(
    db,
    `UPDATE magic_links SET used_at = now()
      WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now() AND ($2::text IS NULL OR organization_id = $2)
        AND COALESCE(host, $4) = $3
      RETURNING ${COLUMNS}`,
    [tokenHash, where.organizationId, where.host, where.defaultHost],
  );
}

/** The link with this token hash whatever its state (to explain a refusal), or null. */
export function findMagicLinkByHash(db: Db, tokenHash: string): Promise<MagicLinkRow | null> {
  return one<MagicLinkRow>(db, `SELECT ${COLUMNS} FROM magic_links WHERE token_hash = $1`, [tokenHash]);
}

/** True when the user belongs to the tenant. */
export async function userExists(db: Db, tenant: Tenant, userId: string): Promise<boolean> {
  return !!(await one(db, 'SELECT 1 FROM users WHERE id = $1 AND organization_id = $2 AND environment = $3', [
    userId,
    tenant.organizationId,
    tenant.environment,
  ]));
}

/** The tenant's company with this id and whether `userId` is one of its admins; null when not in the tenant. */
export function findCompanyAdminship(
  db: Db,
  tenant: Tenant,
  companyId: string,
  userId: string,
): Promise<{ id: string; is_admin: boolean } | null> {
  return one(
    db,
    `SELECT c.id, EXISTS (SELECT 1 FROM company_admins a WHERE a.company_id = c.id AND a.user_id = $4) AS is_admin
       FROM companies c WHERE c.id = $1 AND c.organization_id = $2 AND c.environment = $3`,
    [companyId, tenant.organizationId, tenant.environment, userId],
  );
}

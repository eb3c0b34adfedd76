import type { Db } from '../../lib/db.js';
import { one, many } from '../../lib/db.js';
import type { Environment } from '../../context.js';

/**
 * A row of `organizations`. `branding` is the stored JSON object (colours `#rrggbb`, lower case);
 * `dashboard_billing` says who pays for dashboard orders (issue 5 item 5).
 */
export interface OrganizationRow {
  id: string;
  name: string;
  white_label_domain: string | null;
  branding: { logoUrl?: string | null; primaryColor?: string | null; accentColor?: string | null };
  email_notifications: boolean;
  dashboard_billing: 'organization' | 'customer';
  /** Technical contact told when a webhook endpoint is disabled (migration 009); null when none is set. */
  contact_email: string | null;
  created_at: Date;
  updated_at: Date;
}

/** A row of `api_keys` without its hash; `redacted` is the display form of the secret, which is never stored. */
export interface ApiKeyRow {
  id: string;
  organization_id: string;
  environment: Environment;
  redacted: string;
  created_at: Date;
  revoked_at: Date | null;
}

/** Inserts an organization with zero balances in both environments. `contactEmail` must already be validated. */
export async function insertOrganization(db: Db, id: string, name: string, contactEmail: string | null = null): Promise<OrganizationRow> {
  const row = await one<OrganizationRow>(db, 'INSERT INTO organizations (id, name, contact_email) VALUES ($1, $2, $3) RETURNING *', [id, name, contactEmail]);
  await db.query(`INSERT INTO balances (organization_id, environment) VALUES ($1, 'live'), ($1, 'test')`, [id]);
  return row!;
}

/** The organization with this id, or null. */
export function findOrganization(db: Db, id: string): Promise<OrganizationRow | null> {
  return one<OrganizationRow>(db, 'SELECT * FROM organizations WHERE id = $1', [id]);
}

/** The organization whose white-label domain is `domain` (lower-cased first), or null (routing by Host, issue 5 item 2). */
export function findOrganizationByDomain(db: Db, domain: string): Promise<OrganizationRow | null> {
  return one<OrganizationRow>(db, 'SELECT * FROM organizations WHERE white_label_domain = $1', [domain.toLowerCase()]);
}

/** Every organization, newest first (operator views). */
export function listOrganizations(db: Db): Promise<OrganizationRow[]> {
  return many<OrganizationRow>(db, 'SELECT * FROM organizations ORDER BY created_at DESC');
}

/** Stores a key by its sha256 `keyHash` and `redacted` form (issue 2 item 3); returns the row without the hash. */
export async function insertApiKey(db: Db, key: { id: string; organizationId: string; environment: Environment; keyHash: string; redacted: string }): Promise<ApiKeyRow> {
  const row = await one<ApiKeyRow>(
    db,
    `INSERT INTO api_keys (id, organization_id, environment, key_hash, redacted) VALUES ($1, $2, $3, $4, $5)
     RETURNING id, organization_id, environment, redacted, created_at, revoked_at`,
    [key.id, key.organizationId, key.environment, key.keyHash, key.redacted],
  );
  return row!;
}

/** Every key of an organization, revoked ones included, oldest first. */
export function listApiKeys(db: Db, organizationId: string): Promise<ApiKeyRow[]> {
  return many<ApiKeyRow>(
    db,
    'SELECT id, organization_id, environment, redacted, created_at, revoked_at FROM api_keys WHERE organization_id = $1 ORDER BY created_at',
    [organizationId],
  );
}

/** Revokes a key at once; returns null when the organization (any, when null) has no such key. */
export function revokeApiKey(db: Db, organizationId: string | null, keyId: string): Promise<ApiKeyRow | null> {
  return one<ApiKeyRow>(
    db,
    `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now()) WHERE id = $1 AND ($2::text IS NULL OR organization_id = $2)
     RETURNING id, organization_id, environment, redacted, created_at, revoked_at`,
    [keyId, organizationId],
  );
}

/** The active key with this hash, or null (unknown or revoked). */
export function findActiveKeyByHash(db: Db, keyHash: string): Promise<{ id: string; organization_id: string; environment: Environment } | null> {
  return one(db, 'SELECT id, organization_id, environment FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL', [keyHash]);
}

/** Cached balances of both environments, in cents. */
export async function findBalances(db: Db, organizationId: string): Promise<Record<Environment, number>> {
  const rows = await many<{ environment: Environment; balance_cents: number }>(db, 'SELECT environment, balance_cents FROM balances WHERE organization_id = $1', [organizationId]);
  const out: Record<Environment, number> = { live: 0, test: 0 };
  for (const r of rows) out[r.environment] = r.balance_cents;
  return out;
}

/** Changes an organization's settings; `branding` is merged into the stored object. Returns null when missing. */
export function updateOrganizationSettings(db: Db, id: string, patch: {
  name?: string; whiteLabelDomain?: string | null; branding?: Record<string, string | null>; emailNotifications?: boolean; dashboardBilling?: 'organization' | 'customer';
  contactEmail?: string | null;
}): Promise<OrganizationRow | null> {
  return one<OrganizationRow>(
    db,
    `UPDATE organizations SET
        name = COALESCE($2, name),
        white_label_domain = CASE WHEN $3 THEN $4 ELSE white_label_domain END,
        branding = branding || COALESCE($5::jsonb, '{}'::jsonb),
        email_notifications = COALESCE($6, email_notifications),
        dashboard_billing = COALESCE($7, dashboard_billing),
        contact_email = CASE WHEN $8 THEN $9 ELSE contact_email END,
        updated_at = now()
      WHERE id = $1 RETURNING *`,
    [id, patch.name ?? null, patch.whiteLabelDomain !== undefined, patch.whiteLabelDomain ?? null, patch.branding ?? null, patch.emailNotifications ?? null, patch.dashboardBilling ?? null,
      patch.contactEmail !== undefined, patch.contactEmail ?? null],
  );
}

import type { Db } from '../../lib/db.js';
import { one, many } from '../../lib/db.js';
import type { Environment, Tenant } from '../../context.js';

/**
 * A row of `organizations`. `branding` is the stored JSON object (colours `#rrggbb`, lower case);
 * `dashboard_billing` says who pays for dashboard orders (DASH-6).
 */
export interface OrganizationRow {
  id: string;
  name: string;
  /** The requested white-label domain (lower case); in effect only once `white_label_domain_verified_at` is set. */
  white_label_domain: string | null;
  /** Random challenge the domain's DNS TXT record must hold (migration 050); set whenever a domain is. */
  white_label_domain_token: string | null;
  /** When control of the domain was proven (or vouched for by an operator); null while pending. */
  white_label_domain_verified_at: Date | null;
  /** True when an operator put the domain in effect without its DNS record (migration 103): not re-checked (ORG-6). */
  white_label_domain_vouched: boolean;
  /** When the daily re-check found the domain's TXT record gone and took it out of use (ORG-6); null otherwise. */
  white_label_domain_lapsed_at: Date | null;
  branding: { logoUrl?: string | null; primaryColor?: string | null; accentColor?: string | null };
  email_notifications: boolean;
  dashboard_billing: 'organization' | 'customer';
  /** Technical contact told when a webhook endpoint is disabled (migration 009); null when none is set. */
  contact_email: string | null;
  /** FUND-15: the low-balance alert's threshold in cents (migration 111); null: no alert. */
  low_balance_threshold_cents: number | string | null;
  created_at: Date;
  updated_at: Date;
}

/** Inserts an organization with zero balances in both environments. `contactEmail` must already be validated. */
export async function insertOrganization(
  db: Db,
  id: string,
  name: string,
  contactEmail: string | null = null,
): Promise<OrganizationRow> {
  const row = await one<OrganizationRow>(
    db,
    'INSERT INTO organizations (id, name, contact_email) VALUES ($1, $2, $3) RETURNING *',
    [id, name, contactEmail],
  );
  await db.query(`INSERT INTO balances (organization_id, environment) VALUES ($1, 'live'), ($1, 'test')`, [id]);
  return row!;
}

/** The organization with this id, or null. */
export function findOrganization(db: Db, id: string): Promise<OrganizationRow | null> {
  return one<OrganizationRow>(db, 'SELECT * FROM organizations WHERE id = $1', [id]);
}

/**
 * Every verified white-label domain (lower case) and the id of the organization holding it (ORG-6): the list the
 * host routing keeps in memory. An unverified domain routes nowhere, so a claim alone never serves anyone's dashboard.
 */
export async function listVerifiedDomains(db: Db): Promise<Map<string, string>> {
  const rows = await many<{ white_label_domain: string; id: string }>(
    db,
    'SELECT white_label_domain, id FROM organizations WHERE white_label_domain_verified_at IS NOT NULL',
  );
  return new Map(rows.map((r) => [r.white_label_domain, r.id]));
}

/** The id of the organization holding `domain` (lower case) as its verified white-label domain, or null. */
export async function findVerifiedDomainOwner(db: Db, domain: string): Promise<string | null> {
  const row = await one<{ id: string }>(
    db,
    'SELECT id FROM organizations WHERE white_label_domain = $1 AND white_label_domain_verified_at IS NOT NULL',
    [domain],
  );
  return row?.id ?? null;
}

/** The id of another organization than `organizationId` holding `domain` as its verified domain, or null. */
export async function findVerifiedDomainHolder(db: Db, domain: string, organizationId: string): Promise<string | null> {
  const row = await one<{ id: string }>(
    db,
    'SELECT id FROM organizations WHERE white_label_domain = $1 AND white_label_domain_verified_at IS NOT NULL AND id <> $2',
    [domain, organizationId],
  );
  return row?.id ?? null;
}

/** The organization with this id, locked until the transaction ends (its settings' state before a change); or null. */
export function lockOrganization(db: Db, id: string): Promise<OrganizationRow | null> {
  return one<OrganizationRow>(db, 'SELECT * FROM organizations WHERE id = $1 FOR UPDATE', [id]);
}

/**
 * Puts `domain` in effect for the organization if it still requests it with the same `token` (a concurrent
 * change of domain wins). Returns the row, or null when the request changed meanwhile.
 * @throws the database's unique violation (23505) when another organization holds the domain verified.
 */
export function markDomainVerified(
  db: Db,
  organizationId: string,
  domain: string,
  token: string,
): Promise<OrganizationRow | null> {
  return one<OrganizationRow>(
    db,
    `UPDATE organizations SET white_label_domain_verified_at = COALESCE(white_label_domain_verified_at, now()),
            white_label_domain_lapsed_at = NULL, updated_at = now()
      WHERE id = $1 AND white_label_domain = $2 AND white_label_domain_token = $3 RETURNING *`,
    [organizationId, domain, token],
  );
}

/** A verified white-label domain the daily re-check looks at (ORG-6), with the record it must still hold. */
export interface DomainToRecheck {
  id: string;
  white_label_domain: string;
  white_label_domain_token: string;
}

/** Every domain verified by its DNS record (not vouched for by an operator), by organization id (ORG-6). */
export function listDomainsToRecheck(db: Db): Promise<DomainToRecheck[]> {
  return many<DomainToRecheck>(
    db,
    `SELECT id, white_label_domain, white_label_domain_token FROM organizations
      WHERE white_label_domain_verified_at IS NOT NULL AND NOT white_label_domain_vouched ORDER BY id`,
  );
}

/**
 * Takes a verified domain out of use because its record is gone (ORG-6): pending again with the same record, the
 * lapse recorded. Only if the organization still holds this domain with this token, verified by DNS.
 * @returns whether it did (false: the domain changed meanwhile).
 */
export async function markDomainLapsed(db: Db, d: DomainToRecheck): Promise<boolean> {
  const res = await db.query(
    `UPDATE organizations SET white_label_domain_verified_at = NULL, white_label_domain_lapsed_at = now(), updated_at = now()
      WHERE id = $1 AND white_label_domain = $2 AND white_label_domain_token = $3
        AND white_label_domain_verified_at IS NOT NULL AND NOT white_label_domain_vouched`,
    [d.id, d.white_label_domain, d.white_label_domain_token],
  );
  return (res.rowCount ?? 0) > 0;
}

/** Every organization, newest first (operator views). */
export function listOrganizations(db: Db): Promise<OrganizationRow[]> {
  return many<OrganizationRow>(db, 'SELECT * FROM organizations ORDER BY created_at DESC');
}

/** Cached balances of both environments, in cents. */
export async function findBalances(db: Db, organizationId: string): Promise<Record<Environment, number>> {
  const rows = await many<{ environment: Environment; balance_cents: number }>(
    db,
    'SELECT environment, balance_cents FROM balances WHERE organization_id = $1',
    [organizationId],
  );
  const out: Record<Environment, number> = { live: 0, test: 0 };
  for (const r of rows) out[r.environment] = r.balance_cents;
  return out;
}

/** The cached balance of one tenant, in cents; 0 when the tenant has no balances row yet. */
export async function findBalance(db: Db, tenant: Tenant): Promise<number> {
  const bal = await one<{ balance_cents: number }>(
    db,
    'SELECT balance_cents FROM balances WHERE organization_id = $1 AND environment = $2',
    [tenant.organizationId, tenant.environment],
  );
  return bal?.balance_cents ?? 0;
}

/** Changes an organization's settings; `branding` is merged into the stored object. Returns null when missing. */
export function updateOrganizationSettings(
  db: Db,
  id: string,
  patch: {
    name?: string;
    whiteLabelDomain?: string | null;
    branding?: Record<string, string | null>;
    emailNotifications?: boolean;
    dashboardBilling?: 'organization' | 'customer';
    contactEmail?: string | null;
    /** With a whiteLabelDomain: its challenge token, used only when the domain changes (the same domain keeps its token). */
    domainToken?: string;
    /** With a whiteLabelDomain: put it in effect at once (an operator vouching for it). */
    domainVerified?: boolean;
    /** FUND-15: the low-balance threshold in cents; null removes it. */
    lowBalanceThresholdCents?: number | null;
  },
): Promise<OrganizationRow | null> {
  return one<OrganizationRow>(
    db,
    `UPDATE organizations SET
        name = COALESCE($2, name),
        white_label_domain = CASE WHEN $3 THEN $4 ELSE white_label_domain END,
        white_label_domain_token = CASE WHEN NOT $3 THEN white_label_domain_token WHEN $4 IS NULL THEN NULL
                                        WHEN $4 IS DISTINCT FROM white_label_domain THEN $10 ELSE white_label_domain_token END,
        white_label_domain_verified_at = CASE WHEN NOT $3 THEN white_label_domain_verified_at WHEN $4 IS NULL THEN NULL
                                              WHEN $11 THEN COALESCE(CASE WHEN $4 = white_label_domain THEN white_label_domain_verified_at END, now())
                                              WHEN $4 IS DISTINCT FROM white_label_domain THEN NULL ELSE white_label_domain_verified_at END,
        white_label_domain_vouched = CASE WHEN NOT $3 THEN white_label_domain_vouched WHEN $4 IS NULL THEN false
                                          WHEN $11 THEN true
                                          WHEN $4 IS DISTINCT FROM white_label_domain THEN false ELSE white_label_domain_vouched END,
        white_label_domain_lapsed_at = CASE WHEN NOT $3 THEN white_label_domain_lapsed_at
                                            WHEN $11 OR $4 IS DISTINCT FROM white_label_domain THEN NULL ELSE white_label_domain_lapsed_at END,
        branding = branding || COALESCE($5::jsonb, '{}'::jsonb),
        email_notifications = COALESCE($6, email_notifications),
        dashboard_billing = COALESCE($7, dashboard_billing),
        contact_email = CASE WHEN $8 THEN $9 ELSE contact_email END,
        low_balance_threshold_cents = CASE WHEN $12 THEN $13::bigint ELSE low_balance_threshold_cents END,
        updated_at = now()
      WHERE id = $1 RETURNING *`,
    [
      id,
      patch.name ?? null,
      patch.whiteLabelDomain !== undefined,
      patch.whiteLabelDomain ?? null,
      patch.branding ?? null,
      patch.emailNotifications ?? null,
      patch.dashboardBilling ?? null,
      patch.contactEmail !== undefined,
      patch.contactEmail ?? null,
      patch.domainToken ?? null,
      patch.domainVerified ?? false,
      patch.lowBalanceThresholdCents !== undefined,
      patch.lowBalanceThresholdCents ?? null,
    ],
  );
}

/**
 * Claims the one-time demo organization (instance setting 'demo_organization') when no organization exists yet.
 * @returns false when it was claimed before or organizations exist.
 */
export async function claimDemoOrganization(db: Db): Promise<boolean> {
  const claimed = await one(
    db,
    `INSERT INTO instance_settings (key, value) SELECT 'demo_organization', '{}'::jsonb
     WHERE NOT EXISTS (SELECT 1 FROM organizations) ON CONFLICT (key) DO NOTHING RETURNING key`,
  );
  return claimed !== null;
}

/** Records which organization the demo is. */
export async function recordDemoOrganization(db: Db, organizationId: string): Promise<void> {
  await db.query(`UPDATE instance_settings SET value = $1 WHERE key = 'demo_organization'`, [{ organizationId }]);
}

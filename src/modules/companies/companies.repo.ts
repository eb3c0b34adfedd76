import type { Tenant } from '../../context.js';
import { many, one, onePrepared, type Db } from '../../lib/db.js';
import type { AddressInput, OfficerInput } from './company-rules.js';

/** Column values of a company, without the keys and timestamps. */
export interface CompanyColumns {
  legal_name: string;
  trade_name: string | null;
  ein: string | null;
  entity_type: 'LLC' | 'CORP';
  structure_type: string | null;
  tax_election: string | null;
  fiscal_end_month: string;
  /** 'YYYY-MM-DD' (DATE is parsed as text, see lib/db.ts). */
  formation_date: string | null;
  formation_state: string | null;
  principal_address: AddressInput;
  mailing_address: AddressInput;
  officers: OfficerInput[];
}

/** A row of `companies`: the column values with keys and timestamps; officers are kept here (request-only in the API). */
export interface CompanyRow extends CompanyColumns {
  id: string;
  organization_id: string;
  environment: string;
  slug: string;
  created_at: Date;
  updated_at: Date;
}

/** The value columns of `companies` (without keys, slug and timestamps), in insert order. */
const COMPANY_COLUMNS = [
  'legal_name',
  'trade_name',
  'ein',
  'entity_type',
  'structure_type',
  'tax_election',
  'fiscal_end_month',
  'formation_date',
  'formation_state',
  'principal_address',
  'mailing_address',
  'officers',
] as const satisfies ReadonlyArray<keyof CompanyColumns>;
const COLUMNS = COMPANY_COLUMNS;
const JSON_COLUMNS = new Set<string>(['principal_address', 'mailing_address', 'officers']);
const values = (c: CompanyColumns) => COLUMNS.map((k) => (JSON_COLUMNS.has(k) ? JSON.stringify(c[k]) : c[k]));

/**
 * Inserts a company with `slug`, or returns null when the slug is already taken in the tenant (ON CONFLICT
 * DO NOTHING, so a taken slug never aborts the caller's transaction; a concurrent insert of the same slug
 * waits for the other transaction and then yields null).
 */
export function insertCompanyWithSlug(
  db: Db,
  tenant: Tenant,
  id: string,
  slug: string,
  c: CompanyColumns,
): Promise<CompanyRow | null> {
  const placeholders = COLUMNS.map((_, i) => `$${i + 5}`).join(', ');
  return one<CompanyRow>(
    db,
    `INSERT INTO companies (id, organization_id, environment, slug, ${COLUMNS.join(', ')})
     VALUES ($1, $2, $3, $4, ${placeholders})
     ON CONFLICT ON CONSTRAINT companies_slug_unique DO NOTHING RETURNING *`,
    [id, tenant.organizationId, tenant.environment, slug, ...values(c)],
  );
}

/** Slugs of the tenant equal to `base` or `base-<n>` (to pick the next free suffix). */
export async function slugsLike(db: Db, tenant: Tenant, base: string): Promise<string[]> {
  const rows = await many<{ slug: string }>(
    db,
    `SELECT slug FROM companies WHERE organization_id = $1 AND environment = $2 AND (slug = $3 OR slug ~ ('^' || $4 || '-[0-9]+$'))`,
    [tenant.organizationId, tenant.environment, base, base],
  );
  return rows.map((r) => r.slug);
}

/** Overwrites every column; updated_at moves only when a value changed (a PATCH that changes nothing leaves it). */
export function updateCompany(db: Db, tenant: Tenant, id: string, c: CompanyColumns): Promise<CompanyRow | null> {
  const sets = COLUMNS.map((k, i) => `${k} = $${i + 4}`).join(', ');
  const given = COLUMNS.map((_, i) => `$${i + 4}`).join(', ');
  return one<CompanyRow>(
    db,
    `UPDATE companies SET ${sets},
            updated_at = CASE WHEN (${COLUMNS.join(', ')}) IS DISTINCT FROM (${given}) THEN now() ELSE updated_at END
      WHERE id = $1 AND organization_id = $2 AND environment = $3 RETURNING *`,
    [id, tenant.organizationId, tenant.environment, ...values(c)],
  );
}

/** The tenant's company with this id, or null; `forUpdate` locks it (inside a transaction). */
export function findCompanyById(db: Db, tenant: Tenant, id: string, forUpdate = false): Promise<CompanyRow | null> {
  return one<CompanyRow>(
    db,
    `SELECT * FROM companies WHERE id = $1 AND organization_id = $2 AND environment = $3${forUpdate ? ' FOR UPDATE' : ''}`,
    [id, tenant.organizationId, tenant.environment],
  );
}

/** A company as the API shows it: every column but `officers`, which are taken in requests and never returned. */
export type CompanyViewRow = Omit<CompanyRow, 'officers'>;

const VIEW_COLUMNS =
  'id, organization_id, environment, slug, legal_name, trade_name, ein, entity_type, structure_type, tax_election, fiscal_end_month, formation_date, formation_state, principal_address, mailing_address, created_at, updated_at';

/**
 * The tenant's company by id (`comp_…`) or by slug, as the API shows it (no officers, which would only be parsed to be
 * dropped), or null. One indexed read.
 */
export function findCompanyView(
  db: Db,
  tenant: Tenant,
  idOrSlug: { id: string } | { slug: string },
): Promise<CompanyViewRow | null> {
  const [column, value] = 'id' in idOrSlug ? ['id', idOrSlug.id] : ['slug', idOrSlug.slug];
  return onePrepared<CompanyViewRow>(
    db,
    `company_view_by_${column}`,
    `SELECT ${VIEW_COLUMNS} FROM companies WHERE ${column} = $1 AND organization_id = $2 AND environment = $3`,
    [value, tenant.organizationId, tenant.environment],
  );
}

/** The tenant's company with this slug, or null; `forUpdate` locks it (inside a transaction). */
export function findCompanyBySlug(db: Db, tenant: Tenant, slug: string, forUpdate = false): Promise<CompanyRow | null> {
  return one<CompanyRow>(
    db,
    `SELECT * FROM companies WHERE slug = $1 AND organization_id = $2 AND environment = $3${forUpdate ? ' FOR UPDATE' : ''}`,
    [slug, tenant.organizationId, tenant.environment],
  );
}

/** Newest first, `limit + 1` rows; with `userId`, only companies that user administers. */
export function listCompanies(
  db: Db,
  tenant: Tenant,
  q: { limit: number; startingAfter?: string; userId?: string },
): Promise<CompanyRow[]> {
  return many<CompanyRow>(
    db,
    `SELECT c.* FROM companies c
      WHERE c.organization_id = $1 AND c.environment = $2
        AND ($3::text IS NULL OR c.id < $3)
        AND ($4::text IS NULL OR EXISTS (SELECT 1 FROM company_admins a WHERE a.company_id = c.id AND a.user_id = $4))
      ORDER BY c.id DESC LIMIT $5`,
    [tenant.organizationId, tenant.environment, q.startingAfter ?? null, q.userId ?? null, q.limit + 1],
  );
}

/** Makes the user an admin of the company (idempotent). */
export async function insertCompanyAdmin(db: Db, tenant: Tenant, companyId: string, userId: string): Promise<void> {
  await db.query(
    `INSERT INTO company_admins (company_id, user_id, organization_id, environment) VALUES ($1, $2, $3, $4)
     ON CONFLICT (company_id, user_id) DO NOTHING`,
    [companyId, userId, tenant.organizationId, tenant.environment],
  );
}

/** True when the user administers the company in this tenant. */
export async function companyAdminExists(db: Db, tenant: Tenant, companyId: string, userId: string): Promise<boolean> {
  const row = await one(
    db,
    'SELECT 1 FROM company_admins WHERE company_id = $1 AND user_id = $2 AND organization_id = $3 AND environment = $4',
    [companyId, userId, tenant.organizationId, tenant.environment],
  );
  return row !== null;
}

/** Sets formation_date and/or ein (filing pipeline); absent fields keep their value. */
export function setFiled(
  db: Db,
  tenant: Tenant,
  id: string,
  f: { formationDate?: string; ein?: string; formationState?: string },
): Promise<CompanyRow | null> {
  return one<CompanyRow>(
    db,
    `UPDATE companies SET formation_date = COALESCE($4::date, formation_date), ein = COALESCE($5, ein),
            formation_state = COALESCE(formation_state, $6), updated_at = now()
      WHERE id = $1 AND organization_id = $2 AND environment = $3 RETURNING *`,
    [id, tenant.organizationId, tenant.environment, f.formationDate ?? null, f.ein ?? null, f.formationState ?? null],
  );
}

import type { Tenant } from '../../lib/tenant.js';
import { many, one, type Db } from '../../lib/db.js';
import type { ProductType } from './product-types.js';

/** A row of PRICE_SELECT: the catalogue joined with the tenant's overrides. Cents. */
export interface PriceJoinRow {
  type: ProductType;
  name: string;
  description: string;
  sort_order: number;
  default_amount_cents: number;
  wholesale_amount_cents: number;
  override_cents: number | null;
  retail_amount_cents: number | null;
  enabled: boolean | null;
  customized: boolean;
}

/** A row of the state fee schedule (table state_fees), all amounts in cents. */
export interface StateFeeRow {
  state: string;
  name: string;
  llc_formation_cents: number;
  corp_formation_cents: number;
  llc_foreign_cents: number;
  corp_foreign_cents: number;
  llc_annual_report_cents: number;
  corp_annual_report_cents: number;
  expedited_formation_cents: number | null;
  source: Record<string, unknown>;
  updated_at: Date;
  updated_by: string | null;
}

/** The catalogue joined with a tenant's wholesale and retail overrides; $1 organization id, $2 environment. */
const PRICE_SELECT = `
  SELECT c.type, c.name, c.description, c.sort_order, c.default_amount_cents, c.wholesale_amount_cents,
         w.wholesale_amount_cents AS override_cents, p.retail_amount_cents, p.enabled, (p.type IS NOT NULL) AS customized
    FROM price_catalog c
    LEFT JOIN organization_wholesale_prices w ON w.organization_id = $1 AND w.type = c.type
    LEFT JOIN organization_prices p ON p.organization_id = $1 AND p.environment = $2 AND p.type = c.type`;

/** Every product of the catalogue joined with the tenant's overrides, in catalogue order (one query; cents). */
export function listTenantPriceRows(db: Db, tenant: Tenant): Promise<PriceJoinRow[]> {
  return many<PriceJoinRow>(db, `${PRICE_SELECT} ORDER BY c.sort_order, c.type`, [
    tenant.organizationId,
    tenant.environment,
  ]);
}

/** One product joined with the tenant's overrides, or null when the type is not in the catalogue (cents). */
export function findTenantPriceRow(db: Db, tenant: Tenant, type: ProductType): Promise<PriceJoinRow | null> {
  return one<PriceJoinRow>(db, `${PRICE_SELECT} WHERE c.type = $3`, [tenant.organizationId, tenant.environment, type]);
}

/** The organization's wholesale price of `type` in cents (override, else catalogue), or null for an unknown type. */
export function findWholesaleCents(
  db: Db,
  organizationId: string,
  type: ProductType,
): Promise<{ cents: number } | null> {
  return one<{ cents: number }>(
    db,
    `SELECT COALESCE(w.wholesale_amount_cents, c.wholesale_amount_cents) AS cents
       FROM price_catalog c
       LEFT JOIN organization_wholesale_prices w ON w.organization_id = $1 AND w.type = c.type
      WHERE c.type = $2`,
    [organizationId, type],
  );
}

/** The fee schedule row of a state (upper-case two-letter code), or null. */
export function findStateFeesRow(db: Db, state: string): Promise<StateFeeRow | null> {
  return one<StateFeeRow>(db, 'SELECT * FROM state_fees WHERE state = $1', [state]);
}

/** A catalogue row to seed; amounts in cents. */
export interface SeedCatalogRow {
  type: string;
  name: string;
  description: string;
  defaultCents: number;
  wholesaleCents: number;
  sortOrder: number;
}

/** Inserts a catalogue row unless the type exists (operator changes survive restarts). */
export async function insertSeedCatalogRow(db: Db, p: SeedCatalogRow): Promise<void> {
  await db.query(
    `INSERT INTO price_catalog (type, name, description, default_amount_cents, wholesale_amount_cents, sort_order)
       VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (type) DO NOTHING`,
    [p.type, p.name, p.description, p.defaultCents, p.wholesaleCents, p.sortOrder],
  );
}

/** Column values of a state_fees row an operator may change (cents). */
export type StateFeeColumns = Pick<
  StateFeeRow,
  | 'name'
  | 'llc_formation_cents'
  | 'corp_formation_cents'
  | 'llc_foreign_cents'
  | 'corp_foreign_cents'
  | 'llc_annual_report_cents'
  | 'corp_annual_report_cents'
  | 'expedited_formation_cents'
>;

/** Inserts a state's fee schedule row as seeded (updated_by 'seed') unless the state has one; amounts in cents. */
export async function insertSeedStateFees(
  db: Db,
  state: string,
  f: StateFeeColumns & Pick<StateFeeRow, 'source'>,
): Promise<void> {
  await db.query(
    `INSERT INTO state_fees (state, name, llc_formation_cents, corp_formation_cents, llc_foreign_cents, corp_foreign_cents,
                               llc_annual_report_cents, corp_annual_report_cents, expedited_formation_cents, source, updated_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'seed') ON CONFLICT (state) DO NOTHING`,
    [
      state,
      f.name,
      f.llc_formation_cents,
      f.corp_formation_cents,
      f.llc_foreign_cents,
      f.corp_foreign_cents,
      f.llc_annual_report_cents,
      f.corp_annual_report_cents,
      f.expedited_formation_cents,
      f.source,
    ],
  );
}

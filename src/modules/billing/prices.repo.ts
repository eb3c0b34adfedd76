import type { Tenant } from '../../context.js';
import { many, one, type Db } from '../../lib/db.js';
import type { PriceJoinRow, ProductType, StateFeeRow } from './pricing.js';

/** The catalogue joined with a tenant's wholesale and retail overrides; $1 organization id, $2 environment. */
const PRICE_SELECT = `
  SELECT c.type, c.name, c.description, c.sort_order, c.default_amount_cents, c.wholesale_amount_cents,
         w.wholesale_amount_cents AS override_cents, p.retail_amount_cents, p.enabled, (p.type IS NOT NULL) AS customized
    FROM price_catalog c
    LEFT JOIN organization_wholesale_prices w ON w.organization_id = $1 AND w.type = c.type
    LEFT JOIN organization_prices p ON p.organization_id = $1 AND p.environment = $2 AND p.type = c.type`;

/** Every product of the catalogue joined with the tenant's overrides, in catalogue order (one query; cents). */
export function listTenantPriceRows(db: Db, tenant: Tenant): Promise<PriceJoinRow[]> {
  return many<PriceJoinRow>(db, `${PRICE_SELECT} ORDER BY c.sort_order, c.type`, [tenant.organizationId, tenant.environment]);
}

/** One product joined with the tenant's overrides, or null when the type is not in the catalogue (cents). */
export function findTenantPriceRow(db: Db, tenant: Tenant, type: ProductType): Promise<PriceJoinRow | null> {
  return one<PriceJoinRow>(db, `${PRICE_SELECT} WHERE c.type = $3`, [tenant.organizationId, tenant.environment, type]);
}

/** The organization's wholesale price of `type` in cents (override, else catalogue), or null for an unknown type. */
export function findWholesaleCents(db: Db, organizationId: string, type: ProductType): Promise<{ cents: number } | null> {
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

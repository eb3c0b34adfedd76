import type { Tenant } from '../../lib/tenant.js';
import type { Db } from '../../lib/db.js';
import { AppError, ValidationError } from '../../lib/errors.js';
import * as repo from './prices.repo.js';
import type { PriceJoinRow, StateFeeRow } from './prices.repo.js';
import { PRODUCT_TYPES, type ProductType } from './product-types.js';

export type { StateFeeRow } from './prices.repo.js';
export { PRODUCT_TYPES, type ProductType } from './product-types.js';

/** The formation packages; only these may be disabled (PRICE-5). */
export const FORMATION_TIERS = [
  'formation_tier_1',
  'formation_tier_2',
  'formation_tier_3',
] as const satisfies readonly ProductType[];

/** Narrowing guard for path parameters and request data. */
export function isProductType(value: string): value is ProductType {
  return (PRODUCT_TYPES as readonly string[]).includes(value);
}

/** True for formation_tier_1/2/3. */
export function isFormationTier(type: string): boolean {
  return (FORMATION_TIERS as readonly string[]).includes(type);
}

/**
 * One product's prices as seen by one tenant, all in integer cents.
 * - `defaultCents`: the list price (catalogue), used at checkout when no retail price is set.
 * - `catalogWholesaleCents`: the operator's default wholesale; `wholesaleOverrideCents` the organization's override or
 *   null.
 * - `wholesaleCents`: what balance-billed orders are debited = override ?? catalogue (BILL-1, PRICE-4).
 * - `retailCents`: the tenant's custom price or null; `effectiveRetailCents` = max(retail ?? default, wholesale):
 *   what in-app checkout charges (BILL-11, PRICE-8).
 * - `enabled`: false only for a formation tier the tenant switched off (dashboard checkout only).
 */
export interface TenantPrice {
  type: ProductType;
  name: string;
  description: string;
  sortOrder: number;
  defaultCents: number;
  catalogWholesaleCents: number;
  wholesaleOverrideCents: number | null;
  wholesaleCents: number;
  retailCents: number | null;
  effectiveRetailCents: number;
  enabled: boolean;
  /** True when the tenant has an organization_prices row (retail price or enabled flag set). */
  customized: boolean;
}

/** A {@link PriceJoinRow} as the tenant's effective price (wholesale after override, retail never below it). */
function toTenantPrice(r: PriceJoinRow): TenantPrice {
  return {
    type: r.type,
    name: r.name,
    description: r.description,
    sortOrder: r.sort_order,
    defaultCents: r.default_amount_cents,
    catalogWholesaleCents: r.wholesale_amount_cents,
    wholesaleOverrideCents: r.override_cents,
    wholesaleCents: r.override_cents ?? r.wholesale_amount_cents,
    retailCents: r.retail_amount_cents,
    // Checkout never sells below the organization's floor, even when an override exceeds the list price.
    effectiveRetailCents: Math.max(
      r.retail_amount_cents ?? r.default_amount_cents,
      r.override_cents ?? r.wholesale_amount_cents,
    ),
    enabled: r.enabled ?? true,
    customized: r.customized,
  };
}

/**
 * Every product's prices for a tenant in ONE query, in catalogue order (used by GET /organization/prices
 * and by the order quote, which needs several types at once).
 */
export async function loadTenantPrices(db: Db, tenant: Tenant): Promise<TenantPrice[]> {
  const rows = await repo.listTenantPriceRows(db, tenant);
  return rows.map(toTenantPrice);
}

/** The same as {@link loadTenantPrices}, keyed by product type (one query). */
export async function loadTenantPriceMap(db: Db, tenant: Tenant): Promise<Record<ProductType, TenantPrice>> {
  const list = await loadTenantPrices(db, tenant);
  return Object.fromEntries(list.map((p) => [p.type, p])) as Record<ProductType, TenantPrice>;
}

/** One product's prices for a tenant. @throws AppError not_found when the type is not in the catalogue. */
export async function loadTenantPrice(db: Db, tenant: Tenant, type: ProductType): Promise<TenantPrice> {
  const row = await repo.findTenantPriceRow(db, tenant, type);
  if (!row) throw new AppError('not_found', `No such product type: '${type}'`);
  return toTenantPrice(row);
}

/**
 * Wholesale price in cents that balance-billed orders of this organization are debited for `type`:
 * the organization's override, else the catalogue default (BILL-1, PRICE-4). Wholesale is per
 * organization, the same in live and test.
 * @throws AppError not_found when the type is not in the catalogue.
 */
export async function wholesaleCents(db: Db, organizationId: string, type: ProductType): Promise<number> {
  const row = await repo.findWholesaleCents(db, organizationId, type);
  if (!row) throw new AppError('not_found', `No such product type: '${type}'`);
  return row.cents;
}

/**
 * Retail price in cents that in-app checkout charges for `type`: the tenant's custom retail price, else the
 * catalogue list price (PRICE-2 defaultAmount; BILL-11), never below (PRICE-8) the wholesale floor.
 * @throws AppError not_found when the type is not in the catalogue.
 */
export async function retailCents(db: Db, tenant: Tenant, type: ProductType): Promise<number> {
  return (await loadTenantPrice(db, tenant, type)).effectiveRetailCents;
}

/** Which state fee: formation, foreign qualification, annual report, or the expedited formation fee. */
export type StateFeeKind = 'formation' | 'foreign_qualification' | 'annual_report' | 'expedited_formation';

/** The company's entity type, which picks the LLC or corporation column of a state fee (CO-2, BILL-7). */
export type EntityType = 'LLC' | 'CORP';

/** The exact message of ORD-FORM-5. */
export const EXPEDITED_UNAVAILABLE_MESSAGE =
  'Expedited formation is not available for the selected state and entity type';

/** The 400 of ORD-FORM-5: message exactly as the contract words it, field `formation.expedited`. */
function expeditedUnavailableError(): AppError {
  return new AppError('validation_error', EXPEDITED_UNAVAILABLE_MESSAGE, {
    errors: [{ field: 'formation.expedited', message: EXPEDITED_UNAVAILABLE_MESSAGE }],
  });
}

/** The fee schedule row of a state (two-letter code), or null. */
export function findStateFees(db: Db, state: string): Promise<StateFeeRow | null> {
  return repo.findStateFeesRow(db, state.toUpperCase());
}

/**
 * Picks one fee from a loaded schedule row (pure; the quote loads the row once and calls this per line).
 * `expedited_formation` is the expedited state fee that REPLACES the standard formation fee (ORD-FORM-5,
 * BILL-9); it exists only for LLCs in the states that have it.
 * @returns cents. @throws the formation.expedited validation error when expedite is unavailable.
 */
export function pickStateFee(row: StateFeeRow, fee: StateFeeKind, entityType: EntityType): number {
  const llc = entityType === 'LLC';
  switch (fee) {
    case 'formation':
      return llc ? row.llc_formation_cents : row.corp_formation_cents;
    case 'foreign_qualification':
      return llc ? row.llc_foreign_cents : row.corp_foreign_cents;
    case 'annual_report':
      return llc ? row.llc_annual_report_cents : row.corp_annual_report_cents;
    case 'expedited_formation':
      if (!llc || row.expedited_formation_cents === null) throw expeditedUnavailableError();
      return row.expedited_formation_cents;
  }
}

/**
 * State government fee in cents for `state` (two-letter code) from the operator-editable schedule
 * (BILL-16). @throws ValidationError on field `filingState` when the state has no schedule row;
 * the formation.expedited validation error for unavailable expedite (ORD-FORM-5).
 */
export async function stateFeeCents(db: Db, state: string, fee: StateFeeKind, entityType: EntityType): Promise<number> {
  const row = await findStateFees(db, state);
  if (!row) {
    if (fee === 'expedited_formation') throw expeditedUnavailableError();
    throw new ValidationError([{ field: 'filingState', message: `has no state fee schedule: '${state}'` }]);
  }
  return pickStateFee(row, fee, entityType);
}

import type pg from 'pg';
import type { Tenant } from '../../context.js';
import { withTransaction, type Db } from '../../lib/db.js';
import { AppError, ValidationError } from '../../lib/errors.js';
import { formatCents } from '../../lib/money.js';
import { priceSnapshot } from '../audit/audit-redaction.js';
import { type AuditActor, recordAuditChange } from '../audit/audit.service.js';
import { MAX_PRICE_DOLLARS, requestDollarsToCents } from '../../lib/amounts.js';
import * as repo from './billing.repo.js';
import { priceBelowFloorDetails } from './billing.views.js';
import {
  FORMATION_TIERS,
  isFormationTier,
  isProductType,
  loadTenantPrice,
  loadTenantPrices,
  PRODUCT_TYPES,
  type ProductType,
  type TenantPrice,
} from './pricing.js';

/**
 * Checks a product type from a path. Unknown types answer 404 like any unknown resource id (PRICE-1: there are
 * nine). @throws AppError not_found.
 */
export function parseProductType(type: string): ProductType {
  if (!isProductType(type))
    throw new AppError('not_found', `No such product type: '${type}'. Types: ${PRODUCT_TYPES.join(', ')}`);
  return type;
}

/** GET /organization/prices: all nine prices of the tenant (cents), catalogue order; the route presents them. */
export async function listPriceRows(db: Db, tenant: Tenant): Promise<TenantPrice[]> {
  return loadTenantPrices(db, tenant);
}

/** Body of PUT /organization/prices/{type}: whole dollars and/or enabled. */
export interface PriceUpdate {
  retailAmount?: number;
  enabled?: boolean;
}

/**
 * PUT /organization/prices/{type} (PRICE-4, PRICE-5): sets the tenant's retail price and/or enabled flag. With
 * `audit` (the portal) a change is recorded in the audit log in the same transaction (AUDIT-1, AUDIT-2, AUDIT-5).
 * @returns the updated price (cents; priceRowView presents it).
 * @throws ValidationError (no field given; retailAmount not whole dollars; enabled false on a non-tier;
 * disabling the last enabled tier), AppError price_below_floor with `minimumAmount` (dollars), not_found.
 */
export async function updateTenantPrice(
  pool: pg.Pool,
  tenant: Tenant,
  rawType: string,
  body: PriceUpdate,
  audit?: AuditActor,
): Promise<TenantPrice> {
  const type = parseProductType(rawType);
  if (body.retailAmount === undefined && body.enabled === undefined) {
    throw new ValidationError([{ field: 'retailAmount', message: 'give retailAmount, enabled, or both' }]);
  }
  const retailCents =
    body.retailAmount === undefined
      ? undefined
      : requestDollarsToCents('retailAmount', body.retailAmount, { whole: true, max: MAX_PRICE_DOLLARS });
  return withTransaction(pool, async (tx) => {
    await repo.lockFloorsShared(tx);
    await repo.lockTenantPrices(tx, tenant);
    const current = await loadTenantPrice(tx, tenant, type);
    if (retailCents !== undefined) throwIfBelowFloor(current, retailCents);
    if (body.enabled === false) await throwIfCannotDisable(tx, tenant, current);
    await repo.upsertTenantPrice(tx, tenant, type, retailCents ?? current.retailCents, body.enabled ?? current.enabled);
    const updated = await loadTenantPrice(tx, tenant, type);
    if (audit) await recordPriceChange(tx, tenant, audit, 'price.updated', current, updated);
    return updated;
  });
}

// Rule 1: the floor is the organization's wholesale override, else the default wholesale.
function throwIfBelowFloor(price: TenantPrice, retailCents: number): void {
  if (retailCents >= price.wholesaleCents) return;
  throw new AppError(
    'price_below_floor',
    `retailAmount ${formatCents(retailCents)} is below the wholesale floor of ${formatCents(price.wholesaleCents)} for ${price.type}; the minimum is ${formatCents(price.wholesaleCents)}`,
    priceBelowFloorDetails(price.wholesaleCents),
  );
}

// Rules 3 and 4: only formation tiers may be disabled, and one tier must stay enabled.
async function throwIfCannotDisable(tx: Db, tenant: Tenant, price: TenantPrice): Promise<void> {
  if (!isFormationTier(price.type)) {
    throw new ValidationError([
      {
        field: 'enabled',
        message: `can be false only for the formation tiers (${FORMATION_TIERS.join(', ')}); ${price.type} is always enabled`,
      },
    ]);
  }
  const others = (await loadTenantPrices(tx, tenant)).filter(
    (p) => isFormationTier(p.type) && p.type !== price.type && p.enabled,
  );
  if (!others.length) {
    throw new ValidationError([
      {
        field: 'enabled',
        message: `at least one formation tier must remain enabled; enable another tier before disabling ${price.type}`,
      },
    ]);
  }
}

/**
 * DELETE /organization/prices/{type}: reverts the product to the list price (removes retailAmount; an
 * enabled=false flag of a tier is kept, it is not a price); recorded in the audit log with `audit` as for
 * updateTenantPrice. @returns the resulting price (cents).
 * @throws AppError not_found when the type is unknown or no custom price is set (PRICE-6).
 */
export async function deleteTenantPrice(
  pool: pg.Pool,
  tenant: Tenant,
  rawType: string,
  audit?: AuditActor,
): Promise<TenantPrice> {
  const type = parseProductType(rawType);
  return withTransaction(pool, async (tx) => {
    await repo.lockTenantPrices(tx, tenant);
    const current = await loadTenantPrice(tx, tenant, type);
    if (current.retailCents === null) throw new AppError('not_found', `No custom price is set for ${type}`);
    if (current.enabled) await repo.deleteTenantPrice(tx, tenant, type);
    else await repo.upsertTenantPrice(tx, tenant, type, null, false);
    const reverted = await loadTenantPrice(tx, tenant, type);
    if (audit) await recordPriceChange(tx, tenant, audit, 'price.reverted', current, reverted);
    return reverted;
  });
}

// AUDIT-1, AUDIT-5: a retail price's change in the tenant's environment, unless it changed nothing.
async function recordPriceChange(
  tx: Db,
  tenant: Tenant,
  actor: AuditActor,
  action: 'price.updated' | 'price.reverted',
  before: TenantPrice,
  after: TenantPrice,
): Promise<void> {
  await recordAuditChange(tx, {
    actor,
    organizationId: tenant.organizationId,
    environment: tenant.environment,
    action,
    targetId: before.type,
    before: priceSnapshot(before, tenant.environment),
    after: priceSnapshot(after, tenant.environment),
  });
}

import type pg from 'pg';
import type { Environment } from '../../context.js';
import { withTransaction, type Db } from '../../lib/db.js';
import { AppError, ValidationError } from '../../lib/errors.js';
import { centsToDollars } from '../../lib/money.js';
import { MAX_PRICE_DOLLARS, requestDollarsToCents } from './amounts.js';
import * as repo from './billing.repo.js';
import { PRODUCT_TYPES, type ProductType } from './pricing.js';
import { parseProductType } from './prices.service.js';

/** A retail price raised by PRICE-7. `retailAmount` in dollars. */
export interface RaisedPrice {
  organizationId: string;
  environment: Environment;
  retailAmount: number;
}

/** Operator view of a catalogue row (dollars). */
export function catalogView(c: repo.CatalogRow) {
  return {
    type: c.type,
    name: c.name,
    description: c.description,
    defaultAmount: centsToDollars(c.default_amount_cents),
    wholesaleAmount: centsToDollars(c.wholesale_amount_cents),
    updatedAt: c.updated_at.toISOString(),
  };
}

const raisedView = (rows: Awaited<ReturnType<typeof repo.raiseRetailToFloor>>): RaisedPrice[] =>
  rows.map((r) => ({
    organizationId: r.organization_id,
    environment: r.environment,
    retailAmount: centsToDollars(r.retail_amount_cents),
  }));

/** GET /admin/v1/wholesale-prices: the catalogue (default and wholesale prices of the nine types). */
export async function listCatalog(db: Db) {
  return (await repo.listCatalog(db)).map(catalogView);
}

/**
 * PUT /admin/v1/wholesale-prices/{type} and `prices wholesale set`: changes the default wholesale price and/or
 * the list price (whole dollars; list price >= wholesale). A new wholesale price above the list price, sent
 * without a defaultAmount, raises the list price to it as well (the list price is the retail price of tenants
 * that set none, so PRICE-7 applies to it too); an explicit defaultAmount below the wholesale is a 400.
 * In the same transaction every retail price of an organization WITHOUT an override that is now below the new
 * floor is raised to it (PRICE-7).
 * @returns the catalogue row and the raised prices. @throws ValidationError, AppError not_found.
 */
export async function setCatalogPrice(
  pool: pg.Pool,
  rawType: string,
  body: { wholesaleAmount?: number; defaultAmount?: number },
) {
  const type = parseProductType(rawType);
  if (body.wholesaleAmount === undefined && body.defaultAmount === undefined) {
    throw new ValidationError([{ field: 'wholesaleAmount', message: 'give wholesaleAmount, defaultAmount, or both' }]);
  }
  const wholesale =
    body.wholesaleAmount === undefined
      ? undefined
      : requestDollarsToCents('wholesaleAmount', body.wholesaleAmount, { whole: true, max: MAX_PRICE_DOLLARS });
  const list =
    body.defaultAmount === undefined
      ? undefined
      : requestDollarsToCents('defaultAmount', body.defaultAmount, { whole: true, max: MAX_PRICE_DOLLARS });
  return withTransaction(pool, async (tx) => {
    await repo.lockFloorsExclusive(tx);
    const current = await repo.findCatalogForUpdate(tx, type);
    if (!current) throw new AppError('not_found', `No such product type: '${type}'`);
    const nextWholesale = wholesale ?? current.wholesale_amount_cents;
    const next = { wholesale: nextWholesale, list: list ?? Math.max(current.default_amount_cents, nextWholesale) };
    if (next.list < next.wholesale) {
      throw new ValidationError([
        {
          field: 'defaultAmount',
          message: `must be at least the wholesale price (${centsToDollars(next.wholesale)} dollars)`,
        },
      ]);
    }
    const row = await repo.updateCatalog(tx, type, next.list, next.wholesale);
    const raised = await repo.raiseRetailToFloor(tx, type, null);
    return { price: catalogView(row), retailPricesRaised: raisedView(raised) };
  });
}

async function throwIfNoOrganization(tx: Db, organizationId: string): Promise<void> {
  if (!(await repo.organizationExists(tx, organizationId)))
    throw new AppError('not_found', `No such organization: '${organizationId}'`);
}

/** The per-organization wholesale view of one type (dollars); `overridden` false means the default applies. */
async function orgWholesaleView(db: Db, organizationId: string, type: ProductType) {
  const [catalog, overrides] = await Promise.all([
    repo.listCatalog(db),
    repo.findWholesaleOverrides(db, organizationId),
  ]);
  const c = catalog.find((r) => r.type === type)!;
  const override = overrides.get(type);
  return {
    organizationId,
    type,
    wholesaleAmount: centsToDollars(override ?? c.wholesale_amount_cents),
    defaultWholesaleAmount: centsToDollars(c.wholesale_amount_cents),
    overridden: override !== undefined,
  };
}

/**
 * GET /admin/v1/organizations/{id}/wholesale-prices: the organization's floor for every type, in dollars.
 * @throws AppError not_found (404) for an unknown organization.
 */
export async function listOrgWholesale(db: Db, organizationId: string) {
  await throwIfNoOrganization(db, organizationId);
  return Promise.all(PRODUCT_TYPES.map((t) => orgWholesaleView(db, organizationId, t)));
}

/**
 * PUT /admin/v1/organizations/{id}/wholesale-prices/{type} (`--org` in the CLI): sets the organization's
 * wholesale override (whole dollars) and, in the same transaction, raises its retail prices (both
 * environments) below the new floor (PRICE-7). @throws ValidationError, AppError not_found.
 */
export async function setOrgWholesale(pool: pg.Pool, organizationId: string, rawType: string, wholesaleAmount: number) {
  const type = parseProductType(rawType);
  const cents = requestDollarsToCents('wholesaleAmount', wholesaleAmount, { whole: true, max: MAX_PRICE_DOLLARS });
  return withTransaction(pool, async (tx) => {
    await repo.lockFloorsExclusive(tx);
    await throwIfNoOrganization(tx, organizationId);
    await repo.upsertWholesaleOverride(tx, organizationId, type, cents);
    const raised = await repo.raiseRetailToFloor(tx, type, organizationId);
    return { ...(await orgWholesaleView(tx, organizationId, type)), retailPricesRaised: raisedView(raised) };
  });
}

/**
 * DELETE /admin/v1/organizations/{id}/wholesale-prices/{type}: removes the override so the default wholesale
 * applies again; if that default is higher, retail prices below it are raised (PRICE-7).
 * @throws AppError not_found when the organization or the override does not exist.
 */
export async function removeOrgWholesale(pool: pg.Pool, organizationId: string, rawType: string) {
  const type = parseProductType(rawType);
  return withTransaction(pool, async (tx) => {
    await repo.lockFloorsExclusive(tx);
    await throwIfNoOrganization(tx, organizationId);
    if (!(await repo.deleteWholesaleOverride(tx, organizationId, type))) {
      throw new AppError('not_found', `Organization '${organizationId}' has no wholesale override for ${type}`);
    }
    const raised = await repo.raiseRetailToFloor(tx, type, organizationId);
    return { ...(await orgWholesaleView(tx, organizationId, type)), retailPricesRaised: raisedView(raised) };
  });
}

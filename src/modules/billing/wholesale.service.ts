import type pg from 'pg';
import { wholesalePriceSnapshot } from '../audit/audit-redaction.js';
import { type AuditActor, recordAuditChange } from '../audit/audit.service.js';
import { withTransaction, type Db } from '../../lib/db.js';
import { AppError, ValidationError } from '../../lib/errors.js';
import { MAX_PRICE_DOLLARS, requestDollarsToCents } from '../../lib/amounts.js';
import * as repo from './billing.repo.js';
import { belowWholesaleMessage } from './billing.views.js';
import { PRODUCT_TYPES, type ProductType } from './pricing.js';
import { parseProductType } from './prices.service.js';

/** One organization's wholesale price of one type, cents; `overridden` false means the default applies. */
export interface OrgWholesale {
  organizationId: string;
  type: ProductType;
  wholesaleCents: number;
  defaultWholesaleCents: number;
  overridden: boolean;
}

/** GET /admin/v1/wholesale-prices: the catalogue rows (default and wholesale prices of the nine types, cents). */
export function listCatalog(db: Db): Promise<repo.CatalogRow[]> {
  return repo.listCatalog(db);
}

/**
 * PUT /admin/v1/wholesale-prices/{type} and `prices wholesale set`: changes the default wholesale price and/or
 * the list price (whole dollars; list price >= wholesale). A new wholesale price above the list price, sent
 * without a defaultAmount, raises the list price to it as well (the list price is the retail price of tenants
 * that set none, so PRICE-7 applies to it too); an explicit defaultAmount below the wholesale is a 400.
 * In the same transaction every retail price of an organization WITHOUT an override that is now below the new
 * floor is raised to it (PRICE-7).
 * @returns the catalogue row and the raised prices (cents; catalogChangeView presents them).
 * @throws ValidationError, AppError not_found.
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
          message: belowWholesaleMessage(next.wholesale),
        },
      ]);
    }
    const row = await repo.updateCatalog(tx, type, next.list, next.wholesale);
    const raised = await repo.raiseRetailToFloor(tx, type, null);
    return { price: row, retailPricesRaised: raised };
  });
}

async function throwIfNoOrganization(tx: Db, organizationId: string): Promise<void> {
  if (!(await repo.organizationExists(tx, organizationId)))
    throw new AppError('not_found', `No such organization: '${organizationId}'`);
}

/** The organization's wholesale price of one type (cents). */
async function orgWholesaleOf(db: Db, organizationId: string, type: ProductType): Promise<OrgWholesale> {
  const [catalog, overrides] = await Promise.all([
    repo.listCatalog(db),
    repo.findWholesaleOverrides(db, organizationId),
  ]);
  const c = catalog.find((r) => r.type === type)!;
  const override = overrides.get(type);
  return {
    organizationId,
    type,
    wholesaleCents: override ?? c.wholesale_amount_cents,
    defaultWholesaleCents: c.wholesale_amount_cents,
    overridden: override !== undefined,
  };
}

/**
 * GET /admin/v1/organizations/{id}/wholesale-prices: the organization's floor for every type, in cents.
 * @throws AppError not_found (404) for an unknown organization.
 */
export async function listOrgWholesale(db: Db, organizationId: string): Promise<OrgWholesale[]> {
  await throwIfNoOrganization(db, organizationId);
  return Promise.all(PRODUCT_TYPES.map((t) => orgWholesaleOf(db, organizationId, t)));
}

/**
 * PUT /admin/v1/organizations/{id}/wholesale-prices/{type} (`--org` in the CLI): sets the organization's
 * wholesale override (whole dollars) and, in the same transaction, raises its retail prices (both
 * environments) below the new floor (PRICE-7); recorded in the audit log as done by `audit` (AUDIT-1).
 * @throws ValidationError, AppError not_found.
 */
export async function setOrgWholesale(
  pool: pg.Pool,
  organizationId: string,
  rawType: string,
  wholesaleAmount: number,
  audit: AuditActor,
) {
  const type = parseProductType(rawType);
  const cents = requestDollarsToCents('wholesaleAmount', wholesaleAmount, { whole: true, max: MAX_PRICE_DOLLARS });
  return withTransaction(pool, async (tx) => {
    await repo.lockFloorsExclusive(tx);
    await throwIfNoOrganization(tx, organizationId);
    const before = await orgWholesaleOf(tx, organizationId, type);
    await repo.upsertWholesaleOverride(tx, organizationId, type, cents);
    const raised = await repo.raiseRetailToFloor(tx, type, organizationId);
    const after = await orgWholesaleOf(tx, organizationId, type);
    await recordWholesaleChange(tx, audit, 'wholesale_price.updated', before, after);
    return { ...after, retailPricesRaised: raised };
  });
}

/**
 * DELETE /admin/v1/organizations/{id}/wholesale-prices/{type}: removes the override so the default wholesale
 * applies again; if that default is higher, retail prices below it are raised (PRICE-7). Recorded in the audit log as
 * done by `audit` (AUDIT-1).
 * @throws AppError not_found when the organization or the override does not exist.
 */
export async function removeOrgWholesale(pool: pg.Pool, organizationId: string, rawType: string, audit: AuditActor) {
  const type = parseProductType(rawType);
  return withTransaction(pool, async (tx) => {
    await repo.lockFloorsExclusive(tx);
    await throwIfNoOrganization(tx, organizationId);
    const before = await orgWholesaleOf(tx, organizationId, type);
    if (!(await repo.deleteWholesaleOverride(tx, organizationId, type))) {
      throw new AppError('not_found', `Organization '${organizationId}' has no wholesale override for ${type}`);
    }
    const raised = await repo.raiseRetailToFloor(tx, type, organizationId);
    const after = await orgWholesaleOf(tx, organizationId, type);
    await recordWholesaleChange(tx, audit, 'wholesale_price.removed', before, after);
    return { ...after, retailPricesRaised: raised };
  });
}

// AUDIT-1, AUDIT-5: an organization's wholesale price of one product, recorded in the change's transaction.
async function recordWholesaleChange(
  tx: Db,
  actor: AuditActor,
  action: 'wholesale_price.updated' | 'wholesale_price.removed',
  before: OrgWholesale,
  after: OrgWholesale,
): Promise<void> {
  await recordAuditChange(tx, {
    actor,
    organizationId: after.organizationId,
    environment: null,
    action,
    targetId: after.type,
    before: wholesalePriceSnapshot(before),
    after: wholesalePriceSnapshot(after),
  });
}

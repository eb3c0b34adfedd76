import type { Environment, Tenant } from '../../context.js';
import { many, one, type Db } from '../../lib/db.js';
import { pricesChanged } from './price-cache.js';
import type { StateFeeColumns, StateFeeRow } from './prices.repo.js';
import type { ProductType } from './product-types.js';

export type { StateFeeColumns } from './prices.repo.js';

// Lock keys (pg_advisory_xact_lock). Operator floor changes take FLOOR_LOCK exclusively and tenant price
// edits take it shared, so a retail price is never validated against a floor that is being raised
// (PRICE-7, PRICE-9) while tenant edits do not block one another.
const FLOOR_LOCK = 7_300_011;

/**
 * credit (money in), debit (an order line), reversal (undoes one debit; BILL-13), clawback (money of a top-up taken
 * back after a dispute or refund of its charge, the only entry that may take the balance below zero: FUND-10, FUND-11).
 */
export type LedgerEntryType = 'credit' | 'debit' | 'reversal' | 'clawback';

/** A ledger_entries row. Amounts in cents: > 0 adds to the balance, < 0 takes from it. */
export interface LedgerEntryRow {
  id: string;
  organization_id: string;
  environment: 'live' | 'test';
  type: LedgerEntryType;
  amount_cents: number;
  balance_after_cents: number;
  line_type: string | null;
  description: string;
  order_id: string | null;
  reverses_entry_id: string | null;
  created_by: string | null;
  /** The payment the entry comes from: a top-up id (topup_…), a Stripe dispute (dp_…) or refund; null otherwise. */
  reference?: string | null;
  created_at: Date;
}

/**
 * One ledger entry to post, as `post_ledger_entries` reads it, by name (migrations/repeatable/post_ledger_entries.sql):
 * amounts in signed cents, null where not applicable.
 */
export type LedgerLine = {
  type: LedgerEntryType;
  amount_cents: number;
  line_type: string | null;
  description: string;
  order_id: string | null;
  reverses_entry_id: string | null;
  created_by: string | null;
  /** FUND-5, FUND-10: the payment the entry comes from; absent or null for the others. */
  reference?: string | null;
};

/** Shared floor lock: held by PUT /organization/prices while it validates against the floor. */
export async function lockFloorsShared(tx: Db): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock_shared($1)', [FLOOR_LOCK]);
}

/** Exclusive floor lock: held by operator wholesale changes until their PRICE-7 raise is written. */
export async function lockFloorsExclusive(tx: Db): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock($1)', [FLOOR_LOCK]);
}

/** Serializes price edits of one tenant (keeps "one formation tier stays enabled" true under concurrency). */
export async function lockTenantPrices(tx: Db, tenant: Tenant): Promise<void> {
  await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [
    `prices:${tenant.organizationId}:${tenant.environment}`,
  ]);
}

/** Writes the tenant's price row for `type` (retail cents or null, enabled). */
export async function upsertTenantPrice(
  tx: Db,
  tenant: Tenant,
  type: ProductType,
  retailCents: number | null,
  enabled: boolean,
): Promise<void> {
  pricesChanged(tx);
  await tx.query(
    `INSERT INTO organization_prices (organization_id, environment, type, retail_amount_cents, enabled) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (organization_id, environment, type)
     DO UPDATE SET retail_amount_cents = EXCLUDED.retail_amount_cents, enabled = EXCLUDED.enabled, updated_at = now()`,
    [tenant.organizationId, tenant.environment, type, retailCents, enabled],
  );
}

/** Removes the tenant's price row for `type`. */
export async function deleteTenantPrice(tx: Db, tenant: Tenant, type: ProductType): Promise<void> {
  pricesChanged(tx);
  await tx.query('DELETE FROM organization_prices WHERE organization_id = $1 AND environment = $2 AND type = $3', [
    tenant.organizationId,
    tenant.environment,
    type,
  ]);
}

/** A price_catalog row (cents). */
export interface CatalogRow {
  type: ProductType;
  name: string;
  description: string;
  default_amount_cents: number;
  wholesale_amount_cents: number;
  sort_order: number;
  updated_at: Date;
}

/** The whole price catalogue (cents), in display order. */
export function listCatalog(db: Db): Promise<CatalogRow[]> {
  return many<CatalogRow>(db, 'SELECT * FROM price_catalog ORDER BY sort_order, type');
}

/** One catalogue row, locked FOR UPDATE until the transaction ends; null for an unknown type. */
export function findCatalogForUpdate(tx: Db, type: ProductType): Promise<CatalogRow | null> {
  return one<CatalogRow>(tx, 'SELECT * FROM price_catalog WHERE type = $1 FOR UPDATE', [type]);
}

/** Sets a product's list price and default wholesale, both in cents; the type must exist (callers lock it first). */
export async function updateCatalog(
  tx: Db,
  type: ProductType,
  defaultCents: number,
  wholesaleCents: number,
): Promise<CatalogRow> {
  pricesChanged(tx);
  const row = await one<CatalogRow>(
    tx,
    `UPDATE price_catalog SET default_amount_cents = $2, wholesale_amount_cents = $3, updated_at = now() WHERE type = $1 RETURNING *`,
    [type, defaultCents, wholesaleCents],
  );
  return row!;
}

/** Whether the organization exists (a wholesale override needs one). */
export async function organizationExists(db: Db, organizationId: string): Promise<boolean> {
  const { rowCount } = await db.query('SELECT 1 FROM organizations WHERE id = $1', [organizationId]);
  return Boolean(rowCount);
}

/** The organization's wholesale overrides, type -> cents. */
export async function findWholesaleOverrides(db: Db, organizationId: string): Promise<Map<string, number>> {
  const rows = await many<{ type: string; wholesale_amount_cents: number }>(
    db,
    'SELECT type, wholesale_amount_cents FROM organization_wholesale_prices WHERE organization_id = $1',
    [organizationId],
  );
  return new Map(rows.map((r) => [r.type, r.wholesale_amount_cents]));
}

/** Sets the organization's wholesale price (its floor) for `type`, in cents (PRICE-7). */
export async function upsertWholesaleOverride(
  tx: Db,
  organizationId: string,
  type: ProductType,
  cents: number,
): Promise<void> {
  pricesChanged(tx);
  await tx.query(
    `INSERT INTO organization_wholesale_prices (organization_id, type, wholesale_amount_cents) VALUES ($1, $2, $3)
     ON CONFLICT (organization_id, type) DO UPDATE SET wholesale_amount_cents = EXCLUDED.wholesale_amount_cents, updated_at = now()`,
    [organizationId, type, cents],
  );
}

/** Deletes an override; false when there was none. */
export async function deleteWholesaleOverride(tx: Db, organizationId: string, type: ProductType): Promise<boolean> {
  pricesChanged(tx);
  const res = await tx.query('DELETE FROM organization_wholesale_prices WHERE organization_id = $1 AND type = $2', [
    organizationId,
    type,
  ]);
  return (res.rowCount ?? 0) > 0;
}

/**
 * PRICE-7: raises every retail price of `type` that is below its organization's floor (override,
 * else catalogue wholesale) to that floor, for one organization or (null) all. One statement.
 * @returns the raised rows (organization, environment, new retail cents).
 */
export function raiseRetailToFloor(tx: Db, type: ProductType, organizationId: string | null) {
  pricesChanged(tx);
  return many<{ organization_id: string; environment: Environment; retail_amount_cents: number }>(
    tx,
    `UPDATE organization_prices p SET retail_amount_cents = f.floor_cents, updated_at = now()
       FROM (SELECT p2.organization_id, p2.environment, COALESCE(w.wholesale_amount_cents, c.wholesale_amount_cents) AS floor_cents
               FROM organization_prices p2
               JOIN price_catalog c ON c.type = p2.type
               LEFT JOIN organization_wholesale_prices w ON w.organization_id = p2.organization_id AND w.type = p2.type
              WHERE p2.type = $1 AND ($2::text IS NULL OR p2.organization_id = $2)) f
      WHERE p.type = $1 AND p.organization_id = f.organization_id AND p.environment = f.environment
        AND p.retail_amount_cents < f.floor_cents
      RETURNING p.organization_id, p.environment, p.retail_amount_cents`,
    [type, organizationId],
  );
}

/** The whole state fee schedule (cents), by state code. */
export function listStateFees(db: Db): Promise<StateFeeRow[]> {
  return many<StateFeeRow>(db, 'SELECT * FROM state_fees ORDER BY state');
}

/** A state's fee row (two-letter code), locked FOR UPDATE until the transaction ends; null when unknown. */
export function findStateFeesForUpdate(tx: Db, state: string): Promise<StateFeeRow | null> {
  return one<StateFeeRow>(tx, 'SELECT * FROM state_fees WHERE state = $1 FOR UPDATE', [state]);
}

/** Writes new fee values, appends `historyEntry` to source.history and records who changed it. */
export async function updateStateFees(
  tx: Db,
  state: string,
  v: StateFeeColumns,
  historyEntry: Record<string, unknown>,
  updatedBy: string,
): Promise<StateFeeRow> {
  pricesChanged(tx);
  const row = await one<StateFeeRow>(
    tx,
    `UPDATE state_fees SET name = $2, llc_formation_cents = $3, corp_formation_cents = $4, llc_foreign_cents = $5, corp_foreign_cents = $6,
            llc_annual_report_cents = $7, corp_annual_report_cents = $8, expedited_formation_cents = $9,
            source = jsonb_set(source, '{history}', COALESCE(source->'history', '[]'::jsonb) || jsonb_build_array($10::jsonb)),
            updated_by = $11, updated_at = now()
      WHERE state = $1 RETURNING *`,
    [
      state,
      v.name,
      v.llc_formation_cents,
      v.corp_formation_cents,
      v.llc_foreign_cents,
      v.corp_foreign_cents,
      v.llc_annual_report_cents,
      v.corp_annual_report_cents,
      v.expedited_formation_cents,
      JSON.stringify(historyEntry),
      updatedBy,
    ],
  );
  return row!;
}

/** A page of the tenant's ledger, newest first (LIMIT limit + 1 for hasMore; ids are time-sortable). */
export function listLedgerEntries(
  db: Db,
  tenant: Tenant,
  limit: number,
  startingAfter?: string,
): Promise<LedgerEntryRow[]> {
  return many<LedgerEntryRow>(
    db,
    `SELECT * FROM ledger_entries
      WHERE organization_id = $1 AND environment = $2 AND ($3::text IS NULL OR id < $3)
      ORDER BY id DESC LIMIT $4`,
    [tenant.organizationId, tenant.environment, startingAfter ?? null, limit + 1],
  );
}

/**
 * Filters of the partner portal's ledger (PORTAL-33); each optional. `from` and `to` are UTC days ('YYYY-MM-DD', both
 * included) of created_at; `afterId` is the last entry of the previous page (keyset).
 */
export interface LedgerFilter {
  type?: LedgerEntryType;
  from?: string;
  to?: string;
  afterId?: string;
  limit: number;
}

/**
 * A page of the tenant's ledger, newest first by (created_at, id) (entries posted together share a time and keep their
 * id order), `limit + 1` rows for hasMore. The indexes of migration 110 end in that order, so a deep page or an old
 * date range reads only its own rows. An `afterId` that is not one of the tenant's entries gives an empty page.
 */
export function listLedgerPage(db: Db, tenant: Tenant, f: LedgerFilter): Promise<LedgerEntryRow[]> {
  const params: unknown[] = [tenant.organizationId, tenant.environment];
  const where = ['l.organization_id = $1', 'l.environment = $2'];
  const add = (sql: string, value: unknown) => {
    params.push(value);
    where.push(sql.replaceAll('?', `$${params.length}`));
  };
  if (f.type) add('l.type = ?', f.type);
  if (f.from) add(`l.created_at >= (?::date)::timestamp AT TIME ZONE 'UTC'`, f.from);
  if (f.to) add(`l.created_at < (?::date + 1)::timestamp AT TIME ZONE 'UTC'`, f.to);
  if (f.afterId)
    add(
      '(l.created_at, l.id) < (SELECT a.created_at, a.id FROM ledger_entries a WHERE a.id = ? AND a.organization_id = $1 AND a.environment = $2)',
      f.afterId,
    );
  params.push(f.limit + 1);
  return many<LedgerEntryRow>(
    db,
    `SELECT l.* FROM ledger_entries l WHERE ${where.join(' AND ')} ORDER BY l.created_at DESC, l.id DESC LIMIT $${params.length}`,
    params,
  );
}

/** True when the tenant owns a ledger entry with this id. */
export async function ledgerEntryExists(db: Db, tenant: Tenant, id: string): Promise<boolean> {
  return Boolean(
    await one(db, 'SELECT 1 FROM ledger_entries WHERE id = $1 AND organization_id = $2 AND environment = $3', [
      id,
      tenant.organizationId,
      tenant.environment,
    ]),
  );
}

/**
 * Locks the tenant's balance row until the transaction ends, creating it (0) when missing, through the database
 * function lock_balance (BILL-17: it runs with the owner's rights, as the service role may not lock `balances` rows
 * itself). @returns the balance in cents.
 */
export async function lockBalanceRow(tx: Db, tenant: Tenant): Promise<number> {
  const row = await one<{ balance_cents: number }>(tx, 'SELECT lock_balance($1, $2) AS balance_cents', [
    tenant.organizationId,
    tenant.environment,
  ]);
  return row!.balance_cents;
}

/**
 * Calls the database function post_ledger_entries (BILL-17) with the entries as JSON: the written rows, each with
 * the balance before (cents); one row with a null id when the balance was below `minBalanceCents` (nothing written).
 */
export async function postLedgerEntries(
  tx: Db,
  tenant: Tenant,
  lines: LedgerLine[],
  minBalanceCents: number | null,
): Promise<Array<LedgerEntryRow & { balance_before: number }>> {
  const { rows } = await tx.query<LedgerEntryRow & { balance_before: number }>(
    'SELECT * FROM post_ledger_entries($1, $2, $3::jsonb, $4)',
    [tenant.organizationId, tenant.environment, JSON.stringify(lines), minBalanceCents],
  );
  return rows;
}

/** The order's debits of the tenant not yet reversed, by id (cents, negative). */
export function listUnreversedDebits(tx: Db, tenant: Tenant, orderId: string): Promise<LedgerEntryRow[]> {
  return many<LedgerEntryRow>(
    tx,
    `SELECT d.* FROM ledger_entries d
      WHERE d.organization_id = $1 AND d.environment = $2 AND d.order_id = $3 AND d.type = 'debit'
        AND NOT EXISTS (SELECT 1 FROM ledger_entries r WHERE r.reverses_entry_id = d.id)
      ORDER BY d.id`,
    [tenant.organizationId, tenant.environment, orderId],
  );
}

/** Whether a clawback naming `reference` (a dispute or refund) is in the ledger already (FUND-10). */
export async function clawbackPosted(db: Db, reference: string): Promise<boolean> {
  return (
    (await one(db, `SELECT 1 FROM ledger_entries WHERE type = 'clawback' AND reference = $1`, [reference])) !== null
  );
}

/** The ledger entry of `type` naming `reference` (one at most: FUND-18), or null. Cents. */
export function ledgerEntryByReference(
  db: Db,
  type: LedgerEntryType,
  reference: string,
): Promise<LedgerEntryRow | null> {
  return one<LedgerEntryRow>(db, 'SELECT * FROM ledger_entries WHERE type = $1 AND reference = $2', [type, reference]);
}

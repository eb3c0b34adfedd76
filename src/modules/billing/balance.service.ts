import type pg from 'pg';
import type { Tenant } from '../../context.js';
import type { Db } from '../../lib/db.js';
import { AppError, FieldErrors } from '../../lib/errors.js';
import type { Page, PageParams } from '../../lib/pagination.js';
import { toPage } from '../../lib/pagination.js';
import { MAX_OPERATOR_CREDIT_DOLLARS, requestDollarsToCents } from '../../lib/amounts.js';
import * as repo from './billing.repo.js';
import { creditBalance, type LedgerEntryRow } from './ledger.js';

/**
 * GET /balance-transactions: the tenant's ledger rows (cents), newest first, cursor-paginated (BILL-15); the route
 * presents them (balanceTransactionView).
 * @throws AppError not_found when `startingAfter` is not one of this tenant's entries.
 */
export async function listBalanceTransactions(db: Db, tenant: Tenant, page: PageParams): Promise<Page<LedgerEntryRow>> {
  const limit = page.limit ?? 20;
  if (page.startingAfter && !(await repo.ledgerEntryExists(db, tenant, page.startingAfter))) {
    throw new AppError('not_found', `No such balance transaction: '${page.startingAfter}'`);
  }
  const rows = await repo.listLedgerEntries(db, tenant, limit, page.startingAfter);
  return toPage(rows, limit, (row) => row);
}

/** Longest note on a credit (LIM-2), whichever way it is made. */
const MAX_CREDIT_NOTE_LENGTH = 500;

/**
 * Adds `amount` dollars (> 0, at most two decimals, at most MAX_OPERATOR_CREDIT_DOLLARS) to a tenant's balance: the
 * operator's live/test credits (admin API, console, CLI) and the test helper (BILL-14, LIM-3). `note`: at most
 * MAX_CREDIT_NOTE_LENGTH characters. @returns the credit's ledger entry (cents; balanceTransactionView presents it).
 * @throws ValidationError on field `amount` or `note`; AppError not_found for an unknown organization.
 */
export async function addCredit(
  pool: pg.Pool,
  tenant: Tenant,
  amount: number,
  note: string | undefined,
  createdBy: string,
): Promise<LedgerEntryRow> {
  new FieldErrors().maxLength('note', note, MAX_CREDIT_NOTE_LENGTH).throwIfAny();
  const cents = requestDollarsToCents('amount', amount, { positive: true, max: MAX_OPERATOR_CREDIT_DOLLARS });
  return creditBalance(pool, tenant, cents, note, createdBy);
}

/** Ledger rows the portal's CSV export reads per statement: the export's memory stays bounded by it. */
const EXPORT_BATCH = 500;

/**
 * One page of the tenant's ledger for the partner portal (PORTAL-33): filtered by type and UTC days, newest first,
 * keyset-paginated (`filter.afterId`). Cents. @returns the rows and whether another page follows.
 */
export async function listLedgerPage(
  db: Db,
  tenant: Tenant,
  filter: repo.LedgerFilter,
): Promise<{ rows: LedgerEntryRow[]; hasMore: boolean }> {
  const rows = await repo.listLedgerPage(db, tenant, filter);
  return { rows: rows.slice(0, filter.limit), hasMore: rows.length > filter.limit };
}

/**
 * Every ledger entry of the filter, in the order of {@link listLedgerPage}, read EXPORT_BATCH at a time by keyset
 * (PORTAL-34): the CSV export of the filtered ledger, whatever its length, without holding it in memory. Cents.
 */
export async function* ledgerEntriesOf(
  db: Db,
  tenant: Tenant,
  filter: Omit<repo.LedgerFilter, 'afterId' | 'limit'>,
): AsyncGenerator<LedgerEntryRow> {
  let afterId: string | undefined;
  for (;;) {
    const page = await listLedgerPage(db, tenant, { ...filter, afterId, limit: EXPORT_BATCH });
    yield* page.rows;
    if (!page.hasMore) return;
    afterId = page.rows.at(-1)!.id;
  }
}

import type { Tenant } from '../../context.js';
import type { Db } from '../../lib/db.js';
import { ValidationError } from '../../lib/errors.js';
import type { LedgerEntryRow } from '../billing/ledger.js';
import * as repo from './statements.repo.js';

/*
 * Monthly balance statements (FUND-21..FUND-23): per organization and environment, a calendar month in UTC, the
 * opening balance (the ledger's sum before the month), every entry dated in it with its order or payment, and the
 * closing balance (the ledger's sum at the month's end). The current month is a statement so far (`final` false).
 */

/** A statement (FUND-21). Money in cents; `periodEnd` is exclusive (the first instant of the next month). */
export interface BalanceStatement {
  tenant: Tenant;
  /** YYYY-MM. */
  month: string;
  periodStart: Date;
  periodEnd: Date;
  /** true once the month has ended: it never changes again (FUND-22). */
  final: boolean;
  openingCents: number;
  closingCents: number;
  /** The sum of the month's positive entries (credits, reversals), cents >= 0. */
  creditsCents: number;
  /** The sum of the month's negative entries as a positive number (debits, clawbacks), cents >= 0. */
  debitsCents: number;
  /** The month's entries in ledger order. */
  entries: LedgerEntryRow[];
}

const MONTH = /^(\d{4})-(0[1-9]|1[0-2])$/;

/** The UTC month of `at` as YYYY-MM. */
function monthOf(at: Date): string {
  return at.toISOString().slice(0, 7);
}

/**
 * FUND-22: `month` (YYYY-MM, UTC) as its period, refused when malformed, before 2000, or after the current month.
 * @returns the first instant of the month and of the next one, and whether it has ended at `now`.
 * @throws ValidationError naming `month`.
 */
function statementPeriod(month: string, now: Date): { periodStart: Date; periodEnd: Date; final: boolean } {
  const m = MONTH.exec(month);
  if (!m || Number(m[1]) < 2000)
    throw new ValidationError([
      { field: 'month', message: `must be a month as YYYY-MM (2000-01 or later), got '${month}'` },
    ]);
  const current = monthOf(now);
  if (month > current)
    throw new ValidationError([
      { field: 'month', message: `must not be after the current month (${current}, UTC), got '${month}'` },
    ]);
  const year = Number(m[1]);
  const index = Number(m[2]) - 1;
  const periodStart = new Date(Date.UTC(year, index, 1));
  const periodEnd = new Date(Date.UTC(year, index + 1, 1));
  return { periodStart, periodEnd, final: month < current };
}

/**
 * The tenant's statement of `month` (FUND-21): opening and closing balances summed from the ledger, and every entry
 * dated in the month. For the current month the entries and closing balance are those so far.
 * @throws ValidationError naming `month` (see {@link statementPeriod}).
 */
export async function balanceStatement(
  db: Db,
  tenant: Tenant,
  month: string,
  now: Date = new Date(),
): Promise<BalanceStatement> {
  const { periodStart, periodEnd, final } = statementPeriod(month, now);
  const [openingCents, entries] = await Promise.all([
    repo.ledgerSumBefore(db, tenant, periodStart),
    repo.entriesBetween(db, tenant, periodStart, periodEnd),
  ]);
  let creditsCents = 0;
  let debitsCents = 0;
  for (const e of entries) {
    const cents = Number(e.amount_cents);
    if (cents >= 0) creditsCents += cents;
    else debitsCents -= cents;
  }
  return {
    tenant,
    month,
    periodStart,
    periodEnd,
    final,
    openingCents,
    closingCents: openingCents + creditsCents - debitsCents,
    creditsCents,
    debitsCents,
    entries,
  };
}

/**
 * The months a statement can be read for (FUND-23): from the month of the tenant's first ledger entry to the current
 * one, newest first, at most `max` of them; only the current month when the ledger is empty.
 */
export async function statementMonths(db: Db, tenant: Tenant, now: Date = new Date(), max = 36): Promise<string[]> {
  const first = await repo.firstEntryAt(db, tenant);
  const months: string[] = [];
  const start = monthOf(first ?? now);
  let y = now.getUTCFullYear();
  let m = now.getUTCMonth();
  for (;;) {
    const month = monthOf(new Date(Date.UTC(y, m, 1)));
    months.push(month);
    if (month <= start || months.length >= max) return months;
    m -= 1;
    if (m < 0) {
      m = 11;
      y -= 1;
    }
  }
}

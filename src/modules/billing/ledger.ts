import type pg from 'pg';
import type { Tenant } from '../../context.js';
import { withTransaction, type Db } from '../../lib/db.js';
import { AppError } from '../../lib/errors.js';
import { formatCents } from '../../lib/money.js';
import * as repo from './billing.repo.js';
import type { LedgerEntryRow, LedgerEntryType, LedgerLine } from './billing.repo.js';
import { insufficientBalanceDetails } from './billing.views.js';
import { eventsWritten } from '../events/events.service.js';

export type { LedgerEntryRow, LedgerLine } from './billing.repo.js';

/**
 * What to append. `amountCents` is signed: positive for credits and reversals of debits, negative (or 0)
 * for debits. `lineType` is a product type (formation_tier_1 …), `state_fee`, or null for credits.
 * `createdBy` names the actor: `api`, `test_helper`, `operator:<id>`, `cli`, `dashboard`.
 */
export interface LedgerEntryInput {
  type: LedgerEntryType;
  amountCents: number;
  lineType?: string | null;
  description: string;
  orderId?: string | null;
  reversesEntryId?: string | null;
  createdBy?: string | null;
  /** The payment the entry comes from (FUND-5, FUND-10); unique per entry type. */
  reference?: string | null;
}

/**
 * Locks the tenant's balance row until the transaction ends and returns the balance in cents. Every money write of
 * a tenant takes this lock first, so concurrent orders serialize on it and can never take the balance below zero
 * (BILL-3). Creates the row (0) when missing. The lock is taken by the database function lock_balance, which runs
 * with the owner's rights: the service role has no UPDATE on `balances` (BILL-17, SEC-3).
 */
export function lockBalance(tx: Db, tenant: Tenant): Promise<number> {
  return repo.lockBalanceRow(tx, tenant);
}

/**
 * Appends one entry and moves the cached balance by `amountCents` in the caller's transaction (see
 * {@link postEntries}). The balances CHECK (>= 0) is the last line of defence: a write that would go negative
 * fails the transaction. @returns the inserted row.
 */
export async function appendLedgerEntry(tx: Db, tenant: Tenant, entry: LedgerEntryInput): Promise<LedgerEntryRow> {
  const posted = await postEntries(tx, tenant, [entry], null);
  if (!posted.ok) throw new Error('postEntries without a funds check cannot be refused');
  return posted.entries[0]!;
}

/** What {@link postEntries} did: the entries written (ok), or nothing because the balance was short. Cents. */
type Posted = { ok: true; entries: LedgerEntryRow[]; balanceCents: number } | { ok: false; balanceCents: number };

/**
 * Posts `entries` (in order) in ONE statement of the caller's transaction through the database function
 * `post_ledger_entries` (BILL-17): locks the tenant's balance row, and unless `minBalanceCents` is null checks
 * that the balance is at least that much (cents) — when it is not, writes NOTHING and answers `{ok: false}` with the
 * balance; otherwise moves the balance by the sum of the amounts and appends the entries with their running
 * `balance_after_cents`. Entry ids sort after the tenant's newest entry (migration 020), so ORDER BY id is the order
 * the balance moved in, across processes. The row lock is taken by this statement and held until the transaction
 * ends: call it last. Creates the balance row (0) when missing.
 */
async function postEntries(
  tx: Db,
  tenant: Tenant,
  entries: LedgerEntryInput[],
  minBalanceCents: number | null,
): Promise<Posted> {
  if (!entries.length) throw new RangeError('postEntries needs at least one entry');
  const delta = entries.reduce((s, e) => s + e.amountCents, 0);
  const rows = await repo.postLedgerEntries(tx, tenant, entries.map(ledgerLine), minBalanceCents);
  const before = Number(rows[0]!.balance_before);
  if (rows[0]!.id === null) return { ok: false, balanceCents: before };
  // FUND-17: a posting that lowered the balance may have written balance.low (alert_low_balance): wake its listeners
  // after the commit, as for any event (OPS-5).
  if (delta < 0) eventsWritten(tx, tenant);
  return {
    ok: true,
    // The function does not return `reference`; it is what was posted.
    entries: rows.map(
      ({ balance_before: _b, ...e }, i) => ({ ...e, reference: entries[i]!.reference ?? null }) as LedgerEntryRow,
    ),
    balanceCents: before + delta,
  };
}

/** An entry as `post_ledger_entries` takes it (JSON, amounts in signed cents). */
export function ledgerLine(e: LedgerEntryInput): LedgerLine {
  return {
    type: e.type,
    amount_cents: e.amountCents,
    line_type: e.lineType ?? null,
    description: e.description,
    order_id: e.orderId ?? null,
    reverses_entry_id: e.reversesEntryId ?? null,
    created_by: e.createdBy ?? null,
    reference: e.reference ?? null,
  };
}

/**
 * One priced line of an order to debit. `amountCents` is the CHARGE, >= 0 (it is stored negated);
 * 0 is allowed (the EIN line of a formation + EIN bundle, BILL-5; BILL-2) and still writes an entry.
 */
export interface DebitLine {
  amountCents: number;
  lineType: string;
  description: string;
  orderId?: string | null;
}

/**
 * The ledger entries of debit `lines` (BILL-17): type debit, the charge negated, in line order.
 * @throws RangeError for a negative or non-integer line amount (cents).
 */
export function debitEntries(lines: DebitLine[], createdBy: string | null): Array<ReturnType<typeof ledgerLine>> {
  for (const l of lines) {
    if (!Number.isSafeInteger(l.amountCents) || l.amountCents < 0)
      throw new RangeError(`debit line amount must be integer cents >= 0, got ${l.amountCents}`);
  }
  return lines.map((l) =>
    ledgerLine({
      type: 'debit',
      amountCents: -l.amountCents,
      lineType: l.lineType,
      description: l.description,
      orderId: l.orderId ?? null,
      createdBy,
    }),
  );
}

/**
 * Debits every line in the caller's transaction, after checking that the balance covers their SUM; when it
 * does not, throws before writing any entry (BILL-3; ORD-6). Lines are written in order.
 * `orderId`s must reference orders already inserted in this transaction.
 * @returns the debit entries, in line order. @throws AppError insufficient_balance (402), RangeError for a
 * negative or non-integer line amount.
 */
export async function debitOrThrow(
  tx: Db,
  tenant: Tenant,
  lines: DebitLine[],
  createdBy: string | null = 'api',
): Promise<LedgerEntryRow[]> {
  for (const l of lines) {
    if (!Number.isSafeInteger(l.amountCents) || l.amountCents < 0)
      throw new RangeError(`debit line amount must be integer cents >= 0, got ${l.amountCents}`);
  }
  const totalCents = lines.reduce((sum, l) => sum + l.amountCents, 0);
  const posted = await postEntries(
    tx,
    tenant,
    lines.map((l) => ({
      type: 'debit' as const,
      amountCents: -l.amountCents,
      lineType: l.lineType,
      description: l.description,
      orderId: l.orderId ?? null,
      createdBy,
    })),
    totalCents,
  );
  if (!posted.ok) throw insufficientBalance(tenant, totalCents, posted.balanceCents);
  return posted.entries;
}

/**
 * Adds money to a tenant's balance in its own transaction (operator credits, test-helper credits).
 * @param amountCents > 0. @returns the credit entry. @throws RangeError for a non-positive amount;
 * AppError not_found when the organization does not exist.
 */
export async function creditBalance(
  pool: pg.Pool,
  tenant: Tenant,
  amountCents: number,
  note: string | null | undefined,
  createdBy: string | null,
): Promise<LedgerEntryRow> {
  if (!Number.isSafeInteger(amountCents) || amountCents <= 0)
    throw new RangeError(`credit amount must be integer cents > 0, got ${amountCents}`);
  return withTransaction(pool, async (tx) => {
    if (!(await repo.organizationExists(tx, tenant.organizationId)))
      throw new AppError('not_found', `No such organization: '${tenant.organizationId}'`);
    return appendLedgerEntry(tx, tenant, {
      type: 'credit',
      amountCents,
      lineType: null,
      description: note?.trim() || 'Balance credit',
      createdBy,
    });
  });
}

/**
 * Reverses every debit of `orderId` not yet reversed: one `reversal` entry per debit, amount = -debit,
 * linked by `reverses_entry_id` (BILL-4). Runs in the caller's transaction (the one that cancels
 * the order). Idempotent: the balance lock serializes concurrent calls and the unique index on
 * reverses_entry_id forbids a second reversal of the same debit.
 * @returns the reversal entries written (empty when nothing was left to reverse).
 */
export async function reverseOrderDebits(
  tx: Db,
  tenant: Tenant,
  orderId: string,
  createdBy: string | null,
): Promise<LedgerEntryRow[]> {
  await lockBalance(tx, tenant);
  const debits = await repo.listUnreversedDebits(tx, tenant, orderId);
  if (!debits.length) return [];
  const posted = await postEntries(
    tx,
    tenant,
    debits.map((d) => ({
      type: 'reversal' as const,
      amountCents: -d.amount_cents,
      lineType: d.line_type,
      description: `Reversal: ${d.description}`,
      orderId,
      reversesEntryId: d.id,
      createdBy,
    })),
    null,
  );
  return posted.ok ? posted.entries : [];
}

/** 402 insufficient_balance for a request costing `totalCents` against `balanceCents` (BILL-3). */
export function insufficientBalance(tenant: Tenant, totalCents: number, balanceCents: number): AppError {
  const short = totalCents - balanceCents;
  return new AppError(
    'insufficient_balance',
    `Insufficient balance: this request costs ${formatCents(totalCents)} but the ${tenant.environment} balance is ${formatCents(balanceCents)} (short by ${formatCents(short)}). Add funds and retry.`,
    insufficientBalanceDetails(totalCents, balanceCents),
  );
}

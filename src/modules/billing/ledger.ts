import type pg from 'pg';
import type { Tenant } from '../../context.js';
import { many, one, withTransaction, type Db } from '../../lib/db.js';
import { AppError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { centsToDollars, formatCents } from '../../lib/money.js';

/** credit (money in), debit (an order line), reversal (undoes one debit; ARCHITECTURE.md "Money"). */
export type LedgerEntryType = 'credit' | 'debit' | 'reversal';

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
  created_at: Date;
}

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
}

/**
 * Locks the tenant's balance row (SELECT … FOR UPDATE) until the transaction ends and returns the balance
 * in cents. Every money write of a tenant takes this lock first, so concurrent orders serialize on it and
 * can never take the balance below zero (issue 3 item 6). Creates the row (0) when missing.
 */
export async function lockBalance(tx: Db, tenant: Tenant): Promise<number> {
  const sql = 'SELECT balance_cents FROM balances WHERE organization_id = $1 AND environment = $2 FOR UPDATE';
  const params = [tenant.organizationId, tenant.environment];
  let row = await one<{ balance_cents: number }>(tx, sql, params);
  if (!row) {
    await tx.query('INSERT INTO balances (organization_id, environment) VALUES ($1, $2) ON CONFLICT DO NOTHING', params);
    row = await one<{ balance_cents: number }>(tx, sql, params);
  }
  return row!.balance_cents;
}

/**
 * Appends one entry and moves the cached balance by `amountCents` in the caller's transaction; the entry
 * records the resulting `balance_after_cents`. The balances CHECK (>= 0) is the last line of defence: a
 * write that would go negative fails the transaction. Call {@link lockBalance} (or a function that does)
 * first when the amount depends on the balance.
 * @returns the inserted row.
 */
export async function appendLedgerEntry(tx: Db, tenant: Tenant, entry: LedgerEntryInput): Promise<LedgerEntryRow> {
  const params = [tenant.organizationId, tenant.environment];
  await lockBalance(tx, tenant);
  const bal = await one<{ balance_cents: number }>(
    tx,
    `UPDATE balances SET balance_cents = balance_cents + $3, updated_at = now()
      WHERE organization_id = $1 AND environment = $2 RETURNING balance_cents`,
    [...params, entry.amountCents],
  );
  const row = await one<LedgerEntryRow>(
    tx,
    `INSERT INTO ledger_entries (id, organization_id, environment, type, amount_cents, balance_after_cents, line_type,
                                 description, order_id, reverses_entry_id, created_by)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING *`,
    [newId('ledgerEntry'), ...params, entry.type, entry.amountCents, bal!.balance_cents, entry.lineType ?? null,
      entry.description, entry.orderId ?? null, entry.reversesEntryId ?? null, entry.createdBy ?? null],
  );
  return row!;
}

/**
 * One priced line of an order to debit. `amountCents` is the CHARGE, >= 0 (it is stored negated);
 * 0 is allowed (the EIN line of a formation + EIN bundle, billing rule 4) and still writes an entry.
 */
export interface DebitLine {
  amountCents: number;
  lineType: string;
  description: string;
  orderId?: string | null;
}

/**
 * Locks the balance and checks it covers `totalCents` (cents, >= 0) WITHOUT writing anything.
 * Useful to refuse a request before inserting its orders.
 * @returns the locked balance in cents. @throws AppError insufficient_balance (402) with the shortfall
 * in dollars in the message and as `shortfallAmount`, plus `requiredAmount` and `balance` (dollars).
 */
export async function ensureFunds(tx: Db, tenant: Tenant, totalCents: number): Promise<number> {
  const balance = await lockBalance(tx, tenant);
  if (totalCents > balance) {
    const short = totalCents - balance;
    throw new AppError(
      'insufficient_balance',
      `Insufficient balance: this request costs ${formatCents(totalCents)} but the ${tenant.environment} balance is ${formatCents(balance)} (short by ${formatCents(short)}). Add funds and retry.`,
      { requiredAmount: centsToDollars(totalCents), balance: centsToDollars(balance), shortfallAmount: centsToDollars(short) },
    );
  }
  return balance;
}

/**
 * Debits every line in the caller's transaction, after checking that the balance covers their SUM; when it
 * does not, throws before writing any entry (billing rule 2; issue 3 item 5). Lines are written in order.
 * `orderId`s must reference orders already inserted in this transaction.
 * @returns the debit entries, in line order. @throws AppError insufficient_balance (402), RangeError for a
 * negative or non-integer line amount.
 */
export async function debitOrThrow(tx: Db, tenant: Tenant, lines: DebitLine[], createdBy: string | null = 'api'): Promise<LedgerEntryRow[]> {
  for (const l of lines) {
    if (!Number.isSafeInteger(l.amountCents) || l.amountCents < 0) throw new RangeError(`debit line amount must be integer cents >= 0, got ${l.amountCents}`);
  }
  await ensureFunds(tx, tenant, lines.reduce((sum, l) => sum + l.amountCents, 0));
  const out: LedgerEntryRow[] = [];
  for (const l of lines) {
    out.push(await appendLedgerEntry(tx, tenant, {
      type: 'debit', amountCents: -l.amountCents, lineType: l.lineType, description: l.description, orderId: l.orderId ?? null, createdBy,
    }));
  }
  return out;
}

/**
 * Adds money to a tenant's balance in its own transaction (operator credits, test-helper credits).
 * @param amountCents > 0. @returns the credit entry. @throws RangeError for a non-positive amount;
 * AppError not_found when the organization does not exist.
 */
export async function creditBalance(pool: pg.Pool, tenant: Tenant, amountCents: number, note: string | null | undefined, createdBy: string | null): Promise<LedgerEntryRow> {
  if (!Number.isSafeInteger(amountCents) || amountCents <= 0) throw new RangeError(`credit amount must be integer cents > 0, got ${amountCents}`);
  return withTransaction(pool, async (tx) => {
    const org = await one(tx, 'SELECT 1 FROM organizations WHERE id = $1', [tenant.organizationId]);
    if (!org) throw new AppError('not_found', `No such organization: '${tenant.organizationId}'`);
    return appendLedgerEntry(tx, tenant, { type: 'credit', amountCents, lineType: null, description: note?.trim() || 'Balance credit', createdBy });
  });
}

/**
 * Reverses every debit of `orderId` not yet reversed: one `reversal` entry per debit, amount = -debit,
 * linked by `reverses_entry_id` (billing rule 3). Runs in the caller's transaction (the one that cancels
 * the order). Idempotent: the balance lock serializes concurrent calls and the unique index on
 * reverses_entry_id forbids a second reversal of the same debit.
 * @returns the reversal entries written (empty when nothing was left to reverse).
 */
export async function reverseOrderDebits(tx: Db, tenant: Tenant, orderId: string, createdBy: string | null): Promise<LedgerEntryRow[]> {
  await lockBalance(tx, tenant);
  const debits = await many<LedgerEntryRow>(
    tx,
    `SELECT d.* FROM ledger_entries d
      WHERE d.organization_id = $1 AND d.environment = $2 AND d.order_id = $3 AND d.type = 'debit'
        AND NOT EXISTS (SELECT 1 FROM ledger_entries r WHERE r.reverses_entry_id = d.id)
      ORDER BY d.id`,
    [tenant.organizationId, tenant.environment, orderId],
  );
  const out: LedgerEntryRow[] = [];
  for (const d of debits) {
    out.push(await appendLedgerEntry(tx, tenant, {
      type: 'reversal', amountCents: -d.amount_cents, lineType: d.line_type, description: `Reversal: ${d.description}`,
      orderId, reversesEntryId: d.id, createdBy,
    }));
  }
  return out;
}

/** The API shape of a ledger entry (GET /balance-transactions): amounts in dollars, debits negative. */
export function serializeLedgerEntry(e: LedgerEntryRow) {
  return {
    id: e.id,
    object: 'balance_transaction' as const,
    type: e.type,
    amount: centsToDollars(e.amount_cents),
    balanceAfter: centsToDollars(e.balance_after_cents),
    lineType: e.line_type,
    description: e.description,
    orderId: e.order_id,
    reversesTransactionId: e.reverses_entry_id,
    createdAt: e.created_at.toISOString(),
  };
}

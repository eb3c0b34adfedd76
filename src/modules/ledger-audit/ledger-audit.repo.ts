import { many, one, type Db } from '../../lib/db.js';

/** A tenant whose cached balance is not what its ledger entries add up to (all amounts in cents). */
export interface LedgerDifference {
  organizationId: string;
  environment: 'live' | 'test';
  balanceCents: number;
  ledgerSumCents: number;
  /** balance_after_cents of the tenant's newest entry (null without entries): it must equal the balance too. */
  lastBalanceAfterCents: number | null;
}

/**
 * Every tenant whose balance differs from the sum of its ledger entries, or from the running balance its newest
 * entry recorded, in one pass over balances and entries. An empty list means the ledger explains every balance.
 */
export function findLedgerDifferences(db: Db): Promise<LedgerDifference[]> {
  return many<LedgerDifference>(
    db,
    `SELECT b.organization_id AS "organizationId", b.environment, b.balance_cents AS "balanceCents",
            COALESCE(s.total, 0)::bigint AS "ledgerSumCents", last.balance_after_cents AS "lastBalanceAfterCents"
       FROM balances b
       LEFT JOIN (SELECT organization_id, environment, sum(amount_cents) AS total FROM ledger_entries GROUP BY 1, 2) s
              ON s.organization_id = b.organization_id AND s.environment = b.environment
       LEFT JOIN LATERAL (SELECT balance_after_cents FROM ledger_entries l
                           WHERE l.organization_id = b.organization_id AND l.environment = b.environment
                           ORDER BY l.id DESC LIMIT 1) last ON true
      WHERE b.balance_cents <> COALESCE(s.total, 0) OR (last.balance_after_cents IS NOT NULL AND last.balance_after_cents <> b.balance_cents)
      ORDER BY 1, 2`,
  );
}

/** The outcome of one ledger verification as recorded in `ledger_checks` (BILL-18). */
export interface LedgerCheck {
  checkedAt: Date;
  /** Tenants whose balance the ledger did not explain (0: every balance added up). */
  differences: number;
}

/** Records a verification's outcome (BILL-18). @returns the row as written, with the database's time. */
export async function recordLedgerCheck(db: Db, differences: number): Promise<LedgerCheck> {
  return (await one<LedgerCheck>(
    db,
    'INSERT INTO ledger_checks (differences) VALUES ($1) RETURNING checked_at AS "checkedAt", differences',
    [differences],
  ))!;
}

/** The newest recorded verification, or null when the ledger was never checked (BILL-18). */
export function lastLedgerCheck(db: Db): Promise<LedgerCheck | null> {
  return one<LedgerCheck>(
    db,
    'SELECT checked_at AS "checkedAt", differences FROM ledger_checks ORDER BY id DESC LIMIT 1',
  );
}

import type pg from 'pg';
import { findLedgerDifferences, type LedgerDifference } from '../src/modules/ledger-audit/ledger-audit.repo.js';

// The ledger of every database this file's test apps used: the differences each had when its app closed, and the
// pools of apps still open. Each test file runs in a module graph of its own, so this is the file's alone. Kept apart
// from test/harness.ts so that the after-each-file check (test/ledger-check.setup.ts) does not load the whole app
// into test files that never build one.
const ledgerOfClosed: Array<{ database: string; differences: LedgerDifference[] }> = [];
const openPools = new Map<string, pg.Pool>();

/** Watches the ledger of a test app's database `database` through its `pool` until {@link closeLedger}. */
export function watchLedger(database: string, pool: pg.Pool): void {
  openPools.set(database, pool);
}

/** Reads the differences of a watched database before its app closes and its database is dropped. */
export async function closeLedger(database: string, pool: pg.Pool): Promise<void> {
  if (openPools.delete(database)) ledgerOfClosed.push({ database, differences: await findLedgerDifferences(pool) });
}

/**
 * Every balance of the file's databases that is not the sum of its ledger entries (BILL-18), for the after-each-file
 * check in test/ledger-check.setup.ts. Apps still open are asked now; closed ones answered when they closed.
 */
export async function ledgerDifferencesOfThisFile(): Promise<
  Array<{ database: string; differences: LedgerDifference[] }>
> {
  const open = await Promise.all(
    [...openPools].map(async ([database, pool]) => ({ database, differences: await findLedgerDifferences(pool) })),
  );
  return [...ledgerOfClosed, ...open].filter((d) => d.differences.length > 0);
}

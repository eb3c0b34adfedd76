import type pg from 'pg';
import { Gauge } from 'prom-client';
import type { AppContext } from '../../context.js';
import { registry } from '../../lib/metrics.js';
import {
  findLedgerDifferences,
  lastLedgerCheck,
  recordLedgerCheck,
  type LedgerCheck,
  type LedgerDifference,
} from './ledger-audit.repo.js';

let checksPool: pg.Pool | null = null;

/**
 * Makes both ledger gauges report the newest recorded check on every scrape (BILL-18), read through `pool`, so an API
 * process, or a worker that did not run the check, reports the same result as the one that did. The last call's pool
 * is used; without one the gauges keep what this process's own checks set.
 */
export function observeLedgerChecks(pool: pg.Pool): void {
  checksPool = pool;
}

// Both gauges come from one query per scrape; a failed read keeps the values of the last one that worked.
let lastRead: { at: number; value: Promise<LedgerCheck | null | undefined> } | null = null;
function readLastCheck(): Promise<LedgerCheck | null | undefined> {
  if (!checksPool) return Promise.resolve(undefined);
  if (!lastRead || Date.now() - lastRead.at > 500)
    lastRead = { at: Date.now(), value: lastLedgerCheck(checksPool).catch(() => undefined) };
  return lastRead.value;
}

/** Tenants whose balance the ledger did not explain at the last check, by any process (0 when every balance adds up). */
export const ledgerDifferences = new Gauge({
  name: 'fcs_ledger_differences',
  help: 'Tenants whose cached balance differs from the sum of their ledger entries at the last ledger verification (0 before any)',
  registers: [registry],
  async collect() {
    const last = await readLastCheck();
    if (last !== undefined) this.set(last?.differences ?? 0);
  },
});

/** When the last ledger check ran, by any process, in Unix seconds (0: never), so a check that stopped running shows. */
const ledgerLastCheck = new Gauge({
  name: 'fcs_ledger_last_check_timestamp_seconds',
  help: 'Unix time of the last ledger verification by any process (0 when none is recorded)',
  registers: [registry],
  async collect() {
    const last = await readLastCheck();
    if (last !== undefined) this.set(last ? last.checkedAt.getTime() / 1000 : 0);
  },
});

/**
 * Checks that every balance equals the sum of its ledger entries (and its newest entry's running balance), records
 * the result for every process's metrics (BILL-18), sets both gauges here at once, and logs each difference as an
 * error (money that does not add up is never normal). @returns the differences, empty when all is well.
 */
export async function verifyLedger(ctx: AppContext): Promise<LedgerDifference[]> {
  const differences = await findLedgerDifferences(ctx.pool);
  const check = await recordLedgerCheck(ctx.pool, differences.length);
  lastRead = null;
  ledgerDifferences.set(check.differences);
  ledgerLastCheck.set(check.checkedAt.getTime() / 1000);
  for (const d of differences) ctx.log.error({ ...d }, 'ledger does not explain the balance');
  return differences;
}

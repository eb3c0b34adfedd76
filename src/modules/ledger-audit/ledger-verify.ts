import { Gauge } from 'prom-client';
import type { AppContext } from '../../context.js';
import { registry } from '../../lib/metrics.js';
import { findLedgerDifferences, type LedgerDifference } from './ledger-audit.repo.js';

/** Tenants whose balance the ledger did not explain at the last check (0 when every balance adds up). */
export const ledgerDifferences = new Gauge({
  name: 'fcs_ledger_differences',
  help: 'Tenants whose cached balance differs from the sum of their ledger entries at the last ledger verification',
  registers: [registry],
});

/**
 * Checks that every balance equals the sum of its ledger entries (and its newest entry's running balance), sets
 * the `fcs_ledger_differences` gauge and logs each difference as an error (money that does not add up is
 * never normal). @returns the differences, empty when all is well.
 */
export async function verifyLedger(ctx: AppContext): Promise<LedgerDifference[]> {
  const differences = await findLedgerDifferences(ctx.pool);
  ledgerDifferences.set(differences.length);
  for (const d of differences) ctx.log.error({ ...d }, 'ledger does not explain the balance');
  return differences;
}

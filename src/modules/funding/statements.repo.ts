import type { Tenant } from '../../context.js';
import { many, one, type Db } from '../../lib/db.js';
import type { LedgerEntryRow } from '../billing/ledger.js';

/*
 * The SQL of monthly balance statements (FUND-21): a month is the ledger entries dated within it (UTC), and a balance
 * at an instant is the sum of the entries dated before it, read from the ledger itself, never from the cached balance.
 */

/** The sum in cents of the tenant's ledger entries dated before `at` (0 without any): its balance at that instant. */
export async function ledgerSumBefore(db: Db, tenant: Tenant, at: Date): Promise<number> {
  const row = await one<{ cents: string }>(
    db,
    `SELECT coalesce(sum(amount_cents), 0)::text AS cents FROM ledger_entries
      WHERE organization_id = $1 AND environment = $2 AND created_at < $3`,
    [tenant.organizationId, tenant.environment, at],
  );
  return Number(row!.cents);
}

/** The tenant's ledger entries dated in [from, until), in the order the balance moved (by id). Cents. */
export function entriesBetween(db: Db, tenant: Tenant, from: Date, until: Date): Promise<LedgerEntryRow[]> {
  return many<LedgerEntryRow>(
    db,
    `SELECT * FROM ledger_entries
      WHERE organization_id = $1 AND environment = $2 AND created_at >= $3 AND created_at < $4
      ORDER BY id`,
    [tenant.organizationId, tenant.environment, from, until],
  );
}

/** When the tenant's oldest ledger entry was written, or null without any (the first month a statement lists). */
export async function firstEntryAt(db: Db, tenant: Tenant): Promise<Date | null> {
  const row = await one<{ at: Date | null }>(
    db,
    'SELECT min(created_at) AS at FROM ledger_entries WHERE organization_id = $1 AND environment = $2',
    [tenant.organizationId, tenant.environment],
  );
  return row?.at ?? null;
}

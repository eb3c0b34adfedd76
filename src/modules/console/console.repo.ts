import type { Environment } from '../../context.js';
import { many, type Db } from '../../lib/db.js';
import type { LedgerEntryRow } from '../billing/ledger.js';

/** An organization with its balances in cents per environment, active key count and open live orders. */
export interface OrganizationSummaryRow {
  id: string;
  name: string;
  white_label_domain: string | null;
  live: number;
  test: number;
  keys: number;
  open: number;
  created_at: Date;
}

/** Every organization with balances (cents), active keys and open live orders, newest first (one query). */
export function listOrganizationRows(db: Db): Promise<OrganizationSummaryRow[]> {
  return many<OrganizationSummaryRow>(
    db,
    `SELECT o.id, o.name, o.white_label_domain, o.created_at,
            COALESCE((SELECT balance_cents FROM balances b WHERE b.organization_id = o.id AND b.environment = 'live'), 0) AS live,
            COALESCE((SELECT balance_cents FROM balances b WHERE b.organization_id = o.id AND b.environment = 'test'), 0) AS test,
            (SELECT count(*)::int FROM api_keys k WHERE k.organization_id = o.id AND k.revoked_at IS NULL) AS keys,
            (SELECT count(*)::int FROM orders r WHERE r.organization_id = o.id AND r.environment = 'live' AND r.filing_status IN ('submitted', 'pending', 'exception')) AS open
       FROM organizations o ORDER BY o.created_at DESC`,
  );
}

/** The most recent ledger entries of one tenant, newest first (cents). */
export function listRecentLedger(db: Db, organizationId: string, environment: Environment, limit: number) {
  return many<Pick<LedgerEntryRow, 'id' | 'type' | 'amount_cents' | 'balance_after_cents' | 'line_type' | 'description' | 'order_id' | 'created_by' | 'created_at'>>(
    db,
    `SELECT id, type, amount_cents, balance_after_cents, line_type, description, order_id, created_by, created_at
       FROM ledger_entries WHERE organization_id = $1 AND environment = $2 ORDER BY id DESC LIMIT $3`,
    [organizationId, environment, limit],
  );
}

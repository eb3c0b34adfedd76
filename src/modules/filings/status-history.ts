import type { Tenant } from '../../context.js';
import type { Db } from '../../lib/db.js';
import { newId } from '../../lib/ids.js';

/**
 * One row of an order's status history (issue 4 item 1). `actor`: api, dashboard, test_helper, cli, operator:<id>.
 * filingDate 'YYYY-MM-DD'.
 */
export interface StatusChange {
  orderId: string;
  fromStatus: string | null;
  toStatus: string;
  exceptionCode?: string | null;
  exceptionMessage?: string | null;
  filingDate?: string | null;
  actor: string;
}

/** Appends a status-history row inside the caller's transaction. */
export async function insertStatusHistory(tx: Db, tenant: Tenant, change: StatusChange): Promise<void> {
  await tx.query(
    `INSERT INTO order_status_history (id, order_id, organization_id, environment, from_status, to_status, exception_code, exception_message, filing_date, actor)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [newId('statusChange'), change.orderId, tenant.organizationId, tenant.environment, change.fromStatus, change.toStatus,
      change.exceptionCode ?? null, change.exceptionMessage ?? null, change.filingDate ?? null, change.actor],
  );
}

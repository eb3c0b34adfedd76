import type { Tenant } from '../../context.js';
import { many, one, type Db } from '../../lib/db.js';

/** queued: its job has not started; running; done: every failed delivery of the range was reached; failed: stopped. */
export type RecoveryState = 'queued' | 'running' | 'done' | 'failed';

/** A webhook_recoveries row (PORTAL-22). */
export interface RecoveryRow {
  id: string;
  organization_id: string;
  environment: 'live' | 'test';
  endpoint_id: string;
  since: Date;
  requested_by: string;
  state: RecoveryState;
  total: number | null;
  done: number;
  skipped: number;
  cursor: string | null;
  error: string | null;
  created_at: Date;
  updated_at: Date;
  finished_at: Date | null;
}

/** Inserts a queued recovery of one endpoint of the tenant. @returns the row. */
export async function insertRecovery(
  db: Db,
  tenant: Tenant,
  r: { id: string; endpointId: string; since: Date; requestedBy: string },
): Promise<RecoveryRow> {
  return (await one<RecoveryRow>(
    db,
    `INSERT INTO webhook_recoveries (id, organization_id, environment, endpoint_id, since, requested_by)
     VALUES ($1, $2, $3, $4, $5, $6) RETURNING *`,
    [r.id, tenant.organizationId, tenant.environment, r.endpointId, r.since, r.requestedBy],
  ))!;
}

/** The tenant's recovery, or null. */
export function findRecovery(db: Db, tenant: Tenant, id: string): Promise<RecoveryRow | null> {
  return one<RecoveryRow>(
    db,
    'SELECT * FROM webhook_recoveries WHERE id = $1 AND organization_id = $2 AND environment = $3',
    [id, tenant.organizationId, tenant.environment],
  );
}

/** A recovery by id alone, for its job (the payload names it; the job key keeps one job per recovery). */
export function findRecoveryForJob(db: Db, id: string): Promise<RecoveryRow | null> {
  return one<RecoveryRow>(db, 'SELECT * FROM webhook_recoveries WHERE id = $1', [id]);
}

/** The tenant's latest recoveries, newest first. */
export function listRecoveries(db: Db, tenant: Tenant, limit: number): Promise<RecoveryRow[]> {
  return many<RecoveryRow>(
    db,
    'SELECT * FROM webhook_recoveries WHERE organization_id = $1 AND environment = $2 ORDER BY id DESC LIMIT $3',
    [tenant.organizationId, tenant.environment, limit],
  );
}

/** Marks a recovery running with the number of failed deliveries it will go through. */
export async function startRecovery(db: Db, id: string, total: number): Promise<void> {
  await db.query(`UPDATE webhook_recoveries SET state = 'running', total = $2, updated_at = now() WHERE id = $1`, [
    id,
    total,
  ]);
}

/** Adds a batch's progress: `done` re-queued, the last delivery id reached. */
export async function addRecoveryProgress(db: Db, id: string, done: number, cursor: string): Promise<void> {
  await db.query('UPDATE webhook_recoveries SET done = done + $2, cursor = $3, updated_at = now() WHERE id = $1', [
    id,
    done,
    cursor,
  ]);
}

/**
 * Ends a recovery: done (the deliveries counted at the start but no longer failed when reached are `skipped`), or
 * failed with the reason.
 */
export async function finishRecovery(db: Db, id: string, state: 'done' | 'failed', error: string | null = null) {
  await db.query(
    `UPDATE webhook_recoveries SET state = $2, error = $3, skipped = CASE WHEN $2 = 'done' THEN greatest(coalesce(total, 0) - done, 0) ELSE skipped END,
       updated_at = now(), finished_at = now() WHERE id = $1`,
    [id, state, error],
  );
}

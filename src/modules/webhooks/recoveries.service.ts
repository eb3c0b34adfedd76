import type { AppContext, Tenant } from '../../context.js';
import { withTransaction } from '../../lib/db.js';
import { AppError, notFound, ValidationError } from '../../lib/errors.js';
import { idAt, newId } from '../../lib/ids.js';
import { addJob } from '../../lib/jobs.js';
import { countFailedDeliveries, reopenFailedDeliveries } from './deliveries.repo.js';
import { notifyDeliveriesDue } from './dispatch.repo.js';
import * as repo from './recoveries.repo.js';
import { findEndpoint } from './webhooks.repo.js';

/** Failed deliveries re-queued per transaction by a recovery's job. */
const RECOVERY_BATCH = 500;

/** Tries of a recovery's job; each goes on from the last batch committed. */
const RECOVERY_JOB_ATTEMPTS = 5;

/** A recovery as the portal shows it (PORTAL-22). `total` is null until its job has counted. */
export interface RecoveryView {
  id: string;
  endpointId: string;
  since: Date;
  state: repo.RecoveryState;
  total: number | null;
  done: number;
  skipped: number;
  error: string | null;
  createdAt: Date;
  finishedAt: Date | null;
}

function recoveryView(r: repo.RecoveryRow): RecoveryView {
  return {
    id: r.id,
    endpointId: r.endpoint_id,
    since: r.since,
    state: r.state,
    total: r.total,
    done: r.done,
    skipped: r.skipped,
    error: r.error,
    createdAt: r.created_at,
    finishedAt: r.finished_at,
  };
}

/**
 * Asks for the recovery of every failed delivery of one of the tenant's endpoints made from `since` until now
 * (PORTAL-22): a recovery row and its background job, in one transaction. The endpoint must be neither deleted nor
 * disabled, as for a resend; `since` must be in the past. `requestedBy` names who asked (`member:<id>`).
 * @throws not_found (unknown endpoint, or another tenant's); conflict (disabled endpoint); validation_error (since).
 */
export async function requestRecovery(
  ctx: AppContext,
  tenant: Tenant,
  input: { endpointId: string; since: Date; requestedBy: string },
): Promise<RecoveryView> {
  if (Number.isNaN(input.since.getTime()) || input.since.getTime() > Date.now())
    throw new ValidationError([{ field: 'since', message: 'must be a moment in the past' }]);
  return withTransaction(ctx.pool, async (tx) => {
    const endpoint = await findEndpoint(tx, tenant, input.endpointId);
    if (!endpoint) throw notFound('webhook endpoint', input.endpointId);
    if (endpoint.disabled)
      throw new AppError('conflict', `Webhook endpoint ${endpoint.id} is disabled; enable it before recovering`);
    const row = await repo.insertRecovery(tx, tenant, {
      id: newId('webhookRecovery'),
      endpointId: endpoint.id,
      since: input.since,
      requestedBy: input.requestedBy,
    });
    await addJob(
      tx,
      'recover_webhook_deliveries',
      { recoveryId: row.id },
      { jobKey: row.id, maxAttempts: RECOVERY_JOB_ATTEMPTS },
    );
    return recoveryView(row);
  });
}

/** One of the tenant's recoveries. @throws not_found (unknown, or another tenant's or environment's). */
export async function getRecovery(ctx: AppContext, tenant: Tenant, id: string): Promise<RecoveryView> {
  const row = await repo.findRecovery(ctx.pool, tenant, id);
  if (!row) throw notFound('webhook recovery', id);
  return recoveryView(row);
}

/** The tenant's latest recoveries, newest first. */
export async function listRecoveries(ctx: AppContext, tenant: Tenant, limit = 20): Promise<RecoveryView[]> {
  return (await repo.listRecoveries(ctx.pool, tenant, limit)).map(recoveryView);
}

/**
 * Runs a recovery (PORTAL-22): counts the endpoint's failed deliveries made between `since` and the moment it was
 * asked for, then re-queues them in batches of RECOVERY_BATCH, each batch and its progress in one transaction, so a
 * retried job goes on after the last batch committed. Deliveries that failed after the recovery was asked for, or
 * that are no longer failed when reached, are left alone. An endpoint deleted or disabled meanwhile ends it as failed.
 */
export async function runRecovery(ctx: AppContext, recoveryId: string): Promise<void> {
  const row = await repo.findRecoveryForJob(ctx.pool, recoveryId);
  if (!row || row.state === 'done' || row.state === 'failed') return;
  const tenant: Tenant = { organizationId: row.organization_id, environment: row.environment };
  const endpoint = await findEndpoint(ctx.pool, tenant, row.endpoint_id);
  if (!endpoint || endpoint.disabled) {
    await repo.finishRecovery(
      ctx.pool,
      row.id,
      'failed',
      endpoint ? 'The endpoint is disabled' : 'The endpoint was deleted',
    );
    return;
  }
  const after = idAt('webhookDelivery', row.since);
  const before = idAt('webhookDelivery', new Date(row.created_at.getTime() + 1));
  if (row.state === 'queued')
    await repo.startRecovery(
      ctx.pool,
      row.id,
      await countFailedDeliveries(ctx.pool, tenant, { endpointId: endpoint.id, after, before }),
    );
  let cursor = row.cursor ?? after;
  for (;;) {
    const batch = await withTransaction(ctx.pool, async (tx) => {
      const reopened = await reopenFailedDeliveries(tx, tenant, {
        endpointId: endpoint.id,
        after: cursor,
        before,
        limit: RECOVERY_BATCH,
      });
      if (reopened.last) {
        await repo.addRecoveryProgress(tx, row.id, reopened.count, reopened.last);
        notifyDeliveriesDue(tx);
      }
      return reopened;
    });
    if (!batch.last || batch.count < RECOVERY_BATCH) break;
    cursor = batch.last;
  }
  await repo.finishRecovery(ctx.pool, row.id, 'done');
}

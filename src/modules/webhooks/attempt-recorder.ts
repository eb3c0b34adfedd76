import type pg from 'pg';
import type { AppContext } from '../../context.js';
import { withTransaction } from '../../lib/db.js';
import { withFields } from '../../lib/objects.js';
import { TEST_EVENT_TYPE } from '../events/events.service.js';
import { queueEndpointDisabledEmail } from '../notifications/notifications.service.js';
import { decideDelivery, isSuccess } from './delivery-policy.js';
import { recordOutcomes, type ClaimedDelivery, type DeliveryOutcome } from './dispatch.repo.js';
import type { SendResult } from './webhook-client.js';
import { clearEndpointFailing, disableEndpoint, markEndpointFailing } from './webhooks.repo.js';

/*
 * Recording finished attempts: each delivery's attempt and next state, and its endpoint's health (WH-4 to WH-7).
 * The dispatcher (dispatcher.ts) hands over batches of what attempt-sender.ts produced.
 */

/** What recording needs of the dispatcher: its settings, pool, logger and lease owner name. */
export interface Recorder {
  config: AppContext['config'];
  pool: AppContext['pool'];
  log: AppContext['log'];
  owner: string;
}

/** A claimed delivery and what its attempt produced; null when no attempt was made (endpoint disabled or deleted). */
export interface FinishedAttempt {
  row: ClaimedDelivery;
  result: SendResult | null;
}

/**
 * Writes a batch of finished attempts (WH-4 to WH-7, WH-15): usually one statement, its own transaction; when an
 * attempt can change its endpoint's health (a failure, a 410, the first success of a failing endpoint), one
 * transaction that updates the health, disables the endpoint if its time is up and queues the email with it. A
 * deadlock with another writer of the same rows (an operator's bulk update) is retried: the attempts happened.
 * @throws the database's error after three deadlocks, or any other; the rows stay leased and come back after it.
 */
export async function recordAttempts(r: Recorder, batch: FinishedAttempt[]): Promise<void> {
  for (let tries = 1; ; tries++) {
    try {
      return await record(r, batch);
    } catch (err) {
      if ((err as { code?: string }).code !== '40P01' || tries >= 3) throw err;
    }
  }
}

async function record(r: Recorder, batch: FinishedAttempt[]): Promise<void> {
  const healthNeeded = batch.some(
    ({ row, result }) =>
      result &&
      (result.statusCode === 410 ||
        (row.event_type !== TEST_EVENT_TYPE && (isSuccess(result.statusCode) ? row.endpoint_failing : true))),
  );
  if (!healthNeeded) {
    // The usual case (successes of healthy endpoints): one statement, its own transaction.
    await recordOutcomes(
      r.pool,
      r.owner,
      batch.map(({ row, result }) => outcomeOf(r, row, result, null)),
    );
    return;
  }
  const disabled = await withTransaction(r.pool, async (tx) => {
    const disabledNow = new Map<string, { reason: string; justDisabled: boolean }>();
    for (const [endpointId, attempts] of groupByEndpoint(batch)) {
      const change = await updateEndpointHealth(r, tx, endpointId, attempts);
      if (change) disabledNow.set(endpointId, change);
    }
    await recordOutcomes(
      tx,
      r.owner,
      batch.map(({ row, result }) =>
        outcomeOf(r, row, result, result ? (disabledNow.get(row.endpoint_id)?.reason ?? null) : null),
      ),
    );
    const emails: Array<{ endpointId: string; organizationId: string; reason: string; contact: string | null }> = [];
    for (const [endpointId, change] of disabledNow) {
      if (!change.justDisabled) continue;
      // WH-7: the email job commits with the disable, once per disable.
      const contact = await queueEndpointDisabledEmail(tx, endpointId, change.reason);
      emails.push({
        endpointId,
        organizationId: batch.find((b) => b.row.endpoint_id === endpointId)!.row.organization_id,
        reason: change.reason,
        contact,
      });
    }
    return emails;
  });
  for (const d of disabled) {
    const facts = { organizationId: d.organizationId, endpointId: d.endpointId, reason: d.reason };
    if (d.contact) r.log.info(facts, 'webhook endpoint disabled; the technical contact will be emailed');
    else r.log.warn(facts, 'webhook endpoint disabled; the organization has no contact email, so nobody is emailed');
  }
}

// WH-6: 410 Gone disables at once; other failures run the endpoint's failure clock; a success stops it; test
// pings never touch the clock. Returns the reason when the endpoint is disabled by these attempts.
async function updateEndpointHealth(
  r: Recorder,
  tx: pg.PoolClient,
  endpointId: string,
  attempts: Array<{ row: ClaimedDelivery; result: SendResult }>,
) {
  if (attempts.some((a) => a.result.statusCode === 410)) {
    const reason = 'The endpoint answered 410 Gone';
    return { reason, justDisabled: await disableEndpoint(tx, endpointId, reason) };
  }
  const counted = attempts.filter((a) => a.row.event_type !== TEST_EVENT_TYPE);
  if (!counted.length) return null;
  if (counted.some((a) => isSuccess(a.result.statusCode))) {
    if (counted[0]!.row.endpoint_failing) await clearEndpointFailing(tx, endpointId);
    return null;
  }
  const reason = await markEndpointFailing(tx, endpointId, r.config.webhookDisableAfterHours);
  return reason ? { reason, justDisabled: true } : null;
}

function outcomeOf(
  r: Recorder,
  row: ClaimedDelivery,
  result: SendResult | null,
  endpointDisabledReason: string | null,
): DeliveryOutcome {
  if (!result) {
    const failureReason = row.endpoint_deleted
      ? 'Endpoint deleted'
      : `Endpoint disabled: ${row.endpoint_disabled_reason ?? 'disabled'}`;
    return {
      id: row.id,
      claimedAttemptCount: row.attempt_count,
      attempted: false,
      url: row.url,
      statusCode: null,
      durationMs: 0,
      responseBody: '',
      error: null,
      status: 'failed',
      retryInSeconds: null,
      failureReason,
    };
  }
  const decision = decideDelivery(
    withFields(result, {
      attemptNumber: row.attempt_count + 1,
      autoRetry: row.auto_retry,
      scheduleSeconds: r.config.webhookRetryScheduleSeconds,
      endpointDisabledReason,
    }),
  );
  return {
    id: row.id,
    claimedAttemptCount: row.attempt_count,
    attempted: true,
    url: row.url,
    ...result,
    ...decision,
  };
}

function groupByEndpoint(batch: FinishedAttempt[]): Map<string, Array<{ row: ClaimedDelivery; result: SendResult }>> {
  const groups = new Map<string, Array<{ row: ClaimedDelivery; result: SendResult }>>();
  for (const { row, result } of batch) {
    if (!result) continue;
    const list = groups.get(row.endpoint_id) ?? [];
    list.push({ row, result });
    groups.set(row.endpoint_id, list);
  }
  return groups;
}

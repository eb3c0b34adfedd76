import type { Task } from 'graphile-worker';
import type { AppContext } from '../../context.js';
import { withTransaction, type Db } from '../../lib/db.js';
import { queueDeliveryAttempt, type EventEnvelope } from '../events/events.service.js';
import { queueEndpointDisabledEmail } from '../notifications/notifications.service.js';
import { insertAttempt, loadDeliveryJob, lockDelivery, updateDeliveryAfterAttempt, failPendingDelivery, type DeliveryJobRow } from './deliveries.repo.js';
import { decideDelivery, isSuccess } from './delivery-policy.js';
import { signingSecrets } from './endpoint-secrets.js';
import { signatureHeader, SIGNATURE_HEADER } from './signature.js';
import { UnsafeWebhookUrlError, vetWebhookUrl } from './url-guard.js';
import { sendWebhook, type SendResult } from './webhook-client.js';
import { clearEndpointFailing, disableEndpoint, markEndpointFailing } from './webhooks.repo.js';

/** Event type of the ping sent by POST /webhook-endpoints/{id}/test; it never counts toward endpoint health. */
export const TEST_EVENT_TYPE = 'webhook.test';

const USER_AGENT = 'FilingComplianceService-Webhooks/1.6.0';

/** The graphile-worker task `deliver_webhook` (payload `{deliveryId}`), registered in src/tasks.ts. */
export function deliverWebhookTask(ctx: AppContext): Task {
  return async (payload) => {
    const { deliveryId } = payload as { deliveryId: string };
    await deliverWebhook(ctx, deliveryId);
  };
}

/**
 * Performs one attempt of a delivery (issue 4 item 7). Nothing is held open during the HTTP call; the attempt
 * row and the delivery's next state (plus the retry job) are written in one transaction afterwards. A job
 * re-run after a worker died mid-request (graphile-worker frees its lock when it expires) finds the delivery
 * still pending and simply tries again: receivers may see an event twice, never zero times, and deduplicate
 * by the Service-Event-Id header. Throws only on database errors (graphile-worker then retries the job).
 */
export async function deliverWebhook(ctx: AppContext, deliveryId: string): Promise<void> {
  const job = await loadDeliveryJob(ctx.pool, deliveryId);
  if (!job || job.status !== 'pending') return;
  // A stale duplicate job: the transaction that set a later next_attempt_at also queued the job for it.
  if (job.next_attempt_at && job.next_attempt_at.getTime() > job.db_now.getTime() + 1000) return;
  if (job.endpoint_deleted) return failPendingDelivery(ctx.pool, deliveryId, 'Endpoint deleted');
  if (job.endpoint_disabled) return failPendingDelivery(ctx.pool, deliveryId, `Endpoint disabled: ${job.endpoint_disabled_reason ?? 'disabled'}`);
  const result = await attempt(ctx, job);
  await recordAttempt(ctx, job, result);
}

/** The body exactly as delivered: the stored event as its envelope (spec "Events"). */
export function envelopeOf(job: Pick<DeliveryJobRow, 'event_id' | 'event_type' | 'event_created_at' | 'event_data'>): EventEnvelope {
  return { id: job.event_id, type: job.event_type, createdAt: job.event_created_at.toISOString(), data: job.event_data };
}

async function attempt(ctx: AppContext, job: DeliveryJobRow): Promise<SendResult> {
  let pinned;
  try {
    pinned = (await vetWebhookUrl(job.url, ctx.config.webhookAllowPrivateNetworks))?.[0] ?? null;
  } catch (err) {
    if (!(err instanceof UnsafeWebhookUrlError)) throw err;
    return { statusCode: null, responseBody: '', error: `Refused before connecting: url ${err.message}`, durationMs: 0 };
  }
  const body = JSON.stringify(envelopeOf(job));
  const secrets = signingSecrets(ctx, { endpointId: job.endpoint_id, secret: job.secret, previousSecret: job.previous_secret, previousSecretExpiresAt: job.previous_secret_expires_at }, job.db_now);
  return sendWebhook({
    url: job.url,
    body,
    timeoutMs: ctx.config.webhookTimeoutMs,
    pinned,
    headers: {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      [SIGNATURE_HEADER]: signatureHeader(body, secrets, Math.floor(Date.now() / 1000)),
      'service-event-id': job.event_id,
      'service-delivery-id': job.id,
    },
  });
}

async function recordAttempt(ctx: AppContext, job: DeliveryJobRow, result: SendResult): Promise<void> {
  const disabled = await withTransaction(ctx.pool, async (tx) => {
    const current = await lockDelivery(tx, job.id);
    if (!current) return null;
    const attemptNumber = current.attempt_count + 1;
    await insertAttempt(tx, { deliveryId: job.id, organizationId: current.organization_id, environment: current.environment, attemptNumber, url: job.url, ...result });
    if (current.status !== 'pending' || current.attempt_count !== job.attempt_count) {
      // Another attempt of this delivery finished meanwhile; it owns the schedule. Keep a success, queue nothing.
      const status = isSuccess(result.statusCode) && current.status === 'pending' ? 'succeeded' : null;
      await updateDeliveryAfterAttempt(tx, job.id, { attemptNumber, status, retryInSeconds: null, failureReason: null });
      return null;
    }
    const health = await updateEndpointHealth(ctx, tx, job, result);
    const decision = decideDelivery({ ...result, attemptNumber, autoRetry: current.auto_retry, scheduleSeconds: ctx.config.webhookRetryScheduleSeconds, endpointDisabledReason: health.disabledReason });
    await updateDeliveryAfterAttempt(tx, job.id, { attemptNumber, ...decision });
    if (decision.retryInSeconds !== null) await queueDeliveryAttempt(tx, job.id, decision.retryInSeconds);
    if (!health.justDisabled || !health.disabledReason) return null;
    // ARCHITECTURE.md: "an endpoint that keeps failing is disabled and the organization is told": the email job
    // commits with the disable, once per disable (a racing attempt on an already disabled endpoint queues none).
    return { reason: health.disabledReason, contact: await queueEndpointDisabledEmail(tx, job.endpoint_id, health.disabledReason) };
  });
  if (!disabled) return;
  const facts = { organizationId: job.organization_id, endpointId: job.endpoint_id, reason: disabled.reason };
  if (disabled.contact) ctx.log.info(facts, 'webhook endpoint disabled; the technical contact will be emailed');
  else ctx.log.warn(facts, 'webhook endpoint disabled; the organization has no contact email, so nobody is emailed');
}

/** The endpoint's state after an attempt: `justDisabled` only when this attempt switched it from enabled to disabled. */
interface HealthChange {
  disabledReason: string | null;
  justDisabled: boolean;
}

// 410 Gone disables at once; other failures run the endpoint's failure clock; test pings never touch it.
async function updateEndpointHealth(ctx: AppContext, tx: Db, job: DeliveryJobRow, result: SendResult): Promise<HealthChange> {
  if (result.statusCode === 410) {
    const reason = 'The endpoint answered 410 Gone';
    return { disabledReason: reason, justDisabled: await disableEndpoint(tx, job.endpoint_id, reason) };
  }
  if (job.event_type === TEST_EVENT_TYPE) return { disabledReason: null, justDisabled: false };
  if (isSuccess(result.statusCode)) {
    await clearEndpointFailing(tx, job.endpoint_id);
    return { disabledReason: null, justDisabled: false };
  }
  const reason = await markEndpointFailing(tx, job.endpoint_id, ctx.config.webhookDisableAfterHours);
  return { disabledReason: reason, justDisabled: reason !== null };
}

import type { Tenant } from '../../context.js';
import { many, one, type Db } from '../../lib/db.js';
import { newId } from '../../lib/ids.js';

/** Event types of the spec ("Events"). `webhook.test` is sent only by POST /webhook-endpoints/{id}/test. */
export const EVENT_TYPES = ['filing.status_changed', 'document.uploaded'] as const;

/** `filing.status_changed` or `document.uploaded` (spec "Events"). */
export type EventType = (typeof EVENT_TYPES)[number];

/** The envelope integrators receive: `{id: evt_…, type, createdAt (ISO 8601, ms, UTC), data}`. */
export interface EventEnvelope {
  id: string;
  type: string;
  createdAt: string;
  data: Record<string, unknown>;
}

/** The graphile-worker task that performs one webhook delivery (payload `{deliveryId}`). */
export const DELIVER_WEBHOOK_TASK = 'deliver_webhook';

/**
 * Writes an event and fans it out: one delivery per enabled endpoint of the tenant subscribed to `type`,
 * each with a job queued in the same transaction (the durable outbox; ARCHITECTURE.md "Webhooks").
 * Call it with the transaction that makes the change the event reports.
 * @returns the envelope as it will be delivered.
 */
export async function emitEvent(tx: Db, tenant: Tenant, type: EventType, data: Record<string, unknown>): Promise<EventEnvelope> {
  const row = await one<{ id: string; created_at: Date }>(
    tx,
    `INSERT INTO events (id, organization_id, environment, type, data) VALUES ($1, $2, $3, $4, $5) RETURNING id, created_at`,
    [newId('event'), tenant.organizationId, tenant.environment, type, data],
  );
  await fanOut(tx, tenant, row!.id, type);
  return { id: row!.id, type, createdAt: row!.created_at.toISOString(), data };
}

async function fanOut(tx: Db, tenant: Tenant, eventId: string, type: string): Promise<void> {
  const endpoints = await many<{ id: string }>(
    tx,
    `SELECT id FROM webhook_endpoints
      WHERE organization_id = $1 AND environment = $2 AND deleted_at IS NULL AND NOT disabled AND $3 = ANY(event_types)`,
    [tenant.organizationId, tenant.environment, type],
  );
  for (const endpoint of endpoints) await createDelivery(tx, tenant, endpoint.id, eventId);
}

/** Creates one pending delivery and queues its first attempt now. @returns the delivery id. */
export async function createDelivery(tx: Db, tenant: Tenant, endpointId: string, eventId: string): Promise<string> {
  const id = newId('webhookDelivery');
  await tx.query(
    `INSERT INTO webhook_deliveries (id, organization_id, environment, endpoint_id, event_id, next_attempt_at)
     VALUES ($1, $2, $3, $4, $5, now())`,
    [id, tenant.organizationId, tenant.environment, endpointId, eventId],
  );
  await queueDeliveryAttempt(tx, id, 0);
  return id;
}

/**
 * Queues a delivery attempt after `delaySeconds` (0: now; picked up within milliseconds via LISTEN/NOTIFY).
 * The task schedules its own retries (WEBHOOK_RETRY_SCHEDULE) and throws only on database errors, so
 * graphile-worker's own attempts matter in two cases only: a database error, and a worker that died mid-job.
 * The job must stay runnable for the second (graphile-worker counts an attempt when it locks the job), hence
 * max_attempts above 1.
 */
export async function queueDeliveryAttempt(tx: Db, deliveryId: string, delaySeconds: number): Promise<void> {
  await tx.query(
    `SELECT graphile_worker.add_job($1, json_build_object('deliveryId', $2::text), run_at := now() + make_interval(secs => $3), max_attempts := 10)`,
    [DELIVER_WEBHOOK_TASK, deliveryId, delaySeconds],
  );
}

import type { Tenant } from '../../context.js';
import type { Db } from '../../lib/db.js';
import { ID_PREFIX, newId } from '../../lib/ids.js';

/**
 * Subscribable event types: the spec's two ("Events") and the compliance calendar's reminders (CAL-20).
 * `webhook.test` is sent only by POST /webhook-endpoints/{id}/test.
 */
export const EVENT_TYPES = ['filing.status_changed', 'document.uploaded', 'compliance.deadline_approaching', 'compliance.deadline_missed'] as const;

/** One of {@link EVENT_TYPES}. */
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

/** An event to write: its type and its `data` object (the envelope is built from the stored row). */
export interface NewEvent {
  type: EventType;
  data: Record<string, unknown>;
}

/**
 * Writes an event and fans it out: one delivery per enabled endpoint of the tenant subscribed to `type`
 * (the durable outbox; docs/architecture.md "Webhooks"). Call it with the transaction that makes the change
 * the event reports. @returns the envelope as it will be delivered.
 */
export async function emitEvent(tx: Db, tenant: Tenant, type: EventType, data: Record<string, unknown>): Promise<EventEnvelope> {
  return (await emitEvents(tx, tenant, [{ type, data }]))[0]!;
}

/**
 * Writes several events of one tenant and their deliveries in ONE statement (a round trip counts on the order
 * path): the events from a JSON array, then one delivery per (event, subscribed enabled endpoint) with ids made
 * by the database (`new_id`), then their first attempts queued. Events keep the order given (time-sortable ids).
 * @returns the envelopes, in the order given.
 */
export async function emitEvents(tx: Db, tenant: Tenant, events: NewEvent[]): Promise<EventEnvelope[]> {
  if (!events.length) return [];
  const rows = events.map((e) => ({ id: newId('event'), type: e.type, data: e.data }));
  const { rows: written } = await tx.query<{ id: string; created_at: Date }>(
    `WITH ev AS (
       INSERT INTO events (id, organization_id, environment, type, data)
       SELECT e.id, $1, $2, e.type, e.data FROM jsonb_to_recordset($3::jsonb) AS e(id text, type text, data jsonb)
       RETURNING id, type, created_at
     ), deliveries AS (
       INSERT INTO webhook_deliveries (id, organization_id, environment, endpoint_id, event_id, next_attempt_at)
       SELECT new_id('${ID_PREFIX.webhookDelivery}'), $1, $2, w.id, ev.id, now()
         FROM ev JOIN webhook_endpoints w
           ON w.organization_id = $1 AND w.environment = $2 AND w.deleted_at IS NULL AND NOT w.disabled AND ev.type = ANY(w.event_types)
       RETURNING id
     ), jobs AS (
       SELECT count(graphile_worker.add_job($4, json_build_object('deliveryId', d.id), max_attempts := 10)) AS queued FROM deliveries d
     )
     SELECT ev.id, ev.created_at, jobs.queued FROM ev, jobs`,
    [tenant.organizationId, tenant.environment, JSON.stringify(rows), DELIVER_WEBHOOK_TASK],
  );
  const createdAt = new Map(written.map((w) => [w.id, w.created_at]));
  return rows.map((r) => ({ id: r.id, type: r.type, createdAt: createdAt.get(r.id)!.toISOString(), data: r.data }));
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

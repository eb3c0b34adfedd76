import type { Tenant } from '../../context.js';
import type { Db } from '../../lib/db.js';
import { signalAtCommit } from '../../lib/commit-signals.js';
import { notFound } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { withFields } from '../../lib/objects.js';
import { toPage, type Page } from '../../lib/pagination.js';
import { EVENTS_CHANNEL, tenantKey } from './event-stream-hub.js';
import * as repo from './events.repo.js';

/**
 * Subscribable event types (EVT-2): the contract's two, the compliance calendar's reminders (CAL-20), and the
 * prepaid balance's (FUND-9, FUND-13, FUND-16, FUND-36). `webhook.test` is sent only by POST /webhook-endpoints/{id}/test.
 */
export const EVENT_TYPES = [
  'filing.status_changed',
  'document.uploaded',
  'compliance.deadline_approaching',
  'compliance.deadline_missed',
  'balance.top_up_succeeded',
  'balance.top_up_failed',
  'balance.top_up_reversed',
  'balance.top_up_reinstated',
  'balance.low',
  'balance.auto_recharge_failed',
] as const;

/** Event type of the ping sent by POST /webhook-endpoints/{id}/test; it never counts toward endpoint health (WH-10). */
export const TEST_EVENT_TYPE = 'webhook.test';

/** Every event type an integrator can find in GET /events and its stream: the subscribable ones and the test ping. */
export const LISTED_EVENT_TYPES: readonly string[] = [...EVENT_TYPES, TEST_EVENT_TYPE];

/** One of {@link EVENT_TYPES}. */
export type EventType = (typeof EVENT_TYPES)[number];

/** The envelope integrators receive: `{id: evt_…, type, createdAt (ISO 8601, ms, UTC), data}`. */
export interface EventEnvelope {
  id: string;
  type: string;
  createdAt: string;
  data: Record<string, unknown>;
}

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
export async function emitEvent(
  tx: Db,
  tenant: Tenant,
  type: EventType,
  data: Record<string, unknown>,
): Promise<EventEnvelope> {
  return (await emitEvents(tx, tenant, [{ type, data }]))[0]!;
}

/**
 * Writes several events of one tenant and their deliveries in ONE statement (a round trip counts on the order
 * path) through the database function `emit_events` (EVT-5): the events, then one delivery per (event, subscribed
 * enabled endpoint), due now. Events keep the order given (time-sortable ids). The deliveries are the outbox the
 * webhook dispatchers claim from (WH-16); they and the event streams are woken once the caller's transaction has
 * committed ({@link eventsWritten}).
 * @returns the envelopes, in the order given.
 */
export async function emitEvents(tx: Db, tenant: Tenant, events: NewEvent[]): Promise<EventEnvelope[]> {
  if (!events.length) return [];
  const rows = events.map((e) => ({ id: newId('event'), type: e.type, data: e.data }));
  const written = await repo.insertEvents(tx, tenant, rows);
  eventsWritten(tx, tenant);
  const createdAt = new Map(written.map((w) => [w.id, w.created_at]));
  return rows.map((r) => ({ id: r.id, type: r.type, createdAt: createdAt.get(r.id)!.toISOString(), data: r.data }));
}

/**
 * Wakes the webhook dispatchers and the tenant's event streams of every process once the transaction on `tx` has
 * committed (OPS-5). Called by whatever wrote events: {@link emitEvents}, and the order placement, whose database
 * function writes its events itself.
 */
export function eventsWritten(tx: Db, tenant: Tenant): void {
  signalAtCommit(tx, EVENTS_CHANNEL, tenantKey(tenant));
}

/**
 * One page of the tenant's events, newest first, as envelopes (GET /events); `limit` defaults to 20, `startingAfter`
 * is the last event id of the previous page.
 */
export async function listEventPage(
  db: Db,
  tenant: Tenant,
  query: Omit<repo.EventFilter, 'limit'> & { limit?: number },
): Promise<Page<EventEnvelope>> {
  const limit = query.limit ?? 20;
  const rows = await repo.listEvents(db, tenant, withFields(query, { limit }));
  return toPage(rows, limit, toEnvelope);
}

/** One event of the tenant as its envelope (GET /events/{eventId}). @throws AppError not_found (404). */
export async function getEvent(db: Db, tenant: Tenant, eventId: string): Promise<EventEnvelope> {
  const row = await repo.findEvent(db, tenant, eventId);
  if (!row) throw notFound('event', eventId);
  return toEnvelope(row);
}

/** An events row as the envelope `{id, type, createdAt (ISO 8601, ms, UTC), data}`. */
function toEnvelope(row: repo.EventRow): EventEnvelope {
  return { id: row.id, type: row.type, createdAt: row.created_at.toISOString(), data: row.data };
}

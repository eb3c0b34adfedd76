import type { AppContext, Tenant } from '../../context.js';
import { notFound } from '../../lib/errors.js';
import { idAt } from '../../lib/ids.js';
import { findEvent } from '../events/events.repo.js';
import { attemptHeaders, envelopeOf } from './attempt-sender.js';
import { type DeliveryView, deliveryView } from './deliveries.service.js';
import { type DeliveryStatus, findDelivery, listAttempts } from './deliveries.repo.js';
import * as repo from './delivery-log.repo.js';

/** A delivery in the portal's log: the API's view and the URL of its endpoint. */
export type DeliveryLogEntry = DeliveryView & { endpointUrl: string };

/** The delivery log's filters as typed: every one optional; `from` inclusive, `to` exclusive. */
export interface DeliveryLogQuery {
  endpointId?: string;
  status?: DeliveryStatus;
  eventType?: string;
  from?: Date;
  to?: Date;
  /** The last delivery id of the page before. */
  before?: string;
  limit: number;
}

const entryOf = (r: repo.DeliveryLogRow): DeliveryLogEntry => ({ ...deliveryView(r), endpointUrl: r.endpoint_url });

/**
 * A page of the tenant's webhook deliveries, newest first, filtered by endpoint, status, event type and when they were
 * made (PORTAL-20): keyset pages through indexes, never a count, so a tenant with millions of deliveries pages as fast
 * as one with ten. @returns the entries and whether another page follows.
 */
export async function listDeliveryLog(
  ctx: AppContext,
  tenant: Tenant,
  q: DeliveryLogQuery,
): Promise<{ items: DeliveryLogEntry[]; hasMore: boolean }> {
  const bound = (kind: 'webhookDelivery' | 'event', at?: Date) => (at ? idAt(kind, at) : undefined);
  const rows = await repo.listDeliveryLog(
    ctx.pool,
    tenant,
    {
      endpointId: q.endpointId,
      status: q.status,
      eventType: q.eventType,
      range: {
        deliveries: { from: bound('webhookDelivery', q.from), to: bound('webhookDelivery', q.to) },
        events: { from: bound('event', q.from), to: bound('event', q.to) },
      },
    },
    { limit: q.limit, before: q.before },
  );
  return { items: rows.slice(0, q.limit).map(entryOf), hasMore: rows.length > q.limit };
}

/** One attempt as the portal shows it: what was sent and what came back (PORTAL-21). */
interface AttemptDetail {
  attemptNumber: number;
  at: Date;
  url: string;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  requestHeaders: Record<string, string>;
  /** The receiver's headers where kept (public addresses only, SEC-1), else null. */
  responseHeaders: Record<string, string> | null;
  /** The first 4 KB of the answer where kept, else null. */
  responseBody: string | null;
}

/** A delivery with its event and every attempt, first to last. */
export interface DeliveryDetail {
  delivery: DeliveryView;
  /** The body every attempt POSTed: the event's envelope, byte for byte. */
  requestBody: string;
  attempts: AttemptDetail[];
}

/**
 * One of the tenant's deliveries with the request its attempts sent (headers and body) and each attempt's answer:
 * status, headers and the stored part of the body, duration (PORTAL-21). The Service-Signature value is not kept
 * (each attempt is signed afresh), so it is shown as such. @throws not_found (404) for another tenant's or
 * environment's id.
 */
export async function deliveryDetail(ctx: AppContext, tenant: Tenant, id: string): Promise<DeliveryDetail> {
  const row = await findDelivery(ctx.pool, tenant, id);
  if (!row) throw notFound('webhook delivery', id);
  const [event, attempts] = await Promise.all([
    findEvent(ctx.pool, tenant, row.event_id),
    listAttempts(ctx.pool, tenant, id),
  ]);
  const requestBody = event
    ? JSON.stringify(
        envelopeOf({
          event_id: event.id,
          event_type: event.type,
          event_created_at: event.created_at,
          event_data: event.data,
        }),
      )
    : '';
  const requestHeaders = attemptHeaders(row, 't=…,v1=… (signed afresh for each attempt; not kept)');
  return {
    delivery: deliveryView(row),
    requestBody,
    attempts: attempts.map((a) => ({
      attemptNumber: a.attempt_number,
      at: a.created_at,
      url: a.url,
      statusCode: a.status_code,
      durationMs: a.duration_ms,
      error: a.error,
      requestHeaders,
      responseHeaders: a.response_headers,
      responseBody: a.response_body,
    })),
  };
}

/** Every delivery of one of the tenant's events (one per endpoint), newest first (PORTAL-23). */
export async function eventDeliveries(ctx: AppContext, tenant: Tenant, eventId: string): Promise<DeliveryLogEntry[]> {
  return (await repo.listEventDeliveries(ctx.pool, tenant, eventId)).map(entryOf);
}

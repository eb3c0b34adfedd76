import type { AppContext, Tenant } from '../../context.js';
import { withTransaction, type Db } from '../../lib/db.js';
import { AppError, notFound } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { toPage, type Page, type PageParams } from '../../lib/pagination.js';
import { notifyDeliveriesDue } from './dispatch.repo.js';
import * as repo from './deliveries.repo.js';
import { findEndpoint } from './webhooks.repo.js';
import { withFields } from '../../lib/objects.js';

/** A delivery as GET /webhook-deliveries shows it. Times are ISO 8601 strings. */
export interface DeliveryView {
  id: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  status: repo.DeliveryStatus;
  attemptCount: number;
  nextAttemptAt: string | null;
  lastAttemptAt: string | null;
  failureReason: string | null;
  createdAt: string;
  updatedAt: string;
}

/** One HTTP try as the API shows it (`durationMs` in milliseconds, `responseBody` the first 4 KB). */
export interface AttemptView {
  id: string;
  attemptNumber: number;
  url: string;
  statusCode: number | null;
  durationMs: number;
  responseBody: string | null;
  error: string | null;
  createdAt: string;
}

/** The API view of a delivery row (timestamps ISO 8601); nextAttemptAt only while pending. */
export function deliveryView(r: repo.DeliveryRow): DeliveryView {
  return {
    id: r.id,
    endpointId: r.endpoint_id,
    eventId: r.event_id,
    eventType: r.event_type,
    status: r.status,
    attemptCount: r.attempt_count,
    nextAttemptAt: r.status === 'pending' ? (r.next_attempt_at?.toISOString() ?? null) : null,
    lastAttemptAt: r.last_attempt_at?.toISOString() ?? null,
    failureReason: r.failure_reason,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  };
}

function attemptView(a: repo.AttemptRow): AttemptView {
  return {
    id: a.id,
    attemptNumber: a.attempt_number,
    url: a.url,
    statusCode: a.status_code,
    durationMs: a.duration_ms,
    responseBody: a.response_body,
    error: a.error,
    createdAt: a.created_at.toISOString(),
  };
}

/** Query of GET /webhook-deliveries as its schema checked it (status, when given, is pending, succeeded or failed). */
export type DeliveryListParams = PageParams & Omit<repo.DeliveryFilters, 'status'> & { status?: string };

const DELIVERY_STATUSES: readonly repo.DeliveryStatus[] = ['pending', 'succeeded', 'failed'];

/** GET /webhook-deliveries: newest first, filtered by endpointId, eventId and status (WH-12). */
export async function listDeliveries(
  ctx: AppContext,
  tenant: Tenant,
  q: DeliveryListParams,
): Promise<Page<DeliveryView>> {
  const limit = q.limit ?? 20;
  // Narrowed, not cast: the query schema admits only these values, so this keeps what was sent.
  const status = DELIVERY_STATUSES.find((s) => s === q.status);
  const rows = await repo.listDeliveries(
    ctx.pool,
    tenant,
    { endpointId: q.endpointId, eventId: q.eventId, status },
    limit,
    q.startingAfter,
  );
  return toPage(rows, limit, deliveryView);
}

/** GET /webhook-deliveries/{id}: the delivery with every attempt, first to last. @throws not_found (404). */
export async function getDelivery(
  ctx: AppContext,
  tenant: Tenant,
  id: string,
): Promise<DeliveryView & { attempts: AttemptView[] }> {
  const row = await repo.findDelivery(ctx.pool, tenant, id);
  if (!row) throw notFound('webhook delivery', id);
  return withFields(deliveryView(row), { attempts: (await repo.listAttempts(ctx.pool, tenant, id)).map(attemptView) });
}

/**
 * POST /webhook-deliveries/{id}/resend: one new attempt now, signed afresh. A failed or succeeded delivery
 * (a receiver that lost an event asks for it again) turns pending; a failed resend marks it failed again
 * without automatic retries. A pending delivery waiting for its next retry (a receiver that was just fixed)
 * gets that retry now; the retry schedule goes on from there if it fails. Attempt numbers continue.
 * @throws not_found (404); conflict (409) while the first attempt is still under way, or when the endpoint
 *   is disabled or deleted.
 */
export async function resendDelivery(ctx: AppContext, tenant: Tenant, id: string): Promise<DeliveryView> {
  return withTransaction(ctx.pool, async (tx) => {
    const row = await repo.findDelivery(tx, tenant, id, true);
    if (!row) throw notFound('webhook delivery', id);
    if (row.status === 'pending' && row.attempt_count === 0)
      throw new AppError('conflict', `Webhook delivery ${id} is still pending; its first attempt is under way`);
    const endpoint = await findEndpoint(tx, tenant, row.endpoint_id);
    if (!endpoint) throw new AppError('conflict', `The endpoint of webhook delivery ${id} has been deleted`);
    if (endpoint.disabled)
      throw new AppError(
        'conflict',
        `Webhook endpoint ${endpoint.id} is disabled; enable it with PATCH {"disabled": false} first`,
      );
    if (row.status === 'pending') await repo.bringRetryForward(tx, id);
    else await repo.reopenDelivery(tx, id);
    notifyDeliveriesDue(tx);
    return deliveryView((await repo.findDelivery(tx, tenant, id))!);
  });
}

/**
 * Creates one pending delivery, due now, and wakes the dispatchers at commit (WH-10, WH-16).
 * @param autoRetry false for a single attempt without retries (test events). @returns the delivery id.
 */
export async function createDelivery(
  tx: Db,
  tenant: Tenant,
  endpointId: string,
  eventId: string,
  autoRetry = true,
): Promise<string> {
  const id = newId('webhookDelivery');
  await repo.insertDelivery(tx, tenant, id, endpointId, eventId, autoRetry);
  notifyDeliveriesDue(tx);
  return id;
}

import type { Tenant } from '../../context.js';
import { many, type Db } from '../../lib/db.js';
import type { DeliveryRow, DeliveryStatus } from './deliveries.repo.js';

/** A delivery as the portal's delivery log lists it: the row, its event's type and its endpoint's URL. */
export interface DeliveryLogRow extends DeliveryRow {
  endpoint_url: string;
}

/**
 * Filters of the delivery log (PORTAL-20); every one optional. `fromId`/`toId` are id bounds made from the time range
 * (ids sort by the time they were made, src/lib/ids.ts `idAt`): deliveries of kind `webhookDelivery`, events of kind
 * `event` (a delivery is made in its event's transaction, so both say when it happened).
 */
export interface DeliveryLogFilters {
  endpointId?: string;
  status?: DeliveryStatus;
  eventType?: string;
  range: { deliveries: { from?: string; to?: string }; events: { from?: string; to?: string } };
}

const COLUMNS = `d.id, d.organization_id, d.environment, d.endpoint_id, d.event_id, e.type AS event_type, d.status,
  d.attempt_count, d.auto_retry, d.next_attempt_at, d.last_attempt_at, d.failure_reason, d.created_at, d.updated_at,
  w.url AS endpoint_url`;

/**
 * A page of the tenant's deliveries, newest first (`limit + 1` rows; `before` a delivery id: the page after it).
 * Keyset only, never a count, and each shape of filter starts from an index that bounds the rows read:
 * - without an event type, deliveries by id through the tenant's index (the tenant-and-status one with a status,
 *   the endpoint's with an endpoint), the time range as id bounds;
 * - with an event type, the tenant's events of that type newest first (time range as event id bounds), each event's
 *   deliveries through `webhook_deliveries_event`, ordered by (event id, delivery id); the cursor is the delivery's
 *   (event id, id). The deliveries are a LATERAL subquery kept apart by `OFFSET 0`, so the plan is always that
 *   nested loop: flattened, PostgreSQL may merge-join the whole event index instead, reading every delivery newer
 *   than the page.
 * Combining filters reads in proportion to how rare the combination is among the rows of the leading index.
 */
export function listDeliveryLog(
  db: Db,
  tenant: Tenant,
  f: DeliveryLogFilters,
  page: { limit: number; before?: string },
): Promise<DeliveryLogRow[]> {
  const params: unknown[] = [tenant.organizationId, tenant.environment];
  const param = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  const deliveries = ['d.organization_id = $1', 'd.environment = $2'];
  if (f.endpointId) deliveries.push(`d.endpoint_id = ${param(f.endpointId)}`);
  if (f.status) deliveries.push(`d.status = ${param(f.status)}`);
  if (!f.eventType) {
    if (f.range.deliveries.from) deliveries.push(`d.id >= ${param(f.range.deliveries.from)}`);
    if (f.range.deliveries.to) deliveries.push(`d.id < ${param(f.range.deliveries.to)}`);
    if (page.before) deliveries.push(`d.id < ${param(page.before)}`);
    const limit = param(page.limit + 1);
    return many<DeliveryLogRow>(
      db,
      `SELECT ${COLUMNS} FROM webhook_deliveries d JOIN events e ON e.id = d.event_id JOIN webhook_endpoints w ON w.id = d.endpoint_id
        WHERE ${deliveries.join(' AND ')} ORDER BY d.id DESC LIMIT ${limit}`,
      params,
    );
  }
  const events = ['e.organization_id = $1', 'e.environment = $2', `e.type = ${param(f.eventType)}`];
  if (f.range.events.from) events.push(`e.id >= ${param(f.range.events.from)}`);
  if (f.range.events.to) events.push(`e.id < ${param(f.range.events.to)}`);
  if (page.before) {
    const before = param(page.before);
    // The event bound lets the events index start at the cursor's event; the pair orders within one event.
    events.push(`e.id <= (SELECT c.event_id FROM webhook_deliveries c WHERE c.id = ${before})`);
    deliveries.push(`(e.id, d.id) < (SELECT c.event_id, c.id FROM webhook_deliveries c WHERE c.id = ${before})`);
  }
  const limit = param(page.limit + 1);
  return many<DeliveryLogRow>(
    db,
    `SELECT ${COLUMNS} FROM events e
       CROSS JOIN LATERAL (SELECT d.* FROM webhook_deliveries d WHERE d.event_id = e.id AND ${deliveries.join(' AND ')} OFFSET 0) d
       JOIN webhook_endpoints w ON w.id = d.endpoint_id
      WHERE ${events.join(' AND ')} ORDER BY e.id DESC, d.id DESC LIMIT ${limit}`,
    params,
  );
}

/** Every delivery of one of the tenant's events (one per endpoint it went to), newest first. */
export function listEventDeliveries(db: Db, tenant: Tenant, eventId: string): Promise<DeliveryLogRow[]> {
  return many<DeliveryLogRow>(
    db,
    `SELECT ${COLUMNS} FROM webhook_deliveries d JOIN events e ON e.id = d.event_id JOIN webhook_endpoints w ON w.id = d.endpoint_id
      WHERE d.event_id = $1 AND d.organization_id = $2 AND d.environment = $3 ORDER BY d.id DESC`,
    [eventId, tenant.organizationId, tenant.environment],
  );
}

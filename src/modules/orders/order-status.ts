import type { Tenant } from '../../context.js';
import type { Db } from '../../lib/db.js';
import { emitEvents, type EventEnvelope } from '../events/events.service.js';
import { statusChangedData } from './filing-events.js';
import type { FilingStatus, SubscriptionStatus } from './order-statuses.js';
import * as repo from './orders.repo.js';

/*
 * The one way an order's status changes after placement (ORD-14): the row, the status-history row (filing
 * statuses) and the filing.status_changed event with its webhook deliveries, in the caller's transaction. The
 * filing pipeline (operators, console, CLI, test helpers) plans WHICH change is allowed (filings/transitions.ts);
 * the subscription renewals plan theirs; both write it here. No other module writes `orders` or
 * `order_status_history`.
 */

/** A change of an order's filing status: written to the row and appended to its status history. Dates 'YYYY-MM-DD'. */
interface FilingStatusChange {
  from: FilingStatus | null;
  to: FilingStatus;
  exceptionCode?: string | null;
  exceptionMessage?: string | null;
  /** Set when filed; null keeps the row's filing date. */
  filingDate?: string | null;
}

/** One status change of one order. Leave out what does not change. */
export interface OrderStatusChange {
  orderId: string;
  /** Filing status (history row written). Leaving exception clears the exception fields (exceptionCode null). */
  filing?: FilingStatusChange;
  /** Subscription status; with `currentPeriodEnd` ('YYYY-MM-DD') the end of the paid period too. */
  subscription?: { status: SubscriptionStatus | null; currentPeriodEnd?: string };
  /** History actor: api, dashboard, test_helper, cli, operator:<id>, renewal. */
  actor: string;
}

/**
 * Writes one status change (ORD-14) in 2 statements: the row and its history row together, then the event.
 * The caller holds the order's row lock (SELECT … FOR UPDATE) when the change depends on the current status.
 * @returns the order after the change (every column) and the event written. @throws Error when the order does not
 * exist.
 */
export async function changeOrderStatus(
  tx: Db,
  tenant: Tenant,
  change: OrderStatusChange,
): Promise<{ order: repo.OrderRow; event: EventEnvelope }> {
  const order = await repo.updateOrderStatus(tx, tenant, change);
  if (!order) throw new Error(`order '${change.orderId}' does not exist`);
  const [event] = await emitEvents(tx, tenant, [{ type: 'filing.status_changed', data: statusChangedData(order) }]);
  return { order, event: event! };
}

/**
 * Moves the end of a subscription's paid period (a renewal that keeps it active: no status change, so no history
 * and no event). `currentPeriodEnd` 'YYYY-MM-DD'. @returns the order after the change.
 */
export async function extendSubscriptionPeriod(
  tx: Db,
  tenant: Tenant,
  orderId: string,
  currentPeriodEnd: string,
): Promise<repo.OrderRow> {
  const order = await repo.updateOrderStatus(
    tx,
    tenant,
    { orderId, actor: 'renewal', subscription: { status: null, currentPeriodEnd } },
    true,
  );
  if (!order) throw new Error(`order '${orderId}' does not exist`);
  return order;
}

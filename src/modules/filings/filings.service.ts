import type { AppContext, Tenant } from '../../context.js';
import { withTransaction, type Db } from '../../lib/db.js';
import { AppError, notFound } from '../../lib/errors.js';
import { toPage } from '../../lib/pagination.js';
import { reverseOrderDebits, type LedgerEntryRow } from '../billing/ledger.js';
import { queueCardRefund } from '../payments/card-refunds.js';
import type { EventEnvelope } from '../events/events.service.js';
import * as repo from './filings.repo.js';
import { setCompanyFiled } from '../companies/companies.service.js';
import { adminOrderDetailView, adminOrderView } from './filings.views.js';
import { loadOrderRecord } from './order-record.js';
import { changeOrderStatus } from '../orders/order-status.js';
import type { SubscriptionStatus } from '../orders/order-statuses.js';
import type { OrderRow, OrderSummaryRow } from '../orders/orders.repo.js';
import {
  orderStateOf,
  planTransition,
  todayUtc,
  type PlannedTransition,
  type TransitionRequest,
} from './transitions.js';
import { withFields } from '../../lib/objects.js';

/** What one transition did: the order after it, the event written and any ledger reversals (cents). */
export interface TransitionResult {
  order: OrderRow;
  plan: PlannedTransition;
  event: EventEnvelope;
  reversals: LedgerEntryRow[];
}

/**
 * Moves an order to `request.filingStatus` in ONE transaction: lock the order row, guard (transitions.ts), then
 * the orders module's status change (row, status-history row, `filing.status_changed` event with its webhook
 * deliveries; ORD-14), then side effects. A failure anywhere leaves nothing behind (no history, no event, no reversal).
 *
 * Side effects: cancelled + balance billing -> every debit of the order is reversed (BILL-4);
 * cancelled + card payment (checkout billing) -> a refund of the order's amount is recorded and queued (PAY-6);
 * cancelled subscription -> subscriptionStatus canceled; filed formation -> company formationDate =
 * filingDate; filed EIN order -> company ein (see transitions.ts for the test-environment EIN).
 *
 * @param tenant the caller's tenant (an order of another tenant answers 404), or null for operators
 *   (admin API, console, CLI) acting on any order.
 * @param actor recorded in the history and on reversal entries: `test_helper`, `operator`, `operator:<id>`, `cli`.
 * @throws AppError not_found (404), invalid_transition (409); ValidationError (400) for bad fields.
 */
export async function transitionOrder(
  ctx: AppContext,
  tenant: Tenant | null,
  orderId: string,
  request: TransitionRequest,
  actor: string,
): Promise<TransitionResult> {
  return withTransaction(ctx.pool, async (tx) => {
    const current = await repo.lockOrder(tx, tenant, orderId);
    if (!current) throw notFound('order', orderId);
    const plan = planTransition(orderStateOf(current), request, todayUtc());
    await throwIfFormationCancelled(tx, current, plan.to);
    const orderTenant = tenantOf(current);
    // ORD-14: the orders module writes the row, the history row and the event.
    const changed = await changeOrderStatus(tx, orderTenant, {
      orderId: current.id,
      actor,
      filing: {
        from: plan.from,
        to: plan.to,
        exceptionCode: plan.exceptionCode,
        exceptionMessage: plan.exceptionMessage,
        filingDate: plan.filingDate,
      },
      subscription: { status: subscriptionStatusAfter(current, plan) },
    });
    const reversals = await applySideEffects(tx, orderTenant, changed.order, plan, actor);
    return { order: changed.order, plan, event: changed.event, reversals };
  });
}

/**
 * FIL-13: an EIN ordered with a formation (its price included in the formation's tier 2, BILL-5) cannot be filed
 * once that formation is cancelled: the IRS assigns an EIN only to an entity that exists, and a filed EIN would be
 * one nobody paid for. In a transaction the formation's row is share-locked (a cancellation under way is waited
 * for); the console's confirmation page asks the same on the pool.
 * @throws AppError invalid_transition (409) naming the EIN order.
 */
export async function throwIfFormationCancelled(
  db: Db,
  order: Pick<OrderRow, 'id' | 'order_type' | 'group_id'>,
  to: string,
): Promise<void> {
  if (order.order_type !== 'ein' || to !== 'filed') return;
  if ((await repo.formationStatusOfGroup(db, order.group_id)) !== 'cancelled') return;
  throw new AppError('invalid_transition', formationCancelledMessage(order.id));
}

/** FIL-13's refusal, also shown on the console's order page where the action is withheld. */
export function formationCancelledMessage(orderId: string): string {
  return `EIN order ${orderId} was ordered with a formation that is cancelled, so it cannot be filed (the IRS assigns an EIN only to an entity that exists): cancel it instead`;
}

/**
 * The operators' view of one order (GET /admin/v1/orders/{orderId}, CLI): the order, its status history (oldest
 * first) and its documents with fresh one-hour links; amount in dollars. @throws AppError not_found.
 */
export async function getOrderDetail(ctx: AppContext, orderId: string) {
  return adminOrderDetailView(ctx, await loadOrderRecord(ctx.pool, orderId));
}

/** The operators' queue across tenants, oldest first (GET /admin/v1/orders, `orders list`). */
export async function listOrderQueue(db: Db, filter: Omit<repo.OrderQueueFilter, 'limit'> & { limit?: number }) {
  const limit = filter.limit ?? 100;
  const rows = await repo.listOrdersForOperators(db, withFields(filter, { limit }));
  return toPage(rows, limit, adminOrderView);
}

/** The tenant an order belongs to. */
export function tenantOf(order: Pick<OrderRow, 'organization_id' | 'environment'>): Tenant {
  return { organizationId: order.organization_id, environment: order.environment };
}

// A cancelled subscription (registered agent, annual report) stops; other statuses leave it as it is.
function subscriptionStatusAfter(order: OrderSummaryRow, plan: PlannedTransition): SubscriptionStatus | null {
  return plan.to === 'cancelled' && order.subscription_status ? 'canceled' : order.subscription_status;
}

async function applySideEffects(
  tx: Db,
  tenant: Tenant,
  order: OrderSummaryRow,
  plan: PlannedTransition,
  actor: string,
): Promise<LedgerEntryRow[]> {
  if (plan.to === 'cancelled' && order.billing === 'balance') return reverseOrderDebits(tx, tenant, order.id, actor);
  // A card-paid order's retail + state fee go back to the card (PAY-6); the job sends the refund after the commit.
  if (plan.to === 'cancelled' && order.billing === 'checkout') await queueCardRefund(tx, tenant, order);
  if (plan.to === 'filed' && order.order_type === 'formation') {
    await setCompanyFiled(tx, tenant, order.company_id, {
      formationDate: plan.filingDate!,
      formationState: order.filing_state,
    });
  }
  if (plan.to === 'filed' && plan.ein) await setCompanyFiled(tx, tenant, order.company_id, { ein: plan.ein });
  return [];
}

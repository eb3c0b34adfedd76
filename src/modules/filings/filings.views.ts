import type { AppContext } from '../../context.js';
import { centsToDollars } from '../../lib/money.js';
import { serializeDocument } from '../documents/documents.service.js';
import { EXCEPTION_REASONS } from '../orders/exception-codes.js';
import type { StatusHistoryRow } from './filings.repo.js';
import type { OrderRecord } from './order-record.js';
import type { OrderSummaryRow } from '../orders/orders.repo.js';

/** The order as integrators see it after a test-helper move (OrderStatusSchema). */
export function orderStatusView(o: OrderSummaryRow, eventId: string) {
  return {
    orderId: o.id,
    companyId: o.company_id,
    orderType: o.order_type,
    filingStatus: o.filing_status,
    filingDate: o.filing_date,
    filingType: o.filing_type,
    subscriptionStatus: o.subscription_status,
    exceptionCode: o.exception_code,
    exceptionReason: o.exception_code ? (EXCEPTION_REASONS[o.exception_code] ?? null) : null,
    exceptionMessage: o.exception_message,
    eventId,
    createdAt: o.created_at.toISOString(),
    updatedAt: o.updated_at.toISOString(),
  };
}

/** A status-history row for operators (HistoryEntrySchema). */
function historyView(h: StatusHistoryRow) {
  return {
    fromStatus: h.from_status,
    toStatus: h.to_status,
    exceptionCode: h.exception_code,
    exceptionMessage: h.exception_message,
    filingDate: h.filing_date,
    actor: h.actor,
    createdAt: h.created_at.toISOString(),
  };
}

/** The operators' view of an order (AdminOrderSchema); amount in dollars. */
export function adminOrderView(o: OrderSummaryRow & { company_legal_name?: string; organization_name?: string }) {
  return {
    orderId: o.id,
    organizationId: o.organization_id,
    environment: o.environment,
    companyId: o.company_id,
    userId: o.user_id,
    orderType: o.order_type,
    filingState: o.filing_state,
    filingStatus: o.filing_status,
    filingType: o.filing_type,
    filingDate: o.filing_date,
    subscriptionStatus: o.subscription_status,
    exceptionCode: o.exception_code,
    exceptionReason: o.exception_code ? (EXCEPTION_REASONS[o.exception_code] ?? null) : null,
    exceptionMessage: o.exception_message,
    billing: o.billing,
    amount: centsToDollars(o.amount_cents),
    createdAt: o.created_at.toISOString(),
    updatedAt: o.updated_at.toISOString(),
    ...(o.company_legal_name !== undefined ? { companyLegalName: o.company_legal_name } : {}),
    ...(o.organization_name !== undefined ? { organizationName: o.organization_name } : {}),
  };
}

/**
 * An order's full record as the admin API answers it (AdminOrderSchema): the order (amount in dollars), its status
 * history, oldest first, and its documents with fresh one-hour links.
 */
export function adminOrderDetailView(ctx: AppContext, record: OrderRecord) {
  // The detail names neither company nor organization (the queue rows do), so the joined names stay out.
  const { organization_name: _organizationName, ...order } = record.order;
  return {
    ...adminOrderView(order),
    history: record.history.map(historyView),
    documents: record.documents.map((d) => serializeDocument(ctx, d)),
  };
}

import { EXCEPTION_REASONS } from './exception-codes.js';
import type { OrderRow } from './orders.repo.js';

/** The order fields a filing.status_changed event reports. Dates are 'YYYY-MM-DD'. */
export type OrderForEvent = Pick<
  OrderRow,
  | 'id'
  | 'company_id'
  | 'order_type'
  | 'filing_status'
  | 'filing_date'
  | 'filing_type'
  | 'subscription_status'
  | 'exception_code'
  | 'exception_message'
>;

/**
 * `filing.status_changed` data (EVT-3): orderId, companyId, orderType, filingStatus,
 * filingDate, filingType, subscriptionStatus, and exceptionCode/exceptionReason/exceptionMessage when in exception.
 */
export function statusChangedData(order: OrderForEvent): Record<string, unknown> {
  const data: Record<string, unknown> = {
    orderId: order.id,
    companyId: order.company_id,
    orderType: order.order_type,
    filingStatus: order.filing_status,
    filingDate: order.filing_date,
    filingType: order.filing_type,
    subscriptionStatus: order.subscription_status,
  };
  if (order.filing_status === 'exception') {
    data.exceptionCode = order.exception_code;
    data.exceptionReason = order.exception_code ? (EXCEPTION_REASONS[order.exception_code] ?? null) : null;
    data.exceptionMessage = order.exception_message;
  }
  return data;
}

import type { Db } from '../../lib/db.js';
import { notFound, ValidationError } from '../../lib/errors.js';
import { findOrderDetail, findOrderLedger, type OrderDetailRow } from '../filings/filings.repo.js';
import type { TransitionRequest } from '../filings/transitions.js';
import { field } from './console.web.js';

/** The order-page actions an operator can take (CONS-4). `resolve` leaves an exception. */
export const ORDER_ACTIONS = ['pending', 'filed', 'exception', 'resolve', 'cancel'] as const;

/** One of ORDER_ACTIONS (the `action` segment of an order-page form). */
export type OrderAction = (typeof ORDER_ACTIONS)[number];

/** The order an action form names, every column with what the confirmation page shows. @throws AppError not_found. */
export async function loadActionOrder(db: Db, orderId: string): Promise<OrderDetailRow> {
  const order = await findOrderDetail(db, orderId);
  if (!order) throw notFound('order', orderId);
  return order;
}

/**
 * What cancelling will give back: the order's debits not yet reversed (the same set the ledger's
 * reverseOrderDebits reverses) and their total, in cents. Only balance-billed orders are reversed (BILL-4).
 */
export async function reversalPreview(db: Db, order: Pick<OrderDetailRow, 'id' | 'billing'>) {
  const ledger = await findOrderLedger(db, order.id);
  const reversed = new Set(ledger.map((e) => e.reverses_entry_id).filter(Boolean));
  const debits = order.billing === 'balance' ? ledger.filter((e) => e.type === 'debit' && !reversed.has(e.id)) : [];
  return { billing: order.billing, debits, totalCents: -debits.reduce((sum, d) => sum + d.amount_cents, 0) };
}

/**
 * The transition request an action form describes (empty fields are left out, so the guard's defaults apply).
 * @throws ValidationError on `resumeTo` when a resolve names neither submitted nor pending.
 */
export function requestFor(action: OrderAction, body: unknown): TransitionRequest {
  const opt = (name: string) => field(body, name) || undefined;
  switch (action) {
    case 'pending':
      return { filingStatus: 'pending' };
    case 'filed':
      return { filingStatus: 'filed', filingDate: opt('filingDate'), ein: opt('ein') };
    case 'exception':
      return {
        filingStatus: 'exception',
        exceptionCode: opt('exceptionCode'),
        exceptionMessage: opt('exceptionMessage'),
      };
    case 'resolve': {
      const to = field(body, 'resumeTo');
      if (to !== 'submitted' && to !== 'pending')
        throw new ValidationError([{ field: 'resumeTo', message: 'must be submitted or pending' }]);
      return { filingStatus: to };
    }
    case 'cancel':
      return { filingStatus: 'cancelled' };
  }
}

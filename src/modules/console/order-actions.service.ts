import type { Db } from '../../lib/db.js';
import { notFound } from '../../lib/errors.js';
import { findOrderDetail, findOrderLedger, type OrderDetailRow } from '../filings/filings.repo.js';

/** The order an action form names, every column with what the confirmation page shows. @throws AppError not_found. */
export async function loadActionOrder(db: Db, orderId: string): Promise<OrderDetailRow> {
  const order = await findOrderDetail(db, orderId);
  if (!order) throw notFound('order', orderId);
  return order;
}

/**
 * What cancelling will give back: the order's debits not yet reversed (the same set the ledger's
 * reverseOrderDebits reverses) and their total, in cents. Only balance-billed orders are reversed (rule 3).
 */
export async function reversalPreview(db: Db, order: Pick<OrderDetailRow, 'id' | 'billing'>) {
  const ledger = await findOrderLedger(db, order.id);
  const reversed = new Set(ledger.map((e) => e.reverses_entry_id).filter(Boolean));
  const debits = order.billing === 'balance' ? ledger.filter((e) => e.type === 'debit' && !reversed.has(e.id)) : [];
  return { billing: order.billing, debits, totalCents: -debits.reduce((sum, d) => sum + d.amount_cents, 0) };
}

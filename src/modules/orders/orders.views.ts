import { centsToDollars } from '../../lib/money.js';
import { withFields } from '../../lib/objects.js';
import type { OrderItem, Quote } from './orders.service.js';

/*
 * The orders module's presenters: the API edge where integer cents become the public dollar shapes (API-5).
 */

/** A placed order item (cents in) as POST /orders answers it (ORD-4): `amount` in dollars. */
export function orderItemView(item: OrderItem) {
  const { amountCents, ...rest } = item;
  return withFields(rest, { amount: centsToDollars(amountCents) });
}

/** A quote (cents in) as POST /orders/quote answers it (ORD-9): line amounts and total in dollars. */
export function quoteView(q: Quote) {
  return {
    companyId: q.companyId,
    filingState: q.filingState,
    lines: q.lines.map((l) => ({
      orderType: l.orderType,
      type: l.type,
      description: l.description,
      amount: centsToDollars(l.amountCents),
      stateFee: l.stateFee,
    })),
    total: centsToDollars(q.totalCents),
  };
}

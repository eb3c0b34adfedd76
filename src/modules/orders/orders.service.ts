/*
 * The orders module's public interface (the ORD rules): place a request (POST /orders, dashboard checkout) and
 * quote it (POST /orders/quote). The work is split by role: order-rules.ts (request rules, no database, run once
 * per request by checkedOrderBody), order-checks.ts (database rules), order-pricing.ts (priced lines, quote),
 * order-placement.ts (the one transaction that writes orders, debits, history and events).
 */
export {
  placeOrder,
  placeOrderInTx,
  recordPlacement,
  type OrderItem,
} from './order-placement.js';
export { changeOrderStatus } from './order-status.js';
export {
  planOrder,
  quoteOrder,
  type PlanRequest,
  type PricedLine,
  type Quote,
} from './order-pricing.js';
export { checkedOrderBody, type CheckedOrderBody } from './order-rules.js';
export { checkOrderFacts, type OrderFacts } from './order-checks.js';

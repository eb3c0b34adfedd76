import { centsToDollars } from '../../lib/money.js';
import type { LedgerEntryRow } from './billing.repo.js';
import type { ProductType, TenantPrice } from './pricing.js';

/*
 * Billing's presenters: the API edge where integer cents become the public dollar shapes (API-5). Services and
 * domain code hand cents here; routes, the console, the CLI and error/event builders call these.
 */

/** A ledger entry (cents in) as the API shows it (GET /balance-transactions): amounts in dollars, debits negative. */
export function balanceTransactionView(e: LedgerEntryRow) {
  return {
    id: e.id,
    object: 'balance_transaction' as const,
    type: e.type,
    amount: centsToDollars(e.amount_cents),
    balanceAfter: centsToDollars(e.balance_after_cents),
    lineType: e.line_type,
    description: e.description,
    orderId: e.order_id,
    reversesTransactionId: e.reverses_entry_id,
    createdAt: e.created_at.toISOString(),
  };
}

/** A ledger entry as the API shows it (balanceTransactionView): amounts in dollars, timestamps ISO 8601. */
export type BalanceTransaction = ReturnType<typeof balanceTransactionView>;

/** The 402 insufficient_balance extras (BILL-3): cents in (cost and balance), dollars out, with the shortfall. */
export function insufficientBalanceDetails(totalCents: number, balanceCents: number) {
  return {
    requiredAmount: centsToDollars(totalCents),
    balance: centsToDollars(balanceCents),
    shortfallAmount: centsToDollars(totalCents - balanceCents),
  };
}

/** A Price row (PRICE-2): dollars, retailAmount null until set. */
export interface PriceRowView {
  type: ProductType;
  name: string;
  description: string;
  defaultAmount: number;
  retailAmount: number | null;
  wholesaleAmount: number;
  enabled: boolean;
}

/** A tenant's price (cents in) as the API's Price row (dollars out). */
export function priceRowView(p: TenantPrice): PriceRowView {
  return {
    type: p.type,
    name: p.name,
    description: p.description,
    defaultAmount: centsToDollars(p.defaultCents),
    retailAmount: p.retailCents === null ? null : centsToDollars(p.retailCents),
    wholesaleAmount: centsToDollars(p.wholesaleCents),
    enabled: p.enabled,
  };
}

/** The price_below_floor error extras (PRICE-4): the floor in cents in, `minimumAmount` in dollars out. */
export function priceBelowFloorDetails(floorCents: number) {
  return { minimumAmount: centsToDollars(floorCents) };
}

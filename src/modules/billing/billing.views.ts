import type { Environment } from '../../context.js';
import { csvText } from '../../lib/csv.js';
import { centsToDecimalString, centsToDollars } from '../../lib/money.js';
import type { CatalogRow, LedgerEntryRow } from './billing.repo.js';
import { FEE_COLUMNS, FEE_FIELDS, type FeeField } from './fee-fields.js';
import type { ProductType, StateFeeRow, TenantPrice } from './pricing.js';
import { withFields } from '../../lib/objects.js';

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
    reference: e.reference ?? null,
    createdAt: e.created_at.toISOString(),
  };
}

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

/** Operator view of a catalogue row (cents in, dollars out). */
export function catalogView(c: CatalogRow) {
  return {
    type: c.type,
    name: c.name,
    description: c.description,
    defaultAmount: centsToDollars(c.default_amount_cents),
    wholesaleAmount: centsToDollars(c.wholesale_amount_cents),
    updatedAt: c.updated_at.toISOString(),
  };
}

/** A retail price raised by PRICE-7: `retail_amount_cents` in, `retailAmount` in dollars out. */
export function raisedPriceView(r: { organization_id: string; environment: Environment; retail_amount_cents: number }) {
  return {
    organizationId: r.organization_id,
    environment: r.environment,
    retailAmount: centsToDollars(r.retail_amount_cents),
  };
}

/** A catalogue price change (cents in): the row and the retail prices it raised, in dollars. */
export function catalogChangeView(change: {
  price: CatalogRow;
  retailPricesRaised: Array<Parameters<typeof raisedPriceView>[0]>;
}) {
  return { price: catalogView(change.price), retailPricesRaised: change.retailPricesRaised.map(raisedPriceView) };
}

/** One organization's wholesale price of one type (cents in), in dollars; `overridden` false means the default. */
export function orgWholesaleView(w: {
  organizationId: string;
  type: ProductType;
  wholesaleCents: number;
  defaultWholesaleCents: number;
  overridden: boolean;
}) {
  return {
    organizationId: w.organizationId,
    type: w.type,
    wholesaleAmount: centsToDollars(w.wholesaleCents),
    defaultWholesaleAmount: centsToDollars(w.defaultWholesaleCents),
    overridden: w.overridden,
  };
}

/** An organization wholesale change (cents in): the new wholesale view and the retail prices raised, in dollars. */
export function orgWholesaleChangeView(
  change: Parameters<typeof orgWholesaleView>[0] & {
    retailPricesRaised: Array<Parameters<typeof raisedPriceView>[0]>;
  },
) {
  return withFields(orgWholesaleView(change), { retailPricesRaised: change.retailPricesRaised.map(raisedPriceView) });
}

/** The 400 message for a list price below the wholesale price (PRICE-7): the wholesale in cents, quoted in dollars. */
export function belowWholesaleMessage(wholesaleCents: number): string {
  return `must be at least the wholesale price (${centsToDollars(wholesaleCents)} dollars)`;
}

/** Operator view of a state fee schedule row (BILL-16): fees cents in, dollars out, plus provenance. */
export function stateFeeView(r: StateFeeRow) {
  const fees = Object.fromEntries(
    FEE_FIELDS.map((f) => {
      const cents = r[FEE_COLUMNS[f]];
      return [f, cents === null ? null : centsToDollars(cents)];
    }),
  ) as Record<FeeField, number | null>;
  return {
    state: r.state,
    name: r.name,
    ...fees,
    source: r.source,
    updatedAt: r.updated_at.toISOString(),
    updatedBy: r.updated_by,
  };
}

/** One fee change of a schedule's history (BILL-16): from/to cents in (null: not available), dollars out. */
export function stateFeeChange(fromCents: number | null, toCents: number | null) {
  const dollars = (cents: number | null) => (cents === null ? null : centsToDollars(cents));
  return { from: dollars(fromCents), to: dollars(toCents) };
}

/** The header of the ledger's CSV export (PORTAL-34), in the order of {@link ledgerCsvLine}'s fields. */
export const LEDGER_CSV_HEADER =
  'id,createdAt,type,lineType,description,orderId,reversesTransactionId,amount,balanceAfter,currency\r\n';

/**
 * A ledger entry (cents in) as one CSV line of the export (PORTAL-34): the API's fields (balanceTransactionView),
 * amounts in dollars with two decimals ("-110.00"), RFC 4180 quoting, CRLF. A text cell that a spreadsheet would run
 * as a formula (=, +, -, @, tab, CR first) is prefixed with an apostrophe.
 */
export function ledgerCsvLine(e: LedgerEntryRow): string {
  return `${[
    e.id,
    e.created_at.toISOString(),
    e.type,
    csvText(e.line_type),
    csvText(e.description),
    e.order_id ?? '',
    e.reverses_entry_id ?? '',
    centsToDecimalString(Number(e.amount_cents)),
    centsToDecimalString(Number(e.balance_after_cents)),
    'USD',
  ].join(',')}\r\n`;
}

import type { AppContext, Tenant } from '../../context.js';
import { withTransaction, type Db } from '../../lib/db.js';
import { newId } from '../../lib/ids.js';
import { centsToDollars } from '../../lib/money.js';
import { debitOrThrow } from '../billing/ledger.js';
import { insertCompany } from '../companies/companies.service.js';
import { DEFAULT_FISCAL_END_MONTH, type CompanyInput } from '../companies/company-rules.js';
import { emitStatusChanged } from '../filings/filing-events.js';
import { insertStatusHistory } from '../filings/status-history.js';
import { checkOrderFacts } from './order-checks.js';
import { einDetails, planOrder, type OrderPlan, type PricedLine, type PricingOptions } from './order-pricing.js';
import { orderRuleErrors, throwIfRuleErrors } from './order-rules.js';
import * as repo from './orders.repo.js';
import type { OrderBodyInput } from './orders.schemas.js';

/*
 * Placing an order (ARCHITECTURE.md "Request path"; spec "POST /orders", "Billing rules"; issue 3 items 2,
 * 5-7): ONE transaction that locks the company (existing company), re-runs the database rules, prices the
 * request, writes the order group, the company (formation), the orders, a `submitted` status-history row and
 * a filing.status_changed event (with its webhook deliveries) per order, and finally locks the balance, checks
 * the whole total and writes one ledger debit per priced line. A 402 rolls everything back: nothing is written.
 */

/** How an order is placed. API orders: `{source: 'api', billing: 'balance'}`. */
export interface PlaceOrderOptions extends PricingOptions {
  source: 'api' | 'dashboard';
  billing: 'balance' | 'checkout';
  /** Status-history actor and ledger `created_by`; default: the source. */
  actor?: string;
  /** Checkout only (alias of retailCentsByType): retail cents per product type. */
  checkout?: { retailCentsByType?: PricingOptions['retailCentsByType'] };
  /**
   * The request's Idempotency-Key. It is stored on the order group in this transaction, so a retry that takes over
   * a key whose first request died after committing gets that request's orders back instead of placing them again.
   */
  idempotencyKey?: string;
}

/** One order item of the response (spec "Order item" plus filingType, filingState, amount in dollars). */
export interface OrderItemView {
  orderId: string;
  orderType: string;
  filingStatus: string;
  filingDate: string | null;
  subscriptionStatus: string | null;
  createdAt: string;
  filingType: string | null;
  filingState: string;
  amount: number;
}

/** The result of placing a request. */
export interface PlacedOrder {
  /** false when nothing was created (a request that was only a registered-agent no-op). */
  created: boolean;
  /** The order group written (null when nothing was created); payments reference it. */
  groupId: string | null;
  companyId: string;
  items: OrderItemView[];
  /** What this request charged, cents (balance debits or checkout total). */
  totalCents: number;
}

/**
 * Places a POST /orders request (or a dashboard order) in its own transaction.
 * @throws ValidationError (400) for any request rule; 400/403/409 from the database rules (see checkOrderFacts);
 * AppError insufficient_balance (402) when balance-billed and the balance cannot cover the whole request.
 */
export async function placeOrder(ctx: AppContext, tenant: Tenant, body: OrderBodyInput, options: PlaceOrderOptions): Promise<PlacedOrder> {
  throwIfRuleErrors(orderRuleErrors(body));
  return withTransaction(ctx.pool, (tx) => placeOrderInTx(tx, tenant, body, options));
}

/**
 * The same inside the caller's transaction (the dashboard records its checkout payment in the same one).
 * Does NOT re-run the pure request rules: call {@link orderRuleErrors} first (placeOrder does).
 * @throws as placeOrder, except the request rules: the database rules (checkOrderFacts), insufficient_balance (402).
 */
export async function placeOrderInTx(tx: Db, tenant: Tenant, body: OrderBodyInput, options: PlaceOrderOptions): Promise<PlacedOrder> {
  if (options.idempotencyKey) {
    const earlier = await repo.findGroupByIdempotencyKey(tx, tenant, options.idempotencyKey);
    if (earlier) return { created: true, groupId: earlier.id, companyId: earlier.company_id, items: earlier.orders.map(toItemView), totalCents: earlier.total_cents };
  }
  const pricing: PricingOptions = { ...options, retailCentsByType: options.retailCentsByType ?? options.checkout?.retailCentsByType };
  const facts = await checkOrderFacts(tx, tenant, body, true);
  const plan = await planOrder(tx, tenant, body, facts, { ...pricing, billing: options.billing });
  const actor = options.actor ?? options.source;
  const fresh = plan.items.filter((i) => !i.existing);
  if (!fresh.length) {
    return { created: false, groupId: null, companyId: facts.companyId!, items: plan.items.map((i) => toItemView(i.existing!)), totalCents: 0 };
  }
  const companyId = facts.companyId ?? (await insertCompany(tx, tenant, formationCompany(body), body.userId)).id;
  const groupId = newId('orderGroup');
  await repo.insertOrderGroup(tx, tenant, {
    id: groupId, userId: body.userId, companyId, filingState: body.filingState, source: options.source,
    billing: options.billing, request: storedRequest(body), totalCents: plan.totalCents, idempotencyKey: options.idempotencyKey,
  });
  const rows = new Map<string, repo.OrderRow>();
  for (const item of plan.items) {
    if (item.existing) continue;
    const lines = plan.lines.filter((l) => l.orderType === item.orderType);
    rows.set(item.orderType, await repo.insertOrder(tx, tenant, {
      id: newId('order'), groupId, companyId, userId: body.userId, orderType: item.orderType, filingState: body.filingState,
      filingType: item.filingType, subscriptionStatus: item.subscriptionStatus, details: item.details, billing: options.billing,
      ...amounts(lines, options.billing),
    }));
  }
  for (const row of rows.values()) {
    await insertStatusHistory(tx, tenant, { orderId: row.id, fromStatus: null, toStatus: 'submitted', actor });
    await emitStatusChanged(tx, tenant, row);
  }
  // Last, so the tenant's balance row stays locked only for the debits and the commit: debitOrThrow locks it,
  // checks the WHOLE total and throws 402 before writing any entry; the rollback then removes everything above
  // (billing rule 2; issue 3 items 5-6).
  if (options.billing === 'balance') await debitLines(tx, tenant, plan, rows, actor);
  return {
    created: true,
    groupId,
    companyId,
    items: plan.items.map((i) => toItemView(i.existing ?? rows.get(i.orderType)!)),
    totalCents: plan.totalCents,
  };
}

/** orders.amount_cents = sum of its lines; checkout orders also record retail and margin (billing rule 10). */
function amounts(lines: PricedLine[], billing: 'balance' | 'checkout') {
  const amountCents = lines.reduce((s, l) => s + l.amountCents, 0);
  if (billing === 'balance') return { amountCents, retailCents: null, marginCents: null };
  const service = lines.filter((l) => !l.stateFee);
  const retailCents = service.reduce((s, l) => s + l.amountCents, 0);
  return { amountCents, retailCents, marginCents: retailCents - service.reduce((s, l) => s + l.wholesaleCents, 0) };
}

/** One append-only debit per priced line of the new orders, linked to its order (billing rules 1, 4-7). */
async function debitLines(tx: Db, tenant: Tenant, plan: OrderPlan, rows: Map<string, repo.OrderRow>, actor: string): Promise<void> {
  const lines = plan.lines
    .filter((l) => rows.has(l.orderType))
    .map((l) => ({ amountCents: l.amountCents, lineType: l.type, description: l.description, orderId: rows.get(l.orderType)!.id }));
  await debitOrThrow(tx, tenant, lines, actor);
}

/** The company a formation creates: formationState from filingState, fiscalEndMonth default December (formation rules 1, 3). */
function formationCompany(body: OrderBodyInput): CompanyInput {
  const { ein: _e, tradeName: _t, formationDate: _d, formationState: _s, ...company } = body.formation!.company;
  return { ...company, fiscalEndMonth: company.fiscalEndMonth ?? DEFAULT_FISCAL_END_MONTH, formationState: body.filingState } as CompanyInput;
}

/** The request as kept on the order group, without the EIN responsible party's full tax id. */
function storedRequest(body: OrderBodyInput): Record<string, unknown> {
  return body.ein ? { ...body, ein: einDetails(body.ein) } : { ...body };
}

/** The API view of an order item. */
export function toItemView(row: repo.OrderRow): OrderItemView {
  return {
    orderId: row.id,
    orderType: row.order_type,
    filingStatus: row.filing_status,
    filingDate: row.filing_date,
    subscriptionStatus: row.subscription_status,
    createdAt: row.created_at.toISOString(),
    filingType: row.filing_type,
    filingState: row.filing_state,
    amount: centsToDollars(row.amount_cents),
  };
}

import type { AppContext, Tenant } from '../../context.js';
import { withTransaction, type Db } from '../../lib/db.js';
import { referencedNotFound } from '../../lib/errors.js';
import { withFields } from '../../lib/objects.js';
import { newId } from '../../lib/ids.js';
import { currentTraceparent } from '../../lib/trace-context.js';
import type { Keyring } from '../../lib/secret-box.js';
import { debitEntries, type DebitLine } from '../billing/ledger.js';
import { loadPriceInputs } from '../billing/price-cache.js';
import { freeCompanySlug, planCompany } from '../companies/companies.service.js';
import { DEFAULT_FISCAL_END_MONTH, type CompanyInput } from '../companies/company-rules.js';
import { eventsWritten } from '../events/events.service.js';
import { notifyDeliveriesDue } from '../webhooks/dispatch.repo.js';
import { statusChangedData } from './filing-events.js';
import { checkOrderFacts, type OrderFacts } from './order-checks.js';
import { einDetails, planOrder, type OrderPlan, type PricedLine, type PricingOptions } from './order-pricing.js';
import type { CheckedOrderBody } from './order-rules.js';
import * as repo from './orders.repo.js';
import type { PlacementOrder, PlacementRows, PlacementWake, PlacementWrite } from './placements.repo.js';
import { writePlacement } from './placement-batcher.js';
import { requestToKeep } from './placed-request.js';
import { sealTaxId } from './ein-tax-ids.js';
import type { OrderBodyInput } from './orders.schemas.js';

/*
 * Placing orders (ORD-13; BILL-1 to BILL-9): everything that can be known before writing is worked out first —
 * request rules, prices and fees (from the process's price cache, BILL-19), ids, amounts, the rows, the events'
 * data and the ledger lines — and then ONE statement writes it all (the database function `place_order_groups_of_tenants`):
 * the company of a formation, the order group, the orders and their status history, the events with their
 * deliveries, and last the debit, which locks the balance, checks the whole total and appends every ledger line,
 * or raises so that nothing is written (402). A formation without an Idempotency-Key is that one statement and
 * nothing else: one round trip, its own transaction. Orders for an existing company first lock the company and
 * check its facts in a transaction, then send the same statement in it.
 *
 * Every order of the service is placed by {@link recordPlacement}: POST /orders, dashboard checkout
 * (placeOrderInTx), certificates of good standing, and the test factories.
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

/** One placed order item (ORD-4: the order item plus filingType, filingState and its amount in cents); orderItemView presents it. */
export interface OrderItem {
  orderId: string;
  orderType: string;
  filingStatus: string;
  filingDate: string | null;
  subscriptionStatus: string | null;
  createdAt: string;
  filingType: string | null;
  filingState: string;
  amountCents: number;
}

/** The result of placing a request. */
export interface PlacedOrder {
  /** false when nothing was created (a request that was only a registered-agent no-op). */
  created: boolean;
  /** The order group written (null when nothing was created); payments reference it. */
  groupId: string | null;
  companyId: string;
  items: OrderItem[];
  /** What this request charged, cents (balance debits or checkout total). */
  totalCents: number;
}

/**
 * Places a POST /orders request (or a dashboard order) in its own transaction (ORD-13). For a formation the
 * user, prices and fees are read in one statement before the transaction; for an existing company prices and
 * fees are, and the company's facts are checked inside it under the company's row lock. The request rules ran
 * where the body came in ({@link CheckedOrderBody}).
 * @throws 400/403/404/409 from the database rules (see checkOrderFacts); AppError insufficient_balance (402) when
 * balance-billed and the balance cannot cover the whole request (nothing is written).
 */
export async function placeOrder(
  ctx: AppContext,
  tenant: Tenant,
  body: CheckedOrderBody,
  options: PlaceOrderOptions,
): Promise<PlacedOrder> {
  const pricing = pricingOf(options);
  const prices = await loadPriceInputs(ctx.pool, ctx.prices, tenant, body.filingState);
  if (body.formation) {
    const plan = await planOrder(ctx.pool, tenant, body, formationFacts(body), pricing, prices);
    // ORD-13, ORD-17: nothing to read first (an earlier group of the Idempotency-Key is found by the statement
    // itself), so the placement is written on the pool, batched with the tenant's other waiting placements.
    return recordPlacement(ctx.pool, tenant, placementOf(body, plan, options, ctx.secrets.dataKeys));
  }
  return withTransaction(ctx.pool, async (tx) => {
    const earlier = await earlierPlacement(tx, tenant, options.idempotencyKey);
    if (earlier) return earlier;
    const facts = await checkOrderFacts(tx, tenant, body, true);
    const plan = await planOrder(tx, tenant, body, facts, pricing, prices);
    return recordPlacement(tx, tenant, placementOf(body, plan, options, ctx.secrets.dataKeys));
  });
}

/**
 * The same inside the caller's transaction (the dashboard records its checkout payment in the same one).
 * `dataKeys` seals an EIN responsible party's tax id (ORD-EIN-6).
 * @throws as placeOrder: the database rules (checkOrderFacts), insufficient_balance (402).
 */
export async function placeOrderInTx(
  tx: Db,
  tenant: Tenant,
  body: CheckedOrderBody,
  options: PlaceOrderOptions,
  dataKeys: Keyring,
): Promise<PlacedOrder> {
  const earlier = await earlierPlacement(tx, tenant, options.idempotencyKey);
  if (earlier) return earlier;
  const facts = await checkOrderFacts(tx, tenant, body, true);
  const plan = await planOrder(tx, tenant, body, facts, pricingOf(options));
  return recordPlacement(tx, tenant, placementOf(body, plan, options, dataKeys));
}

/**
 * A placement worked out in full before writing: the rows, the ledger lines and the response. Built by
 * placeOrder/placeOrderInTx from a priced request, by certificate orders, and by the test factories.
 */
export interface Placement {
  rows: PlacementRows;
  /** Balance billing: one debit per priced line (cents >= 0, orderId set), checked and written together. Empty for checkout. */
  debits: DebitLine[];
  /** Items of the response that already exist (registered-agent no-op), keyed by position in `order`. */
  existing: Map<number, repo.OrderRow>;
  /** The response's item order: an index into rows.orders, or into `existing` (negative: -1 - key). */
  order: number[];
  totalCents: number;
}

/**
 * THE placement writer (ORD-13): writes the placement in one statement (orders.repo insertPlacement: company,
 * group, orders, `submitted` history, one filing.status_changed event per new order with its deliveries, and last
 * the debits) on `db`: the pool (the statement is its own transaction) or the caller's transaction. A formation's
 * slug taken meanwhile is replaced by the next free one and the statement sent again (ORD-15).
 * @returns the placed request. @throws AppError insufficient_balance (402), nothing written (a caller's transaction
 * must roll back, which withTransaction does); not_found (404) naming userId when the user is not the tenant's.
 */
export async function recordPlacement(db: Db, tenant: Tenant, p: Placement): Promise<PlacedOrder> {
  const companyId = p.rows.group.companyId;
  if (!p.rows.orders.length) {
    return {
      created: false,
      groupId: null,
      companyId,
      items: p.order.map((i) => toItemView(p.existing.get(-1 - i)!)),
      totalCents: 0,
    };
  }
  const write = placementWrite(p);
  let result = await writePlacement(db, tenant, write);
  // ORD-15: the kebab-case name is tried first (no read); when taken, the next free suffix is read and used.
  for (let attempt = 0; result.outcome === 'slug_taken' && write.rows.company && attempt < 20; attempt++) {
    const slug = await freeCompanySlug(db, tenant, write.rows.company.columns.legal_name);
    write.rows = withFields(write.rows, { company: withFields(write.rows.company, { slug }) });
    result = await writePlacement(db, tenant, write);
  }
  if (result.outcome === 'unknown_user') throw unknownUser(p.rows.group.userId);
  if (result.outcome === 'earlier') {
    const earlier = await earlierPlacement(db, tenant, p.rows.group.idempotencyKey ?? undefined);
    if (earlier) return earlier;
    throw new Error(`the order group of Idempotency-Key '${p.rows.group.idempotencyKey}' was not found again`);
  }
  if (result.outcome !== 'placed')
    throw new Error(`could not find a free slug for '${p.rows.company?.columns.legal_name}'`);
  wakeListeners(db, tenant, result.wake);
  const created = result.createdAt;
  return {
    created: true,
    groupId: p.rows.group.id,
    companyId,
    items: p.order.map((i) => (i >= 0 ? placedItem(p.rows.orders[i]!, created) : toItemView(p.existing.get(-1 - i)!))),
    totalCents: p.totalCents,
  };
}

/**
 * Wakes, once the placement has committed, only what its statement said its commit concerns (OPS-6): the event
 * streams, and the dispatchers with them, when a stream of the tenant is open; else the dispatchers alone when it
 * wrote webhook deliveries; else nobody, as nobody would find anything.
 */
function wakeListeners(db: Db, tenant: Tenant, wake: PlacementWake): void {
  if (wake.streams) eventsWritten(db, tenant);
  else if (wake.deliveries) notifyDeliveriesDue(db);
}

/** The statement's input: the rows plus their history, events and ledger lines, all with ids made here. */
function placementWrite(p: Placement): PlacementWrite {
  // OPS-31: the request's trace context rides with its events (the batch statement runs outside the request).
  const traceparent = currentTraceparent() ?? undefined;
  const events = p.rows.orders.map((o) => ({
    traceparent,
    id: newId('event'),
    type: 'filing.status_changed',
    data: statusChangedData({
      id: o.id,
      company_id: o.company_id,
      order_type: o.order_type,
      filing_type: o.filing_type,
      subscription_status: o.subscription_status,
      filing_status: 'submitted',
      filing_date: null,
      exception_code: null,
      exception_message: null,
    }),
  }));
  return {
    rows: p.rows,
    historyIds: p.rows.orders.map(() => newId('statusChange')),
    events,
    debits: p.rows.group.billing === 'balance' ? debitEntries(p.debits, p.rows.actor) : [],
    minBalanceCents: p.debits.reduce((sum, d) => sum + d.amountCents, 0),
  };
}

/** The response item of an order the statement wrote (filing status submitted, created at the transaction's time). */
function placedItem(o: PlacementOrder, createdAt: Date): OrderItem {
  return {
    orderId: o.id,
    orderType: o.order_type,
    filingStatus: 'submitted',
    filingDate: null,
    subscriptionStatus: o.subscription_status,
    createdAt: createdAt.toISOString(),
    filingType: o.filing_type,
    filingState: o.filing_state,
    amountCents: o.amount_cents,
  };
}

/** The earlier request's orders when its Idempotency-Key placed a group already, else null. */
async function earlierPlacement(tx: Db, tenant: Tenant, idempotencyKey?: string): Promise<PlacedOrder | null> {
  if (!idempotencyKey) return null;
  const earlier = await repo.findGroupByIdempotencyKey(tx, tenant, idempotencyKey);
  return earlier
    ? {
        created: true,
        groupId: earlier.id,
        companyId: earlier.company_id,
        items: earlier.orders.map(toItemView),
        totalCents: earlier.total_cents,
      }
    : null;
}

function pricingOf(options: PlaceOrderOptions): PricingOptions {
  return withFields(options, {
    retailCentsByType: options.retailCentsByType ?? options.checkout?.retailCentsByType,
    billing: options.billing,
  });
}

/** A formation's facts need no read: the company does not exist yet (ORD-FORM-1, ORD-FORM-3). */
function formationFacts(body: OrderBodyInput): OrderFacts {
  return {
    companyId: null,
    entityType: body.formation!.company.entityType,
    formationState: body.filingState,
    activeAgent: null,
  };
}

function unknownUser(userId: string) {
  return referencedNotFound([{ field: 'userId', message: `no user '${userId}' exists in this environment` }]);
}

/**
 * The rows, debits and response order of a priced request. An EIN order's tax id is sealed here, where its order id
 * is made, and travels to the placement statement only sealed (ORD-EIN-6).
 */
function placementOf(body: OrderBodyInput, plan: OrderPlan, options: PlaceOrderOptions, dataKeys: Keyring): Placement {
  const actor = options.actor ?? options.source;
  const company = plan.facts.companyId ? null : planCompany(formationCompany(body));
  const companyId = plan.facts.companyId ?? company!.id;
  const groupId = newId('orderGroup');
  const orders: PlacementOrder[] = [];
  const debits: DebitLine[] = [];
  const existing = new Map<number, repo.OrderRow>();
  const order: number[] = [];
  for (const item of plan.items) {
    if (item.existing) {
      existing.set(existing.size, item.existing);
      order.push(-existing.size);
      continue;
    }
    const lines = plan.lines.filter((l) => l.orderType === item.orderType);
    const id = newId('order');
    orders.push({
      id,
      company_id: companyId,
      user_id: body.userId,
      order_type: item.orderType,
      filing_state: body.filingState,
      filing_type: item.filingType,
      subscription_status: item.subscriptionStatus,
      details: item.details,
      billing: options.billing,
      ...amounts(lines, options.billing),
      tax_id_sealed:
        item.orderType === 'ein' && body.ein ? sealTaxId(dataKeys, id, body.ein.responsibleParty.taxId) : null,
    });
    order.push(orders.length - 1);
    if (options.billing === 'balance') {
      for (const l of lines)
        debits.push({ amountCents: l.amountCents, lineType: l.type, description: l.description, orderId: id });
    }
  }
  return {
    rows: {
      company: company ? withFields(company, { adminUserId: body.userId }) : null,
      group: {
        id: groupId,
        userId: body.userId,
        companyId,
        filingState: body.filingState,
        source: options.source,
        billing: options.billing,
        request: requestToKeep(
          storedRequest(body),
          { userId: body.userId, filingState: body.filingState, companyId, formsCompany: company !== null },
          orders.map((o) => ({ orderType: o.order_type, details: o.details })),
        ),
        totalCents: plan.totalCents,
        idempotencyKey: options.idempotencyKey,
      },
      orders,
      actor,
    },
    debits,
    existing,
    order,
    totalCents: orders.length ? plan.totalCents : 0,
  };
}

/** orders.amount_cents = sum of its lines; checkout orders also record retail and margin (BILL-12). */
function amounts(lines: PricedLine[], billing: 'balance' | 'checkout') {
  const amount_cents = lines.reduce((s, l) => s + l.amountCents, 0);
  if (billing === 'balance') return { amount_cents, retail_cents: null, margin_cents: null };
  const service = lines.filter((l) => !l.stateFee);
  const retail = service.reduce((s, l) => s + l.amountCents, 0);
  return {
    amount_cents,
    retail_cents: retail,
    margin_cents: retail - service.reduce((s, l) => s + l.wholesaleCents, 0),
  };
}

/** The company a formation creates: formationState from filingState, fiscalEndMonth default December (ORD-FORM-2). */
function formationCompany(body: OrderBodyInput): CompanyInput {
  const { ein: _e, tradeName: _t, formationDate: _d, formationState: _s, ...company } = body.formation!.company;
  return {
    ...company,
    fiscalEndMonth: company.fiscalEndMonth ?? DEFAULT_FISCAL_END_MONTH,
    formationState: body.filingState,
  } as CompanyInput;
}

/** The request as kept on the order group, without the EIN responsible party's full tax id (ORD-EIN-6). */
function storedRequest(body: OrderBodyInput): Record<string, unknown> {
  return body.ein ? withFields(body, { ein: einDetails(body.ein) }) : { ...body };
}

/** An order row as a placed order item (cents). */
export function toItemView(row: repo.OrderRow): OrderItem {
  return {
    orderId: row.id,
    orderType: row.order_type,
    filingStatus: row.filing_status,
    filingDate: row.filing_date,
    subscriptionStatus: row.subscription_status,
    createdAt: row.created_at.toISOString(),
    filingType: row.filing_type,
    filingState: row.filing_state,
    amountCents: row.amount_cents,
  };
}

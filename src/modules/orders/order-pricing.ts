import type { Tenant } from '../../context.js';
import type { Db } from '../../lib/db.js';
import { ValidationError } from '../../lib/errors.js';
import { withFields } from '../../lib/objects.js';
import type { PriceCache, PriceInputs } from '../billing/price-cache.js';
import {
  findStateFees,
  loadTenantPriceMap,
  pickStateFee,
  type ProductType,
  type StateFeeKind,
  type StateFeeRow,
  type TenantPrice,
} from '../billing/pricing.js';
import { checkOrderFacts, type OrderFacts } from './order-checks.js';
import type { CheckedOrderBody } from './order-rules.js';
import type { OrderRow } from './orders.repo.js';
import type { OrderType } from './orders.schemas.js';

/*
 * Prices a POST /orders request line by line (BILL-1 to BILL-11, BILL-16; ORD-9 for quotes):
 *  - formation alone: formation_tier_1 + the filingState's LLC or corporation formation fee;
 *  - formation + ein: formation_tier_2, and the EIN line is 0 (BILL-5); a later ein: ein (BILL-5);
 *  - expedited formation: the expedited state fee INSTEAD of the standard fee, plus expedited_formation (ORD-FORM-5,
 * BILL-9);
 *  - registered_agent: its price, no state fee (BILL-6); a no-op (active service on file) costs 0 (ORD-RA-4);
 *  - foreign_qualification: its price + the state's foreign fee for the company's entity type (BILL-7);
 *  - annual_report: its price + the state's report fee for the company's entity type (BILL-8).
 * Balance billing charges wholesale (BILL-1); in-app checkout charges retail, with state fees as their own
 * lines (BILL-10, BILL-11). Amounts are integer cents.
 */

/** Billing options of a quote or placement (dashboard only; API orders are always balance-billed at tier 1/2). */
export interface PricingOptions {
  /** balance (default): wholesale, debited from the prepaid balance. checkout: retail, paid by the customer. */
  billing?: 'balance' | 'checkout';
  /** Dashboard formation package. Default: 2 when ein is in the request, else 1. Tiers 2-3 need ein; tier 3 adds a DBA order. */
  formationTier?: 1 | 2 | 3;
  /** Tier 3 only: the trade name of the DBA filing. */
  dbaName?: string;
  /** Checkout only: retail cents per product type, overriding the tenant's retail/list prices. */
  retailCentsByType?: Partial<Record<ProductType, number>>;
}

/** One priced line. `amountCents` is what is charged; `wholesaleCents` is the wholesale part (= amount for state fees). */
export interface PricedLine {
  orderType: OrderType;
  /** Product type of the catalogue, or state_fee. */
  type: ProductType | 'state_fee';
  description: string;
  amountCents: number;
  wholesaleCents: number;
  stateFee: boolean;
}

/** One order item of the request. `existing` is set for a registered-agent no-op (nothing is created or charged). */
interface PlannedItem {
  orderType: OrderType;
  filingType: string | null;
  subscriptionStatus: 'active' | null;
  /** The product object as stored on the order (the EIN tax id reduced to its last four digits). */
  details: Record<string, unknown>;
  existing: OrderRow | null;
}

/** A checked and priced request, ready to place. */
export interface OrderPlan {
  facts: OrderFacts;
  items: PlannedItem[];
  lines: PricedLine[];
  /** Sum of all lines, cents. */
  totalCents: number;
  billing: 'balance' | 'checkout';
}

/** The tenant's prices (cents) and the filingState's fee row (null: the state has no schedule). */
export type { PriceInputs };

/** One priced line of a quote, in cents. */
interface QuoteLine {
  orderType: string;
  type: string;
  description: string;
  amountCents: number;
  stateFee: boolean;
}

/** A POST /orders/quote result in cents; quoteView presents it in dollars at the API edge. */
export interface Quote {
  companyId: string | null;
  filingState: string;
  lines: QuoteLine[];
  totalCents: number;
}

/**
 * Checks and prices a request without writing anything (POST /orders/quote, ORD-9). `cache`: the process's prices. The
 * body passed the same request rules as an order's, and the same database rules run here, so a quote fails exactly
 * where the order would (400/403/409), except the balance (402).
 * @returns priced lines and total in cents. @throws as {@link checkOrderFacts}.
 */
export async function quoteOrder(
  db: Db,
  tenant: Tenant,
  body: CheckedOrderBody,
  options: PricingOptions = {},
  cache?: PriceCache,
): Promise<Quote> {
  const facts = await checkOrderFacts(db, tenant, body);
  const plan = await planOrder(
    db,
    tenant,
    body,
    facts,
    options,
    cache ? await cache.inputs(tenant, body.filingState) : undefined,
  );
  return {
    companyId: facts.companyId,
    filingState: body.filingState,
    lines: plan.lines.map((l) => ({
      orderType: l.orderType,
      type: l.type,
      description: l.description,
      amountCents: l.amountCents,
      stateFee: l.stateFee,
    })),
    totalCents: plan.totalCents,
  };
}

/**
 * What {@link planOrder} reads of a request: the filing state and the product objects. It prices the products present
 * and keeps each object (extra fields included) as its order's details. A checked request body is one; the
 * dashboard's price preview builds one from the form's options.
 */
export interface PlanRequest {
  filingState: string;
  formation?: { expedited?: boolean };
  ein?: { responsibleParty: { taxId: string } };
  annualReport?: { filingYear?: number; years?: number };
  registeredAgent?: { isChangeOfAgent: boolean };
  foreignQualification?: true | { registeredAgent?: object };
}

/**
 * Builds the items and priced lines of a request whose rules and facts were checked. `loaded`: the tenant's
 * prices and the filingState's fees when the caller read them already (placement reads them with the user).
 * @throws ValidationError for an inconsistent formationTier option, or a filingState without a fee schedule.
 */
export async function planOrder(
  db: Db,
  tenant: Tenant,
  body: PlanRequest,
  facts: OrderFacts,
  options: PricingOptions = {},
  loaded?: PriceInputs,
): Promise<OrderPlan> {
  const billing = options.billing ?? 'balance';
  const [prices, fees] = loaded
    ? [loaded.prices, loaded.fees]
    : await Promise.all([loadTenantPriceMap(db, tenant), findStateFees(db, body.filingState)]);
  if (!fees)
    throw new ValidationError([{ field: 'filingState', message: `has no state fee schedule: '${body.filingState}'` }]);
  const p = new LinePricer(prices, fees, facts, billing, options.retailCentsByType ?? {});
  const state = body.filingState;
  const items: PlannedItem[] = [];
  const item = (orderType: OrderType, details: Record<string, unknown>, extra: Partial<PlannedItem> = {}) =>
    items.push({ orderType, details, filingType: null, subscriptionStatus: null, existing: null, ...extra });

  if (body.formation) {
    const tier = formationTier(body, options);
    const f = body.formation;
    p.service(
      'formation',
      `formation_tier_${tier}` as ProductType,
      `Formation package tier ${tier}: ${facts.entityType} in ${state}`,
    );
    if (f.expedited) {
      p.service('formation', 'expedited_formation', `Expedited formation service charge (${state})`);
      p.fee(
        'formation',
        'expedited_formation',
        `${state} expedited formation state fee (${facts.entityType}; replaces the standard fee)`,
      );
    } else {
      p.fee('formation', 'formation', `${state} state formation fee (${facts.entityType})`);
    }
    item('formation', withFields(f, { expedited: f.expedited ?? false, formationTier: tier }));
    if (tier === 3) item('dba', { tradeName: options.dbaName, includedIn: 'formation_tier_3' });
  }
  if (body.ein) {
    if (body.formation)
      p.included('ein', 'ein', `EIN (included in formation package tier ${formationTier(body, options)})`);
    else p.service('ein', 'ein', 'EIN application (IRS Form SS-4)');
    item('ein', einDetails(body.ein));
  }
  if (body.annualReport) {
    const ar = withFields(body.annualReport, {
      filingYear: body.annualReport.filingYear ?? new Date().getUTCFullYear(),
    });
    // CAL-35: an order covering several consecutive years is priced per year (service and state fee each year).
    const years = body.annualReport.years ?? 1;
    for (let i = 0; i < years; i++) {
      const year = ar.filingYear + i;
      p.service('annual_report', 'annual_report', `Annual report ${year} (${state})`);
      p.fee(
        'annual_report',
        'annual_report',
        `${state} annual report state fee (${facts.entityType})${years > 1 ? ` ${year}` : ''}`,
      );
    }
    item('annual_report', ar, { subscriptionStatus: 'active' });
  }
  if (body.registeredAgent) {
    const ra = body.registeredAgent;
    if (facts.activeAgent) {
      p.included(
        'registered_agent',
        'registered_agent',
        `Registered agent service in ${state} is already active (order ${facts.activeAgent.id}): no-op, no charge (registeredAgent rule 4)`,
      );
      item('registered_agent', facts.activeAgent.details, { existing: facts.activeAgent });
    } else {
      // ORD-RA-1: ordered with a formation it is always a new appointment, whatever isChangeOfAgent
      // says; a company being formed has no current agent to replace.
      const changeOfAgent = ra.isChangeOfAgent && !body.formation;
      p.service(
        'registered_agent',
        'registered_agent',
        `Registered agent service in ${state}, 1 year${changeOfAgent ? ' (change of agent)' : ''}`,
      );
      item('registered_agent', withFields(ra, { isChangeOfAgent: changeOfAgent }), {
        subscriptionStatus: 'active',
        filingType: changeOfAgent ? 'change_of_agent' : null,
      });
    }
  }
  if (body.foreignQualification) {
    const fq = body.foreignQualification === true ? {} : body.foreignQualification;
    p.service('foreign_qualification', 'foreign_qualification', `Foreign qualification in ${state}`);
    p.fee(
      'foreign_qualification',
      'foreign_qualification',
      `${state} foreign qualification state fee (${facts.entityType})`,
    );
    const agentSource = fq.registeredAgent
      ? 'supplied'
      : body.registeredAgent && !facts.activeAgent
        ? 'ordered'
        : 'on_file';
    item('foreign_qualification', withFields(fq, { agentSource }));
  }
  return { facts, items, lines: p.lines, totalCents: p.lines.reduce((s, l) => s + l.amountCents, 0), billing };
}

/** BILL-5, ORD-FORM-7 (and the dashboard packages, DASH-4): tier 2 when ein is ordered with the formation. */
function formationTier(body: PlanRequest, options: PricingOptions): 1 | 2 | 3 {
  const tier = options.formationTier ?? (body.ein ? 2 : 1);
  if (tier >= 2 && !body.ein)
    throw new ValidationError([
      {
        field: 'ein',
        message: `is required for formation package tier ${tier}, which includes an EIN (billing rule 4)`,
      },
    ]);
  if (tier === 1 && body.ein)
    throw new ValidationError([
      {
        field: 'ein',
        message: 'is not part of formation package tier 1; formation with ein is tier 2 (billing rule 4)',
      },
    ]);
  if (tier === 3 && !options.dbaName?.trim())
    throw new ValidationError([
      { field: 'dbaName', message: 'is required for formation package tier 3, which includes a DBA filing' },
    ]);
  return tier;
}

/**
 * The ein object as stored on the order: the tax id is kept there only as its last four digits (ORD-EIN-6; the whole
 * number is sealed apart, ein-tax-ids.ts).
 */
export function einDetails(ein: NonNullable<PlanRequest['ein']>): Record<string, unknown> {
  return withFields(ein, { responsibleParty: storedResponsibleParty(ein.responsibleParty) });
}

/** The responsible party as every view shows it (ORD-EIN-6): without `taxId`, with `taxIdLast4`. */
export function storedResponsibleParty(party: { taxId: string }): Record<string, unknown> {
  const { taxId, ...rest } = party;
  return withFields(rest, { taxIdLast4: taxId.replace(/-/g, '').slice(-4) });
}

/** Accumulates lines at wholesale (balance) or retail (checkout). */
class LinePricer {
  readonly lines: PricedLine[] = [];
  constructor(
    private readonly prices: Record<ProductType, TenantPrice>,
    private readonly fees: StateFeeRow,
    private readonly facts: OrderFacts,
    private readonly billing: 'balance' | 'checkout',
    private readonly retailOverrides: Partial<Record<ProductType, number>>,
  ) {}

  service(orderType: OrderType, type: ProductType, description: string): void {
    const price = this.prices[type];
    if (!price) throw new Error(`price catalogue has no '${type}' row`);
    const retail = this.retailOverrides[type] ?? price.effectiveRetailCents;
    this.lines.push({
      orderType,
      type,
      description,
      amountCents: this.billing === 'checkout' ? retail : price.wholesaleCents,
      wholesaleCents: price.wholesaleCents,
      stateFee: false,
    });
  }

  /** A line that owes nothing (EIN in tier 2, registered-agent no-op), kept so the quote explains it. */
  included(orderType: OrderType, type: ProductType, description: string): void {
    this.lines.push({ orderType, type, description, amountCents: 0, wholesaleCents: 0, stateFee: false });
  }

  fee(orderType: OrderType, kind: StateFeeKind, description: string): void {
    const cents = pickStateFee(this.fees, kind, this.facts.entityType);
    this.lines.push({
      orderType,
      type: 'state_fee',
      description,
      amountCents: cents,
      wholesaleCents: cents,
      stateFee: true,
    });
  }
}

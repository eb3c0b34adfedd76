import { randomUUID } from 'node:crypto';
import type { AppContext, Tenant } from '../../context.js';
import { rollbackToSavepoint, savepoint, withTransaction, type Db } from '../../lib/db.js';
import { AppError, ValidationError, type FieldError } from '../../lib/errors.js';
import { loadTenantPriceMap, type ProductType, type TenantPrice } from '../billing/pricing.js';
import type { OrganizationRow } from '../organizations/organizations.repo.js';
import { findActiveRegisteredAgent, findEinOrder, findPaidQualification } from '../orders/orders.repo.js';
import {
  checkedOrderBody,
  checkOrderFacts,
  planOrder,
  type CheckedOrderBody,
  type OrderFacts,
  type PlanRequest,
  type PricedLine,
} from '../orders/orders.service.js';
import { paymentProviderFor, recordPayment } from '../payments/payments.service.js';
import { certificateLine } from './certificate-orders.js';
import { countFailedAttempt } from './checkout-forms.js';
import type { CompanyRow } from './dashboard.repo.js';
import { readCard } from './checkout.forms.js';
import {
  guardForm,
  placeCheckoutIntent,
  priceChangedOutcome,
  type Billing,
  type CheckoutOutcome,
  type CheckoutSubmit,
  type PlacementIntent,
} from './checkout-placement.js';
import { startHostedCheckout } from './hosted-checkout.js';
import { buildOrderBody, productSections, type CheckoutOptions, type ProductKey } from './checkout.products.js';
import { withFields } from '../../lib/objects.js';

/*
 * Dashboard checkout (DASH-4 to DASH-10; BILL-10 to BILL-12). Who pays is the organization's
 * `dashboard_billing`: `organization` places the order exactly like an API order (prepaid balance, wholesale),
 * `customer` charges the customer's card for retail + state fees through the payment provider, then places
 * the order with billing 'checkout' (retail and margin recorded) and the payment row in ONE transaction.
 * Either way the orders enter the same pipeline (status history, filing.status_changed webhooks).
 */

/** The billing mode of dashboard orders for an organization. */
export function billingOf(organization: OrganizationRow): Billing {
  return organization.dashboard_billing === 'customer' ? 'checkout' : 'balance';
}

/** Formation tiers enabled for the tenant's checkout, ascending (PRICE-5). */
export function enabledTiers(prices: Record<ProductType, TenantPrice>): Array<1 | 2 | 3> {
  return ([1, 2, 3] as const).filter((t) => prices[`formation_tier_${t}`]?.enabled !== false);
}

/** Every product's prices for the tenant, in cents, keyed by product type (TenantPrice; retail, wholesale, enabled). */
export function loadPrices(db: Db, tenant: Tenant) {
  return loadTenantPriceMap(db, tenant);
}

/**
 * Why a product cannot be bought for this company right now, in words for the customer, or null.
 * (The same rules are enforced again when the order is placed.)
 */
export async function unavailableReason(
  db: Db,
  tenant: Tenant,
  product: ProductKey,
  company: CompanyRow | null,
  o: CheckoutOptions,
): Promise<string | null> {
  if (!company) return null;
  if (product === 'ein' && (company.ein || (await findEinOrder(db, tenant, company.id))))
    return 'This company already has an EIN, or one is on the way.';
  if (product === 'foreign-qualification') {
    if (!company.formation_state)
      return "The company's state of formation is not on file yet, so it cannot qualify in another state.";
    if (o.filingState === company.formation_state)
      return `The company was formed in ${o.filingState}; choose another state to qualify in.`;
    if (await findPaidQualification(db, tenant, company.id, o.filingState))
      return `The company is already qualified (or being qualified) in ${o.filingState}.`;
  }
  // Our service already is the agent there: a new appointment or a change of agent to us would be a no-op
  // (ORD-RA-4, DASH-5), so neither is offered for a price.
  if (product === 'registered-agent' && (await findActiveRegisteredAgent(db, tenant, company.id, o.filingState))) {
    return `Registered agent service in ${o.filingState} is already active for this company.`;
  }
  return null;
}

/** True when the company has active registered agent service in the state (foreign qualification can use it). */
export async function hasActiveAgent(
  db: Db,
  tenant: Tenant,
  company: CompanyRow | null,
  state: string,
): Promise<boolean> {
  return !!company && !!(await findActiveRegisteredAgent(db, tenant, company.id, state));
}

/**
 * The priced lines the customer will be shown and charged (cents), computed by the same planner that
 * places the order (formation tier + registered agent for tiers 2-3, state fees as their own lines: BILL-11).
 * @throws ValidationError as planOrder does (e.g. a filingState without a fee schedule).
 */
export async function summaryLines(
  db: Db,
  tenant: Tenant,
  product: ProductKey,
  o: CheckoutOptions,
  company: CompanyRow | null,
  billing: Billing,
  activeAgent: boolean,
): Promise<PricedLine[]> {
  if (product === 'certificate-of-good-standing') return [await certificateLine(db, tenant, o.filingState, billing)];
  const facts: OrderFacts = {
    companyId: company?.id ?? null,
    entityType: company?.entity_type ?? o.entityType,
    formationState: company?.formation_state ?? o.filingState,
    activeAgent: activeAgent && company ? await findActiveRegisteredAgent(db, tenant, company.id, o.filingState) : null,
  };
  const plan = await planOrder(db, tenant, previewRequest(product, o, activeAgent), facts, {
    formationTier: product === 'formation' ? o.tier : undefined,
    dbaName: 'preview',
    billing,
  });
  return plan.lines;
}

/**
 * The request the form will place, as far as pricing reads it: the products it holds (the same as buildOrderBody
 * puts in the body: tiers 2-3 add the EIN and registered agent service, a foreign qualification orders the agent
 * unless supplied or already active) and the options that change a price. Minimal objects stand for the form's.
 */
function previewRequest(
  product: Exclude<ProductKey, 'certificate-of-good-standing'>,
  o: CheckoutOptions,
  activeAgent: boolean,
): PlanRequest {
  const ein = { responsibleParty: { taxId: '' } };
  switch (product) {
    case 'formation':
      return o.tier >= 2
        ? { filingState: o.filingState, formation: {}, ein, registeredAgent: { isChangeOfAgent: false } }
        : { filingState: o.filingState, formation: {} };
    case 'ein':
      return { filingState: o.filingState, ein };
    case 'annual-report':
      return { filingState: o.filingState, annualReport: { filingYear: o.filingYear } };
    case 'registered-agent':
      return { filingState: o.filingState, registeredAgent: { isChangeOfAgent: o.changeOfAgent } };
    case 'foreign-qualification':
      return {
        filingState: o.filingState,
        foreignQualification: o.agent === 'supply' ? { registeredAgent: {} } : true,
        registeredAgent: o.agent === 'order' && !activeAgent ? { isChangeOfAgent: false } : undefined,
      };
  }
}

type PlaceFn = (
  tx: Db,
  idempotencyKey: string | undefined,
) => Promise<{ groupId: string | null; companyId: string; totalCents: number }>;

/**
 * Validates the form, then places the order: from the balance (organization billing) or after charging the
 * card (customer billing). A decline records a `declined` payment and places nothing; if the order fails
 * after a successful charge, the charge is refunded and recorded as `refunded`.
 * With a form token the whole submit runs in one transaction holding the token's row lock, and the group is
 * placed under the token's idempotency key: a second submit of the same form gets the first one's orders back
 * and is never placed or charged again (checked before the card is charged).
 * Rule failures (AppError, including a short balance) come back as an `{ok: false}` outcome, never thrown.
 */
export async function submitCheckout(ctx: AppContext, s: CheckoutSubmit): Promise<CheckoutOutcome> {
  const billing = billingOf(s.organization);
  const errors: FieldError[] = [];
  let body: CheckedOrderBody | null = null;
  let pricing: { formationTier?: 1 | 2 | 3; dbaName?: string } = {};
  if (s.product !== 'certificate-of-good-standing') {
    const built = buildOrderBody(
      s.product,
      s.options,
      s.form,
      productSections(s.product, s.options, s.activeAgent),
      s.userId,
      s.company?.id ?? null,
      s.activeAgent,
    );
    pricing = built.pricing;
    try {
      // The request's one check of its schema and rules, raised as field errors for the form.
      body = checkedOrderBody(built.body, [], (errors) => {
        throw new ValidationError(errors);
      });
    } catch (err) {
      // Shown on the form with the card and trade-name errors below, not thrown.
      if (!(err instanceof ValidationError)) throw err;
      const copied = (field: string) => built.copies.some((p) => field === p || field.startsWith(`${p}.`));
      errors.push(...err.errors.filter((e) => !copied(e.field)));
    }
    if (s.options.tier === 3 && s.product === 'formation' && !pricing.dbaName)
      errors.push({ field: 'dbaName', message: 'Enter the trade name to register' });
  }
  const provider = billing === 'checkout' ? paymentProviderFor(ctx.config, s.tenant.environment) : null;
  // A hosted payment page takes the card on the provider's site: no card fields here (PAY-2).
  const card = billing === 'checkout' && provider?.kind !== 'hosted' ? readCard(s.form) : null;
  if (card) errors.push(...card.errors);
  if (errors.length) return { ok: false, errors: dedupe(errors), message: null };

  const intent: PlacementIntent = body
    ? { kind: 'order', body, pricing }
    : { kind: 'certificate', userId: s.userId, companyId: s.company!.id, filingState: s.options.filingState };
  const place: PlaceFn = (tx, idempotencyKey) =>
    placeCheckoutIntent(tx, s.tenant, intent, billing, idempotencyKey, ctx.secrets.dataKeys);
  try {
    if (billing === 'balance') {
      return await withTransaction(ctx.pool, async (tx) => {
        const form = await guardForm(tx, s);
        if ('outcome' in form) return form.outcome;
        return placedOutcome(await place(tx, form.key));
      });
    }
    if (provider?.kind === 'hosted') return await startHostedCheckout(ctx, s, provider, intent);
    return await chargeAndPlace(ctx, s, card!.card!, body, pricing, place);
  } catch (err) {
    return refusal(err, s.organization);
  }
}

async function chargeAndPlace(
  ctx: AppContext,
  s: CheckoutSubmit,
  card: NonNullable<ReturnType<typeof readCard>['card']>,
  body: CheckedOrderBody | null,
  pricing: object,
  place: PlaceFn,
): Promise<CheckoutOutcome> {
  const provider = paymentProviderFor(ctx.config, s.tenant.environment);
  if (provider?.kind !== 'card')
    return {
      ok: false,
      errors: [],
      message: 'Card payment is not available yet. Please contact us to place this order.',
    };
  const payment = { provider: provider.name, userId: s.userId, companyId: s.company?.id ?? null };
  // Set while a succeeded charge is neither kept by a committed order nor refunded (only a failing COMMIT leaves it
  // set).
  let unsettled: { reference: string; amountCents: number; cardLast4: string } | null = null;
  const result = await withTransaction(ctx.pool, async (tx): Promise<CheckoutOutcome | { rethrow: unknown }> => {
    const form = await guardForm(tx, s);
    if ('outcome' in form) return form.outcome;
    const totalCents = body
      ? (
          await planOrder(tx, s.tenant, body, await checkOrderFacts(tx, s.tenant, body), {
            ...pricing,
            billing: 'checkout',
          })
        ).totalCents
      : (await certificateLine(tx, s.tenant, s.options.filingState, 'checkout')).amountCents;
    const changed = priceChangedOutcome(s.expectedTotalCents, totalCents);
    if (changed) return changed;
    // One form + attempt is one charge at the provider (a retry after a crash mid-charge is the same charge);
    // a decline or a refund counts a failed attempt (committed with it), so the next submit is a new charge.
    const chargeKey = form.key ? `${form.key}:${form.attempts}` : randomUUID();
    const charge = await provider.charge({
      amountCents: totalCents,
      card,
      description: `${s.organization.name} order`,
      idempotencyKey: chargeKey,
    });
    const paid = withFields(payment, { amountCents: totalCents, cardLast4: charge.cardLast4 });
    if (charge.status === 'declined') {
      await recordPayment(tx, s.tenant, withFields(paid, { status: 'declined', failureMessage: charge.message }));
      if (s.formToken) await countFailedAttempt(tx, s.formToken);
      return { ok: false, errors: [{ field: 'card.number', message: charge.message }], message: charge.message };
    }
    await savepoint(tx, 'checkout_place');
    try {
      const placed = await place(tx, form.key);
      if (!placed.groupId)
        throw new AppError('conflict', 'This service is already active for the company. You have not been charged.');
      // Prices may change between the charge and the insert; never keep an order for a different amount.
      if (placed.totalCents !== totalCents)
        throw new AppError(
          'conflict',
          'Prices changed while you were paying. You have not been charged; please review the new total and try again.',
        );
      await recordPayment(tx, s.tenant, {
        ...paid,
        status: 'succeeded',
        providerReference: charge.reference,
        groupId: placed.groupId,
        companyId: placed.companyId,
      });
      unsettled = { reference: charge.reference, amountCents: totalCents, cardLast4: charge.cardLast4 };
      return placedOutcome(placed);
    } catch (err) {
      // Give the money back and keep the record of it (and the spent attempt) in the same commit that releases the
      // form.
      await rollbackToSavepoint(tx, 'checkout_place');
      await provider.refund({
        reference: charge.reference,
        amountCents: totalCents,
        idempotencyKey: `${chargeKey}:refund`,
      });
      await recordPayment(tx, s.tenant, {
        ...paid,
        status: 'refunded',
        providerReference: charge.reference,
        failureMessage: err instanceof Error ? err.message.slice(0, 300) : null,
      });
      if (s.formToken) await countFailedAttempt(tx, s.formToken);
      return err instanceof AppError ? refusal(err, s.organization) : { rethrow: err };
    }
  }).catch(async (err) => {
    const c = unsettled as { reference: string; amountCents: number; cardLast4: string } | null;
    if (c) {
      await provider.refund({
        reference: c.reference,
        amountCents: c.amountCents,
        idempotencyKey: `${c.reference}:refund`,
      });
      await recordPayment(ctx.pool, s.tenant, {
        ...payment,
        ...c,
        status: 'refunded',
        providerReference: c.reference,
        failureMessage: 'the order could not be saved',
      });
    }
    throw err;
  });
  if ('rethrow' in result) throw result.rethrow;
  return result;
}

function placedOutcome(placed: { groupId: string | null; companyId: string }): CheckoutOutcome {
  if (!placed.groupId)
    return {
      ok: false,
      errors: [],
      message: 'This service is already active for the company; nothing was ordered or charged.',
    };
  return { ok: true, companyId: placed.companyId, groupId: placed.groupId };
}

// Rule failures found while placing become page messages; anything else is a real error.
function refusal(err: unknown, organization: OrganizationRow): CheckoutOutcome {
  if (!(err instanceof AppError)) throw err;
  if (err.code === 'insufficient_balance') {
    return {
      ok: false,
      errors: [],
      message: `This order cannot be placed right now. Please contact ${organization.name}.`,
    };
  }
  const errors = (err.extra.errors as FieldError[] | undefined) ?? [];
  return { ok: false, errors, message: errors.length ? null : err.message };
}

function dedupe(errors: FieldError[]): FieldError[] {
  const seen = new Set<string>();
  return errors.filter((e) => !seen.has(e.field + e.message) && seen.add(e.field + e.message));
}

import type { AppContext, Tenant } from '../../context.js';
import { withTransaction } from '../../lib/db.js';
import { AppError, notFound, type FieldError } from '../../lib/errors.js';
import { validated } from '../../lib/validation.js';
import type { EventEnvelope } from '../events/events.service.js';
import { ResponsiblePartySchema, type ResponsibleParty } from '../orders/ein.schemas.js';
import { replaceResponsibleParty } from '../orders/ein-tax-ids.js';
import { responsiblePartyErrors } from '../orders/order-rules.js';
import { changeOrderStatus } from '../orders/order-status.js';
import type { OrderRow, OrderSummaryRow } from '../orders/orders.repo.js';
import * as repo from './filings.repo.js';
import { tenantOf } from './filings.service.js';
import { orderStateOf, planTransition, todayUtc } from './transitions.js';

/** The exception codes under which the IRS refused the responsible party (FIL-12): 483 SSN rejected, 484 name mismatch. */
const CORRECTABLE_EXCEPTION_CODES: readonly string[] = ['483', '484'];

/** Whether an order waits for a corrected responsible party (ORD-EIN-8): an EIN order in exception 483 or 484. */
export function awaitsResponsibleParty(o: Pick<OrderRow, 'order_type' | 'filing_status' | 'exception_code'>): boolean {
  return (
    o.order_type === 'ein' &&
    o.filing_status === 'exception' &&
    CORRECTABLE_EXCEPTION_CODES.includes(o.exception_code ?? '')
  );
}

/**
 * Validates a corrected responsible party as POST /orders validates `ein.responsibleParty` (ORD-EIN-1, ORD-EIN-2),
 * field names without a prefix (`taxId`, `lastName`); `prior`: errors found already (path parameters).
 * @throws ValidationError (400) naming every bad field; no message repeats the tax id.
 */
export function validResponsibleParty(value: unknown, prior: FieldError[] = []): ResponsibleParty {
  return validated(ResponsiblePartySchema, value, [(v) => responsiblePartyErrors(v)], { prior });
}

/**
 * Takes a corrected responsible party for an EIN order the IRS refused (ORD-EIN-8), in ONE transaction: lock the
 * order, check it is an EIN order in exception 483 or 484, seal the new tax id in place of the old one (destroyed) and
 * put the new party in the order's details (ein-tax-ids.ts `replaceResponsibleParty`), then move it to `pending`
 * through the one status-change writer (ORD-14: status-history row and `filing.status_changed` event with its
 * deliveries), guarded by the transition table (FIL-2, FIL-10).
 * @param tenant the caller's tenant (an order of another tenant or environment answers 404).
 * @param actor recorded in the status history: `api` (the integrator) or `dashboard` (the customer).
 * @returns the order after the change (every column) and the event written.
 * @throws AppError not_found (404); invalid_transition (409) unless the order is an EIN order in exception 483 or 484.
 */
export async function correctResponsibleParty(
  ctx: AppContext,
  tenant: Tenant,
  orderId: string,
  party: ResponsibleParty,
  actor: 'api' | 'dashboard',
): Promise<{ order: OrderRow; event: EventEnvelope }> {
  return withTransaction(ctx.pool, async (tx) => {
    const current = await repo.lockOrder(tx, tenant, orderId);
    if (!current) throw notFound('order', orderId);
    if (!awaitsResponsibleParty(current)) throw notAwaitingCorrection(current);
    const plan = planTransition(
      orderStateOf(current),
      { filingStatus: 'pending', expectedStatus: 'exception' },
      todayUtc(),
    );
    await replaceResponsibleParty(tx, ctx.secrets.dataKeys, tenantOf(current), current.id, party);
    const changed = await changeOrderStatus(tx, tenantOf(current), {
      orderId: current.id,
      actor,
      filing: { from: plan.from, to: plan.to, exceptionCode: null, exceptionMessage: null, filingDate: null },
    });
    return changed;
  });
}

function notAwaitingCorrection(o: OrderSummaryRow): AppError {
  const now =
    o.filing_status === 'exception' ? `in exception ${o.exception_code}` : `${o.filing_status}, not in exception`;
  const what = o.order_type === 'ein' ? `EIN order ${o.id} is ${now}` : `Order ${o.id} is not an EIN order`;
  return new AppError(
    'invalid_transition',
    `${what}: its responsible party can be corrected only while the IRS refused it (exception 483 or 484)`,
  );
}

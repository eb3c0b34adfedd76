import type { Tenant } from '../../context.js';
import type { Db } from '../../lib/db.js';
import { newId } from '../../lib/ids.js';
import { debitOrThrow, ensureFunds } from '../billing/ledger.js';
import { loadTenantPrice } from '../billing/pricing.js';
import { emitStatusChanged } from '../filings/filing-events.js';
import { insertStatusHistory } from '../filings/status-history.js';
import { findGroupByIdempotencyKey, insertOrder, insertOrderGroup } from '../orders/orders.repo.js';
import type { PricedLine } from '../orders/orders.service.js';

/*
 * Certificate of good standing: sold only in the dashboard (spec "Product availability": no POST /orders key).
 * Its order goes through the same tables and pipeline as every order: an order group, an order row at
 * `submitted`, the status-history row and a filing.status_changed event (webhooks) in one transaction; balance
 * billing debits the ledger at wholesale, in-app checkout records retail and margin (billing rules 8-10).
 * The state issues it without a separate state fee line.
 */

/**
 * The one priced line of a certificate (cents): retail at checkout, wholesale when the organization pays.
 * @throws AppError not_found only when the price catalogue lacks certificate_of_good_standing (it is seeded).
 */
export async function certificateLine(db: Db, tenant: Tenant, filingState: string, billing: 'balance' | 'checkout'): Promise<PricedLine> {
  const price = await loadTenantPrice(db, tenant, 'certificate_of_good_standing');
  return {
    orderType: 'certificate_of_good_standing' as PricedLine['orderType'],
    type: 'certificate_of_good_standing',
    description: `Certificate of good standing (${filingState})`,
    amountCents: billing === 'checkout' ? price.effectiveRetailCents : price.wholesaleCents,
    wholesaleCents: price.wholesaleCents,
    stateFee: false,
  };
}

/**
 * Places a certificate order inside the caller's transaction. The caller has checked that the user
 * administers the company. With `idempotencyKey` (a checkout form's key) the group stores it, and a group
 * already placed under that key is returned instead of placing again (as placeOrderInTx does).
 * @returns the order group and order ids and the cents charged.
 * @throws AppError insufficient_balance (402) when balance-billed and the balance is short.
 */
export async function placeCertificateInTx(tx: Db, tenant: Tenant, input: { userId: string; companyId: string; filingState: string }, billing: 'balance' | 'checkout', actor = 'dashboard', idempotencyKey?: string) {
  if (idempotencyKey) {
    const earlier = await findGroupByIdempotencyKey(tx, tenant, idempotencyKey);
    if (earlier) return { groupId: earlier.id, orderId: earlier.orders[0]?.id ?? null, totalCents: Number(earlier.total_cents), companyId: earlier.company_id };
  }
  const line = await certificateLine(tx, tenant, input.filingState, billing);
  if (billing === 'balance') await ensureFunds(tx, tenant, line.amountCents);
  const groupId = newId('orderGroup');
  await insertOrderGroup(tx, tenant, {
    id: groupId, userId: input.userId, companyId: input.companyId, filingState: input.filingState, source: 'dashboard', billing,
    request: { userId: input.userId, companyId: input.companyId, filingState: input.filingState, certificateOfGoodStanding: true }, totalCents: line.amountCents, idempotencyKey,
  });
  const order = await insertOrder(tx, tenant, {
    id: newId('order'), groupId, companyId: input.companyId, userId: input.userId, orderType: 'certificate_of_good_standing', filingState: input.filingState,
    filingType: null, subscriptionStatus: null, details: {}, billing, amountCents: line.amountCents,
    retailCents: billing === 'checkout' ? line.amountCents : null, marginCents: billing === 'checkout' ? line.amountCents - line.wholesaleCents : null,
  });
  if (billing === 'balance') {
    await debitOrThrow(tx, tenant, [{ amountCents: line.amountCents, lineType: line.type, description: line.description, orderId: order.id }], actor);
  }
  await insertStatusHistory(tx, tenant, { orderId: order.id, fromStatus: null, toStatus: 'submitted', actor });
  await emitStatusChanged(tx, tenant, order);
  return { groupId, orderId: order.id, totalCents: line.amountCents, companyId: input.companyId };
}

import type { Tenant } from '../../context.js';
import type { Db } from '../../lib/db.js';
import { newId } from '../../lib/ids.js';
import { loadTenantPrice } from '../billing/pricing.js';
import { findGroupByIdempotencyKey } from '../orders/orders.repo.js';
import { recordPlacement, type PricedLine } from '../orders/orders.service.js';

/*
 * Certificate of good standing: sold only in the dashboard (DASH-10: no POST /orders key).
 * Its order goes through the same tables and pipeline as every order: an order group, an order row at
 * `submitted`, the status-history row and a filing.status_changed event (webhooks) in one transaction; balance
 * billing debits the ledger at wholesale, in-app checkout records retail and margin (BILL-10 to BILL-12).
 * The state issues it without a separate state fee line.
 */

/**
 * The one priced line of a certificate (cents): retail at checkout, wholesale when the organization pays.
 * @throws AppError not_found only when the price catalogue lacks certificate_of_good_standing (it is seeded).
 */
export async function certificateLine(
  db: Db,
  tenant: Tenant,
  filingState: string,
  billing: 'balance' | 'checkout',
): Promise<PricedLine> {
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
export async function placeCertificateInTx(
  tx: Db,
  tenant: Tenant,
  input: { userId: string; companyId: string; filingState: string },
  billing: 'balance' | 'checkout',
  actor = 'dashboard',
  idempotencyKey?: string,
) {
  if (idempotencyKey) {
    const earlier = await findGroupByIdempotencyKey(tx, tenant, idempotencyKey);
    if (earlier)
      return {
        groupId: earlier.id,
        orderId: earlier.orders[0]?.id ?? null,
        totalCents: Number(earlier.total_cents),
        companyId: earlier.company_id,
      };
  }
  const line = await certificateLine(tx, tenant, input.filingState, billing);
  const orderId = newId('order');
  // ORD-13: the orders module's placement writer inserts the group, the order, its history and event, and debits.
  const placed = await recordPlacement(tx, tenant, {
    rows: {
      company: null,
      group: {
        id: newId('orderGroup'),
        userId: input.userId,
        companyId: input.companyId,
        filingState: input.filingState,
        source: 'dashboard',
        billing,
        request: {
          userId: input.userId,
          companyId: input.companyId,
          filingState: input.filingState,
          certificateOfGoodStanding: true,
        },
        totalCents: line.amountCents,
        idempotencyKey,
      },
      orders: [
        {
          id: orderId,
          company_id: input.companyId,
          user_id: input.userId,
          order_type: 'certificate_of_good_standing',
          filing_state: input.filingState,
          filing_type: null,
          subscription_status: null,
          details: {},
          billing,
          amount_cents: line.amountCents,
          retail_cents: billing === 'checkout' ? line.amountCents : null,
          margin_cents: billing === 'checkout' ? line.amountCents - line.wholesaleCents : null,
        },
      ],
      actor,
    },
    debits:
      billing === 'balance'
        ? [{ amountCents: line.amountCents, lineType: line.type, description: line.description, orderId }]
        : [],
    existing: new Map(),
    order: [0],
    totalCents: line.amountCents,
  });
  return { groupId: placed.groupId!, orderId, totalCents: line.amountCents, companyId: input.companyId };
}

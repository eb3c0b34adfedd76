import type { Tenant } from '../../context.js';
import { many, one, type Db } from '../../lib/db.js';

/**
 * A payment to record; amounts in cents. `groupId` is the order group paid for (null for a decline). `status` is the
 * status it is recorded with: `refunded` for a charge given back at once because its order could not be placed.
 */
export interface PaymentRecord {
  provider: string;
  amountCents: number;
  status: PaymentStatus;
  cardLast4: string | null;
  failureMessage?: string | null;
  providerReference?: string | null;
  groupId?: string | null;
  userId: string;
  companyId?: string | null;
}

/** A payment's status: charged, refused by the card's bank or the provider, or charged and given back. */
type PaymentStatus = 'succeeded' | 'declined' | 'refunded';

/**
 * Inserts a payments row with the given pay_ id (refunded_at set when the status is refunded). Payments are
 * insert-only (PAY-4, SEC-3): the database's trigger payments_first_status records `status` as the payment's first
 * row of payment_statuses, and a later change of status is a new row there; payment_status(id) is its status now.
 * @returns the id.
 */
export async function insertPayment(db: Db, tenant: Tenant, id: string, p: PaymentRecord): Promise<string> {
  const row = await one<{ id: string }>(
    db,
    `INSERT INTO payments (id, organization_id, environment, group_id, provider, amount_cents, status, card_last4, failure_message,
                           provider_reference, user_id, company_id, refunded_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, CASE WHEN $7 = 'refunded' THEN now() END) RETURNING id`,
    [
      id,
      tenant.organizationId,
      tenant.environment,
      p.groupId ?? null,
      p.provider,
      p.amountCents,
      p.status,
      p.cardLast4,
      p.failureMessage ?? null,
      p.providerReference ?? null,
      p.userId,
      p.companyId ?? null,
    ],
  );
  return row!.id;
}

/**
 * Inserts the card_refunds row of a cancelled order against the group's succeeded card payment, unless the order
 * has one already (PAY-6). @returns the new id, or null when the group has no such payment or the order was
 * refunded before.
 */
export async function insertCardRefund(
  tx: Db,
  id: string,
  tenant: Tenant,
  order: { id: string; group_id: string; amount_cents: number | string },
): Promise<string | null> {
  const row = await one<{ id: string }>(
    tx,
    `WITH paid AS (
       SELECT id, provider FROM payments
        WHERE group_id = $2 AND payment_status(id) = 'succeeded' AND provider_reference IS NOT NULL ORDER BY created_at LIMIT 1
     ), refund AS (
       INSERT INTO card_refunds (id, organization_id, environment, order_id, payment_id, provider, amount_cents)
       SELECT $1, $3, $4, $5, paid.id, paid.provider, $6 FROM paid
       ON CONFLICT (order_id) DO NOTHING RETURNING id
     )
     SELECT id FROM refund`,
    [id, order.group_id, tenant.organizationId, tenant.environment, order.id, Number(order.amount_cents)],
  );
  return row?.id ?? null;
}

/** A card refund as the console shows it. Money in cents. */
export interface CardRefundView {
  id: string;
  order_id: string;
  organization_id: string;
  environment: 'live' | 'test';
  provider: string;
  amount_cents: number;
  status: 'pending' | 'succeeded';
  provider_reference: string | null;
  attempts: number;
  last_error: string | null;
  created_at: Date;
  refunded_at: Date | null;
}

/** The refund of one order, or null (PAY-6: recorded on the order). */
export function findRefundOfOrder(db: Db, orderId: string): Promise<CardRefundView | null> {
  return one<CardRefundView>(db, 'SELECT *, amount_cents::int AS amount_cents FROM card_refunds WHERE order_id = $1', [
    orderId,
  ]);
}

/** Refunds the provider has not accepted yet, oldest first (the console's list of failing refunds, PAY-7). */
export function listUnsettledRefunds(db: Db, limit = 50): Promise<CardRefundView[]> {
  return many<CardRefundView>(
    db,
    `SELECT *, amount_cents::int AS amount_cents FROM card_refunds WHERE status = 'pending' ORDER BY created_at LIMIT $1`,
    [limit],
  );
}

/** What sending one refund needs: the refund, its provider and the payment's provider reference. Money in cents. */
export interface RefundFacts {
  id: string;
  status: 'pending' | 'succeeded';
  provider: string;
  amount_cents: string | number;
  environment: 'live' | 'test';
  reference: string;
}

/** The refund with its payment's provider reference, or null. */
export function findRefundFacts(db: Db, refundId: string): Promise<RefundFacts | null> {
  return one<RefundFacts>(
    db,
    `SELECT r.id, r.status, r.provider, r.amount_cents, r.environment, p.provider_reference AS reference
         FROM card_refunds r JOIN payments p ON p.id = r.payment_id WHERE r.id = $1`,
    [refundId],
  );
}

/** Records the provider's acceptance of a pending refund (reference and time); counts the attempt. */
export async function markRefundSucceeded(db: Db, refundId: string, reference: string): Promise<void> {
  await db.query(
    `UPDATE card_refunds SET status = 'succeeded', provider_reference = $2, refunded_at = now(), attempts = attempts + 1, last_attempt_at = now(), last_error = NULL
          WHERE id = $1 AND status = 'pending'`,
    [refundId, reference],
  );
}

/** Records a refused or failed attempt: the error (at most 500 characters kept by the caller) and the attempt count. */
export async function recordRefundFailure(db: Db, refundId: string, error: string): Promise<void> {
  await db.query(
    'UPDATE card_refunds SET attempts = attempts + 1, last_attempt_at = now(), last_error = $2 WHERE id = $1',
    [refundId, error],
  );
}

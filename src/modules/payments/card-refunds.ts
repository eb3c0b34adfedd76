import type { Tenant } from '../../context.js';
import { many, one, type Db } from '../../lib/db.js';
import { newId } from '../../lib/ids.js';
import { addJob } from '../../lib/jobs.js';

/*
 * Refunds of cancelled card-paid orders (PAY-6, PAY-7). The status change to cancelled records a card_refunds row
 * (the order's retail + state fee: orders.amount_cents) and queues a job in the same transaction; the job asks the
 * payment provider for the refund, with the row id as idempotency key, so a retry after a crash or a timeout never
 * refunds twice. A refused refund stays pending with its error (shown in the console) and graphile-worker retries it
 * with growing delays. The job is the task of refund-card-payment.task.ts.
 */

/** Attempts before graphile-worker gives up (with its exponential backoff, about three days). The row stays pending, visible in the console. */
export const REFUND_MAX_ATTEMPTS = 20;

/** The order fields a refund needs (an orders row as the status change reads it). Money in cents. */
export interface RefundableOrder {
  id: string;
  group_id: string;
  billing: string;
  amount_cents: number | string;
}

/**
 * Records the refund of a cancelled card-paid order and queues the job that sends it (PAY-6). Call it in the
 * transaction that moves the order to cancelled. Does nothing for balance-billed orders (their debits are reversed
 * instead), orders of a group without a succeeded card payment, zero-amount orders, or an order refunded before.
 * @returns the card_refunds id (rfnd_...), or null when nothing is to refund.
 * @throws when the refunds of the payment would exceed what it collected (a database trigger guards it).
 */
export async function queueCardRefund(tx: Db, tenant: Tenant, order: RefundableOrder): Promise<string | null> {
  if (order.billing !== 'checkout' || Number(order.amount_cents) <= 0) return null;
  const row = await one<{ id: string }>(
    tx,
    `WITH paid AS (
       SELECT id, provider FROM payments WHERE group_id = $2 AND status = 'succeeded' AND provider_reference IS NOT NULL ORDER BY created_at LIMIT 1
     ), refund AS (
       INSERT INTO card_refunds (id, organization_id, environment, order_id, payment_id, provider, amount_cents)
       SELECT $1, $3, $4, $5, paid.id, paid.provider, $6 FROM paid
       ON CONFLICT (order_id) DO NOTHING RETURNING id
     )
     SELECT id FROM refund`,
    [newId('cardRefund'), order.group_id, tenant.organizationId, tenant.environment, order.id, Number(order.amount_cents)],
  );
  if (!row) return null;
  await addJob(tx, 'refund_card_payment', { refundId: row.id }, { maxAttempts: REFUND_MAX_ATTEMPTS });
  return row.id;
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
  return one<CardRefundView>(db, 'SELECT *, amount_cents::int AS amount_cents FROM card_refunds WHERE order_id = $1', [orderId]);
}

/** Refunds the provider has not accepted yet, oldest first (the console's list of failing refunds, PAY-7). */
export function listUnsettledRefunds(db: Db, limit = 50): Promise<CardRefundView[]> {
  return many<CardRefundView>(db, `SELECT *, amount_cents::int AS amount_cents FROM card_refunds WHERE status = 'pending' ORDER BY created_at LIMIT $1`, [limit]);
}

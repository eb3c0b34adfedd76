import type { Tenant } from '../../context.js';
import type { Db } from '../../lib/db.js';
import { newId } from '../../lib/ids.js';
import { addJob } from '../../lib/jobs.js';
import * as repo from './payments.repo.js';

/*
 * Refunds of cancelled card-paid orders (PAY-6, PAY-7). The status change to cancelled records a card_refunds row
 * (the order's retail + state fee: orders.amount_cents) and queues a job in the same transaction; the job asks the
 * payment provider for the refund, with the row id as idempotency key, so a retry after a crash or a timeout never
 * refunds twice. A refused refund stays pending with its error (shown in the console) and graphile-worker retries it
 * with growing delays. The job is the task of refund-card-payment.task.ts.
 */

/** Attempts before graphile-worker gives up (with its exponential backoff, about three days). The row stays pending, visible in the console. */
const REFUND_MAX_ATTEMPTS = 20;

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
  const id = await repo.insertCardRefund(tx, newId('cardRefund'), tenant, order);
  if (!id) return null;
  await addJob(tx, 'refund_card_payment', { refundId: id }, { maxAttempts: REFUND_MAX_ATTEMPTS });
  return id;
}

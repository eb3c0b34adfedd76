import type { Environment, Tenant } from '../../context.js';
import { many, one, type Db } from '../../lib/db.js';

/** Where a top-up stands (FUND-4): pending (page open), processing (bank debit under way), then settled. */
export type TopUpStatus = 'pending' | 'processing' | 'succeeded' | 'failed' | 'expired';

/** A top_ups row (FUND-1). Money in cents (bigint may come back as a string). */
export interface TopUpRow {
  id: string;
  organization_id: string;
  environment: Environment;
  amount_cents: number | string;
  provider: 'stripe' | 'test';
  status: TopUpStatus;
  provider_session_id: string | null;
  checkout_url: string | null;
  payment_intent: string | null;
  idempotency_key: string | null;
  failure_message: string | null;
  disputed_cents: number | string;
  refunded_cents: number | string;
  succeeded_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/**
 * Writes a top-up `pending` (live: before Stripe is called, FUND-20), or finds the one its Idempotency-Key already
 * made: one statement, so two requests racing with the same key never meet the unique index as an error (FUND-7).
 * @returns the row and whether this call wrote it.
 */
export async function claimTopUp(
  db: Db,
  tenant: Tenant,
  t: { id: string; amountCents: number; provider: TopUpRow['provider']; idempotencyKey: string | null },
): Promise<{ topUp: TopUpRow; created: boolean }> {
  for (;;) {
    const created = await one<TopUpRow>(
      db,
      `INSERT INTO top_ups (id, organization_id, environment, amount_cents, provider, idempotency_key)
       VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (organization_id, environment, idempotency_key) DO NOTHING RETURNING *`,
      [t.id, tenant.organizationId, tenant.environment, t.amountCents, t.provider, t.idempotencyKey],
    );
    if (created) return { topUp: created, created: true };
    // The key is taken: answer its top-up (the loop only repeats if that top-up released its key meanwhile).
    const earlier = await findByIdempotencyKey(db, tenant, t.idempotencyKey!);
    if (earlier) return { topUp: earlier, created: false };
  }
}

/**
 * Records the Checkout Session opened for a pending top-up that has none yet, or the same one again (FUND-20).
 * @returns the row, or null when the top-up is no longer pending or holds another session.
 */
export function storeSession(db: Db, id: string, sessionId: string, url: string): Promise<TopUpRow | null> {
  return one<TopUpRow>(
    db,
    `UPDATE top_ups SET provider_session_id = $2, checkout_url = $3, updated_at = now()
      WHERE id = $1 AND status = 'pending' AND (provider_session_id IS NULL OR provider_session_id = $2) RETURNING *`,
    [id, sessionId, url],
  );
}

/**
 * Marks a top-up whose payment page Stripe did not open `failed`, and releases its Idempotency-Key so that a retry
 * with the same key opens a new one (FUND-20). Only a pending top-up without a session: nothing was charged and no
 * Stripe event can name it. @returns the row, or null when it had moved on.
 */
export function failUnopened(db: Db, id: string, message: string): Promise<TopUpRow | null> {
  return one<TopUpRow>(
    db,
    `UPDATE top_ups SET status = 'failed', failure_message = $2, idempotency_key = NULL, checkout_url = NULL,
            updated_at = now()
      WHERE id = $1 AND status = 'pending' AND provider_session_id IS NULL RETURNING *`,
    [id, message],
  );
}

/** The tenant's top-up made with this Idempotency-Key, or null (IDEM-5 for top-ups: FUND-7). */
export function findByIdempotencyKey(db: Db, tenant: Tenant, key: string): Promise<TopUpRow | null> {
  return one<TopUpRow>(
    db,
    'SELECT * FROM top_ups WHERE organization_id = $1 AND environment = $2 AND idempotency_key = $3',
    [tenant.organizationId, tenant.environment, key],
  );
}

/** The tenant's top-up with this id, or null. */
export function findTopUp(db: Db, tenant: Tenant, id: string): Promise<TopUpRow | null> {
  return one<TopUpRow>(db, 'SELECT * FROM top_ups WHERE id = $1 AND organization_id = $2 AND environment = $3', [
    id,
    tenant.organizationId,
    tenant.environment,
  ]);
}

/** Newest first; `limit + 1` rows so the caller can tell whether another page follows. */
export function listTopUps(db: Db, tenant: Tenant, limit: number, startingAfter?: string): Promise<TopUpRow[]> {
  return many<TopUpRow>(
    db,
    `SELECT * FROM top_ups WHERE organization_id = $1 AND environment = $2 AND ($3::text IS NULL OR id < $3)
     ORDER BY id DESC LIMIT $4`,
    [tenant.organizationId, tenant.environment, startingAfter ?? null, limit + 1],
  );
}

/**
 * The top-up of a Checkout Session, locked until the transaction ends (its events run one at a time: FUND-5). NO KEY
 * UPDATE: each event's payment_provider_events row holds a key-share lock on the top-up it names, which a plain FOR
 * UPDATE would wait for, so two events of one top-up would deadlock; for the same reason the updates of a top-up after
 * its creation change no column of a unique index.
 */
export function lockBySession(tx: Db, sessionId: string): Promise<TopUpRow | null> {
  return one<TopUpRow>(tx, 'SELECT * FROM top_ups WHERE provider_session_id = $1 FOR NO KEY UPDATE', [sessionId]);
}

/** The top-up paid by a Stripe PaymentIntent, locked like {@link lockBySession} (disputes and refunds: FUND-10). */
export function lockByPaymentIntent(tx: Db, paymentIntent: string): Promise<TopUpRow | null> {
  return one<TopUpRow>(tx, 'SELECT * FROM top_ups WHERE payment_intent = $1 FOR NO KEY UPDATE', [paymentIntent]);
}

/**
 * Moves a top-up to `status`; `succeeded` records when and the PaymentIntent that paid it. The payment page's address
 * is kept only while the top-up is pending.
 */
export async function setStatus(
  tx: Db,
  id: string,
  status: TopUpStatus,
  o: { paymentIntent?: string | null; failureMessage?: string } = {},
): Promise<TopUpRow> {
  return (await one<TopUpRow>(
    tx,
    `UPDATE top_ups SET status = $2, payment_intent = coalesce($3, payment_intent),
            failure_message = coalesce($4, failure_message),
            checkout_url = CASE WHEN $2 = 'pending' THEN checkout_url END,
            succeeded_at = CASE WHEN $2 = 'succeeded' THEN now() END, updated_at = now()
      WHERE id = $1 RETURNING *`,
    [id, status, o.paymentIntent ?? null, o.failureMessage ?? null],
  ))!;
}

/** Adds `cents` to what a dispute or a refund of its charge has taken back of a top-up (FUND-10). */
export async function addTakenBack(tx: Db, id: string, reason: 'dispute' | 'refund', cents: number): Promise<void> {
  await tx.query(
    `UPDATE top_ups SET disputed_cents = disputed_cents + CASE WHEN $2 = 'dispute' THEN $3 ELSE 0 END,
            refunded_cents = refunded_cents + CASE WHEN $2 = 'refund' THEN $3 ELSE 0 END, updated_at = now()
      WHERE id = $1`,
    [id, reason, cents],
  );
}

/** Takes `cents` off what disputes have taken back of a top-up, once a dispute is won and given back (FUND-26). */
export async function giveBackDisputed(tx: Db, id: string, cents: number): Promise<void> {
  await tx.query('UPDATE top_ups SET disputed_cents = disputed_cents - $2, updated_at = now() WHERE id = $1', [
    id,
    cents,
  ]);
}

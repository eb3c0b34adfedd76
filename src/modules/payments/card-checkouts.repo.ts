import type { Environment, Tenant } from '../../context.js';
import { one, type Db } from '../../lib/db.js';

/** A card_checkouts row: one hosted payment page of a dashboard checkout. Money in cents (bigint may come back as a string). */
export interface CardCheckoutRow {
  id: string;
  organization_id: string;
  environment: Environment;
  user_id: string;
  company_id: string | null;
  provider: string;
  provider_session_id: string | null;
  redirect_url: string | null;
  form_key: string | null;
  amount_cents: number | string;
  intent: unknown;
  status: 'open' | 'processing' | 'paid' | 'failed' | 'expired';
  group_id: string | null;
  payment_id: string | null;
  failure_message: string | null;
}

/** A new checkout, before its payment page exists. `intent` is the sealed placement intent. */
export interface NewCardCheckout {
  id: string;
  userId: string;
  companyId: string | null;
  provider: string;
  formKey: string | null;
  amountCents: number;
  intent: unknown;
}

/** Inserts a checkout in status open. */
export async function insertCheckout(tx: Db, tenant: Tenant, c: NewCardCheckout): Promise<void> {
  await tx.query(
    `INSERT INTO card_checkouts (id, organization_id, environment, user_id, company_id, provider, form_key, amount_cents, intent)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [
      c.id,
      tenant.organizationId,
      tenant.environment,
      c.userId,
      c.companyId,
      c.provider,
      c.formKey,
      c.amountCents,
      c.intent,
    ],
  );
}

/** Records the provider's session id and the page address the customer is sent to. */
/** Deletes a checkout whose payment page could not be opened (nothing was charged). */
export async function deleteCheckout(tx: Db, id: string): Promise<void> {
  await tx.query('DELETE FROM card_checkouts WHERE id = $1', [id]);
}

export async function setSession(tx: Db, id: string, sessionId: string, url: string): Promise<void> {
  await tx.query(
    'UPDATE card_checkouts SET provider_session_id = $2, redirect_url = $3, updated_at = now() WHERE id = $1',
    [id, sessionId, url],
  );
}

/** The newest checkout of a form that still waits for its payment (open or processing), or null. */
export function findOpenForForm(
  db: Db,
  tenant: Tenant,
  formKey: string,
): Promise<Pick<CardCheckoutRow, 'id' | 'status' | 'redirect_url'> | null> {
  return one(
    db,
    `SELECT id, status, CASE WHEN status = 'open' THEN redirect_url END AS redirect_url FROM card_checkouts
      WHERE organization_id = $1 AND environment = $2 AND form_key = $3 AND status IN ('open', 'processing')
      ORDER BY created_at DESC LIMIT 1`,
    [tenant.organizationId, tenant.environment, formKey],
  );
}

/**
 * The checkout of a provider session, locked until the transaction ends (events of one session run one at a time).
 * NO KEY UPDATE: each event's payment_provider_events row, written first in its transaction, holds a key-share lock on
 * the checkout it names, which FOR UPDATE would wait for: two racing events of one session would deadlock.
 */
export function lockBySession(tx: Db, sessionId: string): Promise<CardCheckoutRow | null> {
  return one<CardCheckoutRow>(tx, 'SELECT * FROM card_checkouts WHERE provider_session_id = $1 FOR NO KEY UPDATE', [
    sessionId,
  ]);
}

/** A checkout of this user in this tenant, or null. */
export function findForUser(db: Db, tenant: Tenant, userId: string, id: string): Promise<CardCheckoutRow | null> {
  return one<CardCheckoutRow>(
    db,
    'SELECT * FROM card_checkouts WHERE id = $1 AND organization_id = $2 AND environment = $3 AND user_id = $4',
    [id, tenant.organizationId, tenant.environment, userId],
  );
}

/**
 * Moves a checkout to `status`. Every status but processing settles it: the sealed intent is cleared (PAY-2).
 * `companyId` (paid): the company the order went to (a formation creates it).
 */
export async function setStatus(
  tx: Db,
  id: string,
  status: CardCheckoutRow['status'],
  o: { keepIntent?: boolean; failureMessage?: string; paymentId?: string; groupId?: string; companyId?: string },
): Promise<void> {
  await tx.query(
    `UPDATE card_checkouts SET status = $2, intent = CASE WHEN $3 THEN intent END, failure_message = coalesce($4, failure_message),
            payment_id = coalesce($5, payment_id), group_id = coalesce($6, group_id), company_id = coalesce($7, company_id), updated_at = now()
      WHERE id = $1`,
    [
      id,
      status,
      o.keepIntent ?? false,
      o.failureMessage ?? null,
      o.paymentId ?? null,
      o.groupId ?? null,
      o.companyId ?? null,
    ],
  );
}

/**
 * Records a provider event id (PAY-4) with the checkout or top-up of `sessionId`, the provider session it reports on
 * (null, or a session this service did not open: neither), or the top-up `paymentIntent` paid. @returns false when it was recorded before (a replay or
 * duplicate delivery: handle nothing). The row is written in the transaction that handles the event, so a failed
 * handling leaves no record and the provider's redelivery is handled again; it is never changed afterwards (the
 * table is insert-only, SEC-3).
 */
export async function recordProviderEvent(
  tx: Db,
  e: { id: string; provider: string; type: string; sessionId: string | null; paymentIntent?: string | null },
): Promise<boolean> {
  // FUND-6: an event about a top-up (its session, or the PaymentIntent a dispute or refund names) is kept with it.
  const res = await tx.query(
    `INSERT INTO payment_provider_events (id, provider, type, checkout_id, top_up_id)
     VALUES ($1, $2, $3, (SELECT id FROM card_checkouts WHERE provider_session_id = $4),
             coalesce((SELECT id FROM top_ups WHERE provider_session_id = $4), (SELECT id FROM top_ups WHERE payment_intent = $5)))
     ON CONFLICT (id) DO NOTHING`,
    [e.id, e.provider, e.type, e.sessionId, e.paymentIntent ?? null],
  );
  return res.rowCount === 1;
}

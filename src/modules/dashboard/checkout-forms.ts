import type { Tenant } from '../../context.js';
import type { Db } from '../../lib/db.js';
import { randomToken, sha256 } from '../../lib/secrets.js';
import { findGroupByIdempotencyKey } from '../orders/orders.repo.js';
import * as repo from './dashboard.repo.js';
import type { DashboardSession } from './sessions.js';

/*
 * One-time checkout form tokens (DASH-9: a double-submitted checkout must never place or
 * charge twice; client JS alone does not prevent it). Every rendered checkout form carries a fresh token in
 * the hidden field `_checkout`; the server keeps its sha256 with the session (table checkout_forms). The order
 * group a submit places stores `dashboard-checkout:<sha256>` as its idempotency key in the order's own
 * transaction (placeOrderInTx / placeCertificateInTx), and a submit first locks the token's row, so a second
 * submit of the same form waits for the first and then finds its orders instead of placing or charging again.
 */

/** Name of the hidden form field carrying the token. */
export const CHECKOUT_FORM_FIELD = '_checkout';
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{32,128}$/;

/** A token row locked for a submit. `attempts`: committed failed payment attempts of this form so far. */
export interface LockedCheckoutForm {
  key: string;
  attempts: number;
}

/** The order-group idempotency key of a form token (never the token itself: only its hash is stored). */
export function checkoutKey(token: string): string {
  return `dashboard-checkout:${sha256(token)}`;
}

/** Issues the token of one rendered checkout form for this session (32 random bytes, base64url). */
export async function issueCheckoutForm(db: Db, session: DashboardSession): Promise<string> {
  const token = randomToken(32);
  // Old tokens are deleted by the daily purge (src/modules/maintenance), not on this request path.
  await repo.insertCheckoutForm(db, sha256(token), session.idHash, session.tenant);
  return token;
}

/**
 * Locks the token's row for the rest of the caller's transaction (a concurrent submit of the same form
 * waits here until this one commits or rolls back).
 * @returns null when the token was not issued to this session (a stale or forged form).
 */
export async function lockCheckoutForm(
  tx: Db,
  session: DashboardSession,
  token: string,
): Promise<LockedCheckoutForm | null> {
  if (!TOKEN_SHAPE.test(token)) return null;
  const row = await repo.lockCheckoutFormRow(tx, sha256(token), session.idHash);
  return row ? { key: checkoutKey(token), attempts: row.attempts } : null;
}

/** Counts a failed payment attempt, so the next submit of the form is a new charge at the provider. */
export async function countFailedAttempt(db: Db, token: string): Promise<void> {
  await repo.incrementFormAttempts(db, sha256(token));
}

/** The order group an earlier submit of this form placed, or null. */
export async function placedByForm(
  db: Db,
  tenant: Tenant,
  token: string,
): Promise<{ groupId: string; companyId: string } | null> {
  if (!TOKEN_SHAPE.test(token)) return null;
  const group = await findGroupByIdempotencyKey(db, tenant, checkoutKey(token));
  return group ? { groupId: group.id, companyId: group.company_id } : null;
}

import type { Tenant } from '../../context.js';
import type { Db } from '../../lib/db.js';
import { randomToken, sha256 } from '../../lib/secrets.js';
import { signToken, verifiedToken } from '../../lib/signed-tokens.js';
import { findGroupByIdempotencyKey } from '../orders/orders.repo.js';
import * as repo from './dashboard.repo.js';
import type { DashboardSession } from './sessions.js';

/*
 * One-time checkout form tokens (DASH-9: a double-submitted checkout must never place or charge twice; client JS
 * alone does not prevent it). Every rendered checkout form carries a fresh token in the hidden field `_checkout`:
 * a random nonce and the time it was issued, with a MAC under the server secret bound to the session, so showing a
 * form writes nothing and a token of another session, a forged or an old one is refused without a look-up. The first
 * submit of a token creates its row in checkout_forms (only its sha256 is kept) and every submit locks that row for
 * its transaction; the order group a submit places stores `dashboard-checkout:<sha256>` as its idempotency key in the
 * order's own transaction (placeOrderInTx / placeCertificateInTx), so a second submit of the same form waits for the
 * first and then finds its orders instead of placing or charging again.
 */

/** Name of the hidden form field carrying the token. */
export const CHECKOUT_FORM_FIELD = '_checkout';
/** A form token is accepted this long after it was issued, in seconds (LIM-4); its row is purged after as long. */
export const CHECKOUT_FORM_MAX_SECONDS = 8 * 24 * 3600;
/** What the MAC of a form token is for. */
const PURPOSE = 'checkout-form';
/** Inside the MAC: the nonce (16 random bytes) and the issue time (seconds since the epoch, base 36). */
const BODY = /^[A-Za-z0-9_-]{22}\.([0-9a-z]{1,10})$/;

/** A form token issued to the session it is used in, not older than CHECKOUT_FORM_MAX_SECONDS ({@link issuedCheckoutForm}). */
export type IssuedFormToken = string & { readonly issuedToSession: true };

/** A token row locked for a submit. `attempts`: committed failed payment attempts of this form so far. */
export interface LockedCheckoutForm {
  key: string;
  attempts: number;
}

/** The order-group idempotency key of a form token (never the token itself: only its hash is stored). */
function checkoutKey(token: IssuedFormToken): string {
  return `dashboard-checkout:${sha256(token)}`;
}

/**
 * Issues the token of one rendered checkout form for this session: `<nonce>.<issued>.<MAC>`. Writes nothing.
 * @param secret ctx.secrets.fileUrlSecret.
 */
export function issueCheckoutForm(secret: string, session: DashboardSession, now = Date.now()): string {
  return signToken(secret, PURPOSE, `${randomToken(16)}.${Math.floor(now / 1000).toString(36)}`, session.idHash);
}

/**
 * `token` when it was issued to this session (its MAC holds) at most CHECKOUT_FORM_MAX_SECONDS ago, else null (a
 * stale, foreign or forged form: "This order form has expired"). No database work.
 */
export function issuedCheckoutForm(
  secret: string,
  session: DashboardSession,
  token: string,
  now = Date.now(),
): IssuedFormToken | null {
  const body = verifiedToken(secret, PURPOSE, token, session.idHash);
  const issued = body ? BODY.exec(body) : null;
  if (!issued) return null;
  const ageSeconds = now / 1000 - Number.parseInt(issued[1], 36);
  return ageSeconds >= -60 && ageSeconds <= CHECKOUT_FORM_MAX_SECONDS ? (token as IssuedFormToken) : null;
}

/**
 * Creates the token's row on its first submit and locks it for the rest of the caller's transaction (a concurrent
 * submit of the same form waits here until this one commits or rolls back).
 * @returns null when the row belongs to another session (which a token's MAC already rules out).
 */
export async function lockCheckoutForm(
  tx: Db,
  session: DashboardSession,
  token: IssuedFormToken,
): Promise<LockedCheckoutForm | null> {
  const row = await repo.claimCheckoutFormRow(tx, sha256(token), session.idHash, session.tenant);
  return row ? { key: checkoutKey(token), attempts: row.attempts } : null;
}

/** Counts a failed payment attempt, so the next submit of the form is a new charge at the provider. */
export async function countFailedAttempt(db: Db, token: IssuedFormToken): Promise<void> {
  await repo.incrementFormAttempts(db, sha256(token));
}

/** The order group an earlier submit of this form placed, or null. */
export async function placedByForm(
  db: Db,
  tenant: Tenant,
  token: IssuedFormToken,
): Promise<{ groupId: string; companyId: string } | null> {
  const group = await findGroupByIdempotencyKey(db, tenant, checkoutKey(token));
  return group ? { groupId: group.id, companyId: group.company_id } : null;
}

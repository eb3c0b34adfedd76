import type { Db } from '../../lib/db.js';
import { randomToken, sha256 } from '../../lib/secrets.js';
import { signToken, verifiedToken } from '../../lib/signed-tokens.js';
import * as repo from './operators.repo.js';

/** Console sessions last 12 hours from sign-in (a working day), then the operator signs in again. */
export const SESSION_TTL_SECONDS = 12 * 60 * 60;

/** The signed-in operator a request acts for, with the session's CSRF synchronizer token. */
export interface ConsoleSession {
  idHash: string;
  csrfToken: string;
  expiresAt: Date;
  operator: { id: string; email: string; name: string };
}

/**
 * Starts a session (AUTH-7). Only the sha256 of the session id is stored; the id itself goes in
 * the cookie. The CSRF token is a separate random value kept with the session (synchronizer pattern).
 * @returns the raw session id for the cookie.
 */
export async function createSession(db: Db, operatorId: string): Promise<{ sessionId: string; expiresAt: Date }> {
  const sessionId = randomToken(32);
  const expiresAt = await repo.insertSession(db, sha256(sessionId), operatorId, randomToken(32), SESSION_TTL_SECONDS);
  return { sessionId, expiresAt };
}

/** What the MAC of a console session cookie is for (AUTH-14). */
const COOKIE_PURPOSE = 'console-session';

/**
 * The value of the session cookie for a session id: the id with its MAC under the server secret (AUTH-7, AUTH-14).
 * @param secret ctx.secrets.fileUrlSecret.
 */
export function sessionCookieValue(secret: string, sessionId: string): string {
  return signToken(secret, COOKIE_PURPOSE, sessionId);
}

/**
 * The session id inside a cookie value when its MAC holds, else null: a forged or altered cookie, or one made before
 * cookies carried a MAC, is refused without a look-up (AUTH-14).
 */
export function sessionIdOf(secret: string, cookie: string | undefined): string | null {
  return verifiedToken(secret, COOKIE_PURPOSE, cookie);
}

/** The live session of a session id (from {@link sessionIdOf}): not revoked, not expired, operator not disabled; else null. */
export async function findSession(db: Db, sessionId: string): Promise<ConsoleSession | null> {
  const row = await repo.findLiveSession(db, sha256(sessionId));
  if (!row) return null;
  return {
    idHash: row.id_hash,
    csrfToken: row.csrf_token,
    expiresAt: row.expires_at,
    operator: { id: row.id, email: row.email, name: row.name },
  };
}

/** Signs a session out (the cookie value stops working at once). */
export async function revokeSession(db: Db, idHash: string): Promise<void> {
  await repo.revokeSessionRow(db, idHash);
}

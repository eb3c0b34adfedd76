import type { Db } from '../../lib/db.js';
import { randomToken, sha256 } from '../../lib/secrets.js';
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

/** The live session for a cookie value: not revoked, not expired, operator not disabled; else null. */
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

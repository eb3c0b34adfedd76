import type pg from 'pg';
import type { Tenant } from '../../context.js';
import { withTransaction, type Db } from '../../lib/db.js';
import { randomToken, sha256 } from '../../lib/secrets.js';
import { signToken, verifiedToken } from '../../lib/signed-tokens.js';
import { consumeMagicLink } from '../magic-links/magic-links.repo.js';
import * as repo from './dashboard.repo.js';

/** Name of the dashboard session cookie (HttpOnly, SameSite=Lax, Secure under https, path-scoped). */
export const SESSION_COOKIE = 'fcs_dashboard';
/** A session ends after this many seconds without a request (AUTH-6, LIM-4). */
export const SESSION_IDLE_SECONDS = 12 * 3600;
/** ...and at the latest this many seconds after sign-in, however active. */
export const SESSION_MAX_SECONDS = 7 * 24 * 3600;
/** The idle timer is moved at most this often (seconds), so page views write nothing in between. */
const SESSION_TOUCH_SECONDS = 60;
/** What the MAC of a session cookie is for (AUTH-14). */
const COOKIE_PURPOSE = 'dashboard-session';

/** A signed-in dashboard user. The session id itself lives only in the cookie; the database keeps its sha256. */
export interface DashboardSession {
  idHash: string;
  tenant: Tenant;
  userId: string;
  /** Synchronizer token every state-changing form must echo as `_csrf`. */
  csrfToken: string;
}

const TOKEN_SHAPE = /^[A-Za-z0-9_-]{32,128}$/;

/**
 * Spends a magic-link token and opens a session for its user, in one transaction. Concurrent opens of the
 * same link race on one UPDATE; exactly one gets a session (ML-3).
 * `where.organizationId`: on a white-label host only that organization's links are accepted; `where.host`: the
 * request's host name, which must be the one the link was issued for (`defaultHost` for links that name none).
 * @returns the new session id (for the cookie) and the company the link lands on, or null when the token is
 *          unknown, used, expired, belongs to another organization or to another host.
 */
export async function startSessionFromLink(
  pool: pg.Pool,
  token: string,
  where: { organizationId: string | null; host: string; defaultHost: string },
): Promise<{ sessionId: string; session: DashboardSession; companyId: string | null } | null> {
  if (!TOKEN_SHAPE.test(token)) return null;
  return withTransaction(pool, async (tx) => {
    const link = await consumeMagicLink(tx, sha256(token), where);
    if (!link) return null;
    const sessionId = randomToken(32);
    const csrfToken = randomToken(32);
    const idHash = sha256(sessionId);
    await repo.insertSession(tx, {
      idHash,
      organizationId: link.organization_id,
      environment: link.environment,
      userId: link.user_id,
      magicLinkId: link.id,
      csrfToken,
      maxSeconds: SESSION_MAX_SECONDS,
    });
    const session: DashboardSession = {
      idHash,
      userId: link.user_id,
      csrfToken,
      tenant: { organizationId: link.organization_id, environment: link.environment },
    };
    return { sessionId, session, companyId: link.company_id };
  });
}

/**
 * The value of the session cookie for a session id: the id with its MAC under the server secret (AUTH-6, AUTH-14).
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
  const sessionId = verifiedToken(secret, COOKIE_PURPOSE, cookie);
  return sessionId && TOKEN_SHAPE.test(sessionId) ? sessionId : null;
}

/**
 * The live session of a session id (from {@link sessionIdOf}), moving its idle timer when it was last moved more than
 * a minute ago; null when unknown, signed out, idle for longer than SESSION_IDLE_SECONDS or past its absolute expiry.
 */
export async function findSession(db: Db, sessionId: string): Promise<DashboardSession | null> {
  const row = await repo.touchLiveSession(db, sha256(sessionId), SESSION_IDLE_SECONDS, SESSION_TOUCH_SECONDS);
  if (!row) return null;
  return {
    idHash: row.id_hash,
    userId: row.user_id,
    csrfToken: row.csrf_token,
    tenant: { organizationId: row.organization_id, environment: row.environment },
  };
}

/** Signs a session out for good (the cookie is cleared by the caller). */
export async function revokeSession(db: Db, idHash: string): Promise<void> {
  await repo.revokeSessionRow(db, idHash);
}

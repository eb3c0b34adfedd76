import type { Db } from '../../lib/db.js';
import { newId } from '../../lib/ids.js';
import { randomToken, sha256 } from '../../lib/secrets.js';
import { signToken, verifiedToken } from '../../lib/signed-tokens.js';
import type { Environment } from '../../lib/tenant.js';
import type { MembershipRow } from './members.repo.js';
import type { Role } from './roles.js';
import * as repo from './sessions.repo.js';

/** A portal session ends after this many seconds without a request (PORTAL-6). */
export const SESSION_IDLE_SECONDS = 12 * 3600;
/** ...and at the latest this many seconds after sign-in, however active (PORTAL-6). */
export const SESSION_MAX_SECONDS = 7 * 24 * 3600;
/** A session waiting for its second factor lasts this long (PORTAL-5). */
const PENDING_SECONDS = 10 * 60;
/** The idle timer is moved at most this often (seconds), so page views write nothing in between. */
const SESSION_TOUCH_SECONDS = 60;
/** What the MAC of a portal session cookie is for (AUTH-14's scheme, a purpose of its own). */
const COOKIE_PURPOSE = 'portal-session';
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{32,128}$/;

/** The signed-in member of a /portal request, the organization and environment shown, and the CSRF token. */
export interface PortalSession {
  idHash: string;
  /** The session's listed id (psess_…), never the session id itself. */
  id: string;
  csrfToken: string;
  /** Signed in with the password only: the second factor is still to come (PORTAL-5). */
  pending: boolean;
  /** When the session last proved the second factor (sign-in, enrolment or step-up, PORTAL-10); null if never. */
  secondFactorAt: Date | null;
  member: { id: string; email: string; name: string; totpEnabled: boolean };
  memberships: MembershipRow[];
  /** The organization shown and the member's role in it; null when the member belongs to none. */
  organization: { id: string; name: string; role: Role } | null;
  environment: Environment;
}

/**
 * Starts a session for a member after the password (PORTAL-4): pending (PENDING_SECONDS) when the member has a second
 * factor to give, else full (SESSION_MAX_SECONDS). Only the sha256 of the session id is stored.
 * @returns the raw session id for the cookie.
 */
export async function createSession(
  db: Db,
  input: { memberId: string; pending: boolean; clientAddress: string; userAgent: string },
): Promise<string> {
  const sessionId = randomToken(32);
  await repo.insertSession(
    db,
    {
      idHash: sha256(sessionId),
      id: newId('portalSession'),
      memberId: input.memberId,
      csrfToken: randomToken(32),
      pending: input.pending,
      clientAddress: input.clientAddress,
      userAgent: input.userAgent.slice(0, 300),
    },
    input.pending ? PENDING_SECONDS : SESSION_MAX_SECONDS,
  );
  return sessionId;
}

/** The cookie value of a session id: the id with its MAC under the server secret. */
export function sessionCookieValue(secret: string, sessionId: string): string {
  return signToken(secret, COOKIE_PURPOSE, sessionId);
}

/** The session id inside a cookie value when its MAC holds; a forged or altered cookie is refused without a look-up. */
export function sessionIdOf(secret: string, cookie: string | undefined): string | null {
  const sessionId = verifiedToken(secret, COOKIE_PURPOSE, cookie);
  return sessionId && TOKEN_SHAPE.test(sessionId) ? sessionId : null;
}

/** The live session row of a session id, its idle timer moved (PORTAL-6); null when unknown, revoked, idle or expired. */
export function findLiveSession(db: Db, sessionId: string): Promise<repo.LiveSessionRow | null> {
  return repo.touchLiveSession(db, sha256(sessionId), SESSION_IDLE_SECONDS, SESSION_TOUCH_SECONDS);
}

/**
 * Assembles the request's session from its row and the member's organizations: the organization shown is the one
 * the session chose while the member still belongs to it, else the first (PORTAL-7).
 */
export function portalSessionOf(row: repo.LiveSessionRow, memberships: MembershipRow[]): PortalSession {
  const chosen = memberships.find((m) => m.organization_id === row.organization_id) ?? memberships[0] ?? null;
  return {
    idHash: row.id_hash,
    id: row.id,
    csrfToken: row.csrf_token,
    pending: row.second_factor_pending,
    secondFactorAt: row.second_factor_at,
    member: { id: row.member_id, email: row.email, name: row.name, totpEnabled: row.totp_enabled_at !== null },
    memberships,
    organization: chosen ? { id: chosen.organization_id, name: chosen.organization_name, role: chosen.role } : null,
    environment: row.environment,
  };
}

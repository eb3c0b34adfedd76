import { many, one, type Db } from '../../lib/db.js';
import type { Environment } from '../../lib/tenant.js';

/** A live portal session with its member, as the authentication hook reads it. */
export interface LiveSessionRow {
  id_hash: string;
  id: string;
  csrf_token: string;
  second_factor_pending: boolean;
  second_factor_at: Date | null;
  organization_id: string | null;
  environment: Environment;
  member_id: string;
  email: string;
  name: string;
  totp_enabled_at: Date | null;
}

/** A session as the member's session list shows it. */
export interface SessionListRow {
  id: string;
  id_hash: string;
  client_address: string;
  user_agent: string;
  created_at: Date;
  last_seen_at: Date;
  expires_at: Date;
}

/** Inserts a session ending `maxSeconds` from now at the latest. */
export async function insertSession(
  db: Db,
  s: {
    idHash: string;
    id: string;
    memberId: string;
    csrfToken: string;
    pending: boolean;
    clientAddress: string;
    userAgent: string;
  },
  maxSeconds: number,
): Promise<void> {
  await db.query(
    `INSERT INTO portal_sessions (id_hash, id, member_id, csrf_token, second_factor_pending, client_address, user_agent, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, now() + make_interval(secs => $8))`,
    [s.idHash, s.id, s.memberId, s.csrfToken, s.pending, s.clientAddress, s.userAgent, maxSeconds],
  );
}

/**
 * The live session of `idHash` (not revoked, before its absolute expiry, not idle for `idleSeconds`, member not
 * disabled), moving its idle timer when last moved more than `touchSeconds` ago, in the same statement.
 */
export function touchLiveSession(
  db: Db,
  idHash: string,
  idleSeconds: number,
  touchSeconds: number,
): Promise<LiveSessionRow | null> {
  return one<LiveSessionRow>(
    db,
    `WITH live AS (
       SELECT s.id_hash, s.id, s.csrf_token, s.second_factor_pending, s.second_factor_at, s.organization_id,
              s.environment, s.last_seen_at, m.id AS member_id, m.email, m.name, m.totp_enabled_at
         FROM portal_sessions s JOIN members m ON m.id = s.member_id
        WHERE s.id_hash = $1 AND s.revoked_at IS NULL AND s.expires_at > now()
          AND s.last_seen_at > now() - make_interval(secs => $2) AND m.disabled_at IS NULL
     ), touched AS (
       UPDATE portal_sessions p SET last_seen_at = now() FROM live
        WHERE p.id_hash = live.id_hash AND live.last_seen_at < now() - make_interval(secs => $3)
     )
     SELECT id_hash, id, csrf_token, second_factor_pending, second_factor_at, organization_id, environment, member_id,
            email, name, totp_enabled_at
       FROM live`,
    [idHash, idleSeconds, touchSeconds],
  );
}

/**
 * Completes a session's sign-in with its second factor: no longer pending, the factor's time noted, and the absolute
 * expiry of a full session (`maxSeconds` after it started).
 */
export async function completeSecondFactor(db: Db, idHash: string, maxSeconds: number): Promise<void> {
  await db.query(
    `UPDATE portal_sessions SET second_factor_pending = false, second_factor_at = now(),
            expires_at = created_at + make_interval(secs => $2)
      WHERE id_hash = $1 AND revoked_at IS NULL`,
    [idHash, maxSeconds],
  );
}

/** Notes a second-factor proof of a full, live session now (a step-up, PORTAL-10). */
export async function noteSecondFactor(db: Db, idHash: string): Promise<void> {
  await db.query(
    'UPDATE portal_sessions SET second_factor_at = now() WHERE id_hash = $1 AND NOT second_factor_pending AND revoked_at IS NULL',
    [idHash],
  );
}

/** Sets the organization and environment a session shows. */
export async function setSessionView(
  db: Db,
  idHash: string,
  organizationId: string,
  environment: Environment,
): Promise<void> {
  await db.query('UPDATE portal_sessions SET organization_id = $2, environment = $3 WHERE id_hash = $1', [
    idHash,
    organizationId,
    environment,
  ]);
}

/** A member's live sessions (not revoked, not expired, not idle for `idleSeconds`), newest first. */
export function listLiveSessions(db: Db, memberId: string, idleSeconds: number): Promise<SessionListRow[]> {
  return many<SessionListRow>(
    db,
    `SELECT id, id_hash, client_address, user_agent, created_at, last_seen_at, expires_at FROM portal_sessions
      WHERE member_id = $1 AND revoked_at IS NULL AND expires_at > now()
        AND last_seen_at > now() - make_interval(secs => $2)
      ORDER BY created_at DESC, id DESC LIMIT 100`,
    [memberId, idleSeconds],
  );
}

/** Revokes one session of a member by its listed id. @returns whether a live one was revoked. */
export async function revokeMemberSession(db: Db, memberId: string, id: string): Promise<boolean> {
  const res = await db.query(
    'UPDATE portal_sessions SET revoked_at = now() WHERE member_id = $1 AND id = $2 AND revoked_at IS NULL',
    [memberId, id],
  );
  return (res.rowCount ?? 0) > 0;
}

/** Revokes a session by its id hash (sign-out). */
export async function revokeSessionByHash(db: Db, idHash: string): Promise<void> {
  await db.query('UPDATE portal_sessions SET revoked_at = now() WHERE id_hash = $1 AND revoked_at IS NULL', [idHash]);
}

/** Revokes every live session of a member but `keepIdHash` (a password change signs the others out). */
export async function revokeOtherSessions(db: Db, memberId: string, keepIdHash: string | null): Promise<number> {
  const res = await db.query(
    `UPDATE portal_sessions SET revoked_at = now()
      WHERE member_id = $1 AND revoked_at IS NULL AND id_hash IS DISTINCT FROM $2`,
    [memberId, keepIdHash],
  );
  return res.rowCount ?? 0;
}

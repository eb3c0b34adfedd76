import { one, type Db } from '../../lib/db.js';
import type { Role } from './roles.js';

/** A portal invitation (PORTAL-3); only the sha256 of its token is kept. */
export interface InvitationRow {
  id: string;
  organization_id: string;
  organization_name: string;
  email: string;
  role: Role;
  expires_at: Date;
  accepted_at: Date | null;
}

/** Records an invitation valid for `ttlSeconds` from now by the database clock. @returns its expiry. */
export async function insertInvitation(
  db: Db,
  inv: { id: string; organizationId: string; email: string; role: Role; tokenHash: string; invitedBy: string },
  ttlSeconds: number,
): Promise<Date> {
  const row = await one<{ expires_at: Date }>(
    db,
    `INSERT INTO portal_invitations (id, organization_id, email, role, token_hash, invited_by, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(secs => $7)) RETURNING expires_at`,
    [inv.id, inv.organizationId, inv.email, inv.role, inv.tokenHash, inv.invitedBy, ttlSeconds],
  );
  return row!.expires_at;
}

/** The invitation of a token hash while it can still be accepted (not accepted, not expired); else null. */
export function findOpenInvitation(db: Db, tokenHash: string): Promise<InvitationRow | null> {
  return one<InvitationRow>(
    db,
    `SELECT i.id, i.organization_id, o.name AS organization_name, i.email, i.role, i.expires_at, i.accepted_at
       FROM portal_invitations i JOIN organizations o ON o.id = i.organization_id
      WHERE i.token_hash = $1 AND i.accepted_at IS NULL AND i.expires_at > now()`,
    [tokenHash],
  );
}

/**
 * Spends an open invitation for `memberId`: one UPDATE, so of two concurrent acceptances exactly one gets the row
 * (PORTAL-3). @returns the invitation, or null when unknown, accepted already or expired.
 */
export function acceptInvitation(db: Db, tokenHash: string, memberId: string): Promise<InvitationRow | null> {
  return one<InvitationRow>(
    db,
    `UPDATE portal_invitations i SET accepted_at = now(), accepted_by = $2
       FROM organizations o
      WHERE o.id = i.organization_id AND i.token_hash = $1 AND i.accepted_at IS NULL AND i.expires_at > now()
      RETURNING i.id, i.organization_id, o.name AS organization_name, i.email, i.role, i.expires_at, i.accepted_at`,
    [tokenHash, memberId],
  );
}

/** Records a password reset valid for `ttlSeconds`; earlier unused ones of the member stop working. */
export async function insertPasswordReset(
  db: Db,
  reset: { id: string; memberId: string; tokenHash: string },
  ttlSeconds: number,
): Promise<void> {
  await db.query('UPDATE portal_password_resets SET used_at = now() WHERE member_id = $1 AND used_at IS NULL', [
    reset.memberId,
  ]);
  await db.query(
    `INSERT INTO portal_password_resets (id, member_id, token_hash, expires_at)
     VALUES ($1, $2, $3, now() + make_interval(secs => $4))`,
    [reset.id, reset.memberId, reset.tokenHash, ttlSeconds],
  );
}

/** The member of an open reset token (unused, unexpired, member not disabled); null otherwise. */
export async function findOpenReset(db: Db, tokenHash: string): Promise<{ member_id: string; email: string } | null> {
  return one<{ member_id: string; email: string }>(
    db,
    `SELECT r.member_id, m.email FROM portal_password_resets r JOIN members m ON m.id = r.member_id
      WHERE r.token_hash = $1 AND r.used_at IS NULL AND r.expires_at > now() AND m.disabled_at IS NULL`,
    [tokenHash],
  );
}

/** Spends an open reset token (one UPDATE: a token works once). @returns its member id, or null. */
export async function spendReset(db: Db, tokenHash: string): Promise<string | null> {
  const row = await one<{ member_id: string }>(
    db,
    `UPDATE portal_password_resets SET used_at = now()
      WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now() RETURNING member_id`,
    [tokenHash],
  );
  return row?.member_id ?? null;
}

import { many, one, type Db } from '../../lib/db.js';
import type { Role } from './roles.js';

/** A portal member (PORTAL-1). `password_hash` and `totp_sealed` never leave the portal module. */
export interface MemberRow {
  id: string;
  email: string;
  name: string;
  password_hash: string;
  totp_sealed: string | null;
  totp_enabled_at: Date | null;
  totp_last_step: string | null;
  created_at: Date;
  disabled_at: Date | null;
}

/** One organization a member belongs to, with the role there. */
export interface MembershipRow {
  organization_id: string;
  organization_name: string;
  role: Role;
}

/** A member of one organization, as its member list shows them. */
export interface OrganizationMemberRow {
  member_id: string;
  email: string;
  name: string;
  role: Role;
  totp_enabled_at: Date | null;
  created_at: Date;
}

/** Inserts a member. @throws the unique violation of members_email_lower for a taken e-mail. */
export function insertMember(
  db: Db,
  m: { id: string; email: string; name: string; passwordHash: string },
): Promise<MemberRow | null> {
  return one<MemberRow>(
    db,
    'INSERT INTO members (id, email, name, password_hash) VALUES ($1, $2, $3, $4) RETURNING *',
    [m.id, m.email, m.name, m.passwordHash],
  );
}

/** The member with this e-mail (case-insensitive), disabled or not; null when none. */
export function findMemberByEmail(db: Db, email: string): Promise<MemberRow | null> {
  return one<MemberRow>(db, 'SELECT * FROM members WHERE lower(email) = lower($1)', [email]);
}

/** The member of an id; null when none. */
export function findMember(db: Db, id: string): Promise<MemberRow | null> {
  return one<MemberRow>(db, 'SELECT * FROM members WHERE id = $1', [id]);
}

/** Replaces a member's password hash (computed before, outside any transaction). */
export async function updatePasswordHash(db: Db, id: string, passwordHash: string): Promise<void> {
  await db.query('UPDATE members SET password_hash = $2 WHERE id = $1', [id, passwordHash]);
}

/** Every organization of a member, by name. */
export function listMemberships(db: Db, memberId: string): Promise<MembershipRow[]> {
  return many<MembershipRow>(
    db,
    `SELECT m.organization_id, o.name AS organization_name, m.role
       FROM organization_memberships m JOIN organizations o ON o.id = m.organization_id
      WHERE m.member_id = $1 ORDER BY o.name, m.organization_id`,
    [memberId],
  );
}

/**
 * Adds a member to an organization; an existing membership keeps its role (an invitation never demotes).
 * @returns whether a membership was added.
 */
export async function addMembership(db: Db, organizationId: string, memberId: string, role: Role): Promise<boolean> {
  const { rowCount } = await db.query(
    `INSERT INTO organization_memberships (organization_id, member_id, role) VALUES ($1, $2, $3)
     ON CONFLICT (organization_id, member_id) DO NOTHING`,
    [organizationId, memberId, role],
  );
  return rowCount === 1;
}

/** The members of an organization, owners first. */
export function listOrganizationMembers(db: Db, organizationId: string): Promise<OrganizationMemberRow[]> {
  return many<OrganizationMemberRow>(
    db,
    `SELECT m.member_id, p.email, p.name, m.role, p.totp_enabled_at, m.created_at
       FROM organization_memberships m JOIN members p ON p.id = m.member_id
      WHERE m.organization_id = $1
      ORDER BY array_position(ARRAY['owner','admin','developer','viewer'], m.role), lower(p.email)`,
    [organizationId],
  );
}

/** Locks an organization's memberships for a change to them (the last owner is never removed). */
export async function lockMemberships(tx: Db, organizationId: string): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`portal-members:${organizationId}`]);
}

/** The role of a member in an organization; null when not a member. */
export async function roleIn(db: Db, organizationId: string, memberId: string): Promise<Role | null> {
  const row = await one<{ role: Role }>(
    db,
    'SELECT role FROM organization_memberships WHERE organization_id = $1 AND member_id = $2',
    [organizationId, memberId],
  );
  return row?.role ?? null;
}

/** How many owners an organization has. */
export async function countOwners(db: Db, organizationId: string): Promise<number> {
  const row = await one<{ n: number }>(
    db,
    `SELECT count(*)::int AS n FROM organization_memberships WHERE organization_id = $1 AND role = 'owner'`,
    [organizationId],
  );
  return row?.n ?? 0;
}

/** Removes a membership. @returns whether there was one. */
export async function deleteMembership(db: Db, organizationId: string, memberId: string): Promise<boolean> {
  const res = await db.query('DELETE FROM organization_memberships WHERE organization_id = $1 AND member_id = $2', [
    organizationId,
    memberId,
  ]);
  return (res.rowCount ?? 0) > 0;
}

/** Keeps a new, not yet trusted authenticator secret (sealed) for the enrolment under way. */
export async function setPendingTotp(db: Db, id: string, sealed: string): Promise<void> {
  await db.query('UPDATE members SET totp_sealed = $2, totp_enabled_at = NULL, totp_last_step = NULL WHERE id = $1', [
    id,
    sealed,
  ]);
}

/**
 * Takes a TOTP step as used, when it is later than the last one used (PORTAL-5: a code works once).
 * `enable`: also trusts the secret (the enrolment's confirming code). @returns false when the step was used already.
 */
export async function useTotpStep(db: Db, id: string, step: number, enable: boolean): Promise<boolean> {
  const res = await db.query(
    `UPDATE members SET totp_last_step = $2,
            totp_enabled_at = CASE WHEN $3 THEN coalesce(totp_enabled_at, now()) ELSE totp_enabled_at END
      WHERE id = $1 AND totp_sealed IS NOT NULL AND (totp_last_step IS NULL OR totp_last_step < $2)`,
    [id, step, enable],
  );
  return (res.rowCount ?? 0) > 0;
}

/** Replaces a member's recovery codes by new ones (their sha256 only). */
export async function replaceRecoveryCodes(tx: Db, memberId: string, hashes: string[]): Promise<void> {
  await tx.query('DELETE FROM member_recovery_codes WHERE member_id = $1', [memberId]);
  await tx.query(
    'INSERT INTO member_recovery_codes (member_id, code_hash) SELECT $1, unnest($2::text[]) ON CONFLICT DO NOTHING',
    [memberId, hashes],
  );
}

/** Spends a recovery code. @returns false when it is unknown or spent already. */
export async function spendRecoveryCode(db: Db, memberId: string, hash: string): Promise<boolean> {
  const res = await db.query(
    'UPDATE member_recovery_codes SET used_at = now() WHERE member_id = $1 AND code_hash = $2 AND used_at IS NULL',
    [memberId, hash],
  );
  return (res.rowCount ?? 0) > 0;
}

/** How many unspent recovery codes a member has. */
export async function countRecoveryCodes(db: Db, memberId: string): Promise<number> {
  const row = await one<{ n: number }>(
    db,
    'SELECT count(*)::int AS n FROM member_recovery_codes WHERE member_id = $1 AND used_at IS NULL',
    [memberId],
  );
  return row?.n ?? 0;
}

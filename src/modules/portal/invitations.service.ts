import validator from 'validator';
import type { AppContext } from '../../context.js';
import { type Db, isUniqueViolation, one, withTransaction } from '../../lib/db.js';
import { AppError, FieldErrors, notFound } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { randomToken, sha256 } from '../../lib/secrets.js';
import { invitationSnapshot, memberSnapshot } from '../audit/audit-redaction.js';
import { type AuditActor, recordAudit } from '../audit/audit.service.js';
import * as members from './members.repo.js';
import { passwordProblem, type PortalPasswords } from './password-checks.js';
import { isRole, ROLES, type Role } from './roles.js';
import { createSession } from './sessions.js';
import * as tokens from './tokens.repo.js';

/** An invitation is good for 72 hours from its creation, once (PORTAL-3). */
const INVITATION_TTL_SECONDS = 72 * 3600;

/** A new invitation: the link to send (its token appears nowhere else) and its expiry. */
export interface CreatedInvitation {
  id: string;
  invitationUrl: string;
  expiresAt: Date;
}

/**
 * Invites `email` into an organization as `role` (PORTAL-3): a single-use link valid for 72 hours whose token is
 * kept only as its sha256. `invitedBy`: 'operator' (admin API), 'cli', or 'member:<id>' (the caller has checked the
 * member's right to invite that role, PORTAL-2). `audit`: who is recorded in the audit log, in the invitation's
 * transaction (AUDIT-1, AUDIT-2); null only for the demo organization's first invitation, which no one made.
 * @throws ValidationError naming `email` or `role`; AppError not_found for an unknown organization.
 */
export async function createInvitation(
  ctx: AppContext,
  input: { organizationId: string; email: string; role: string; invitedBy: string; audit: AuditActor | null },
): Promise<CreatedInvitation> {
  const email = input.email.trim();
  const errors = new FieldErrors();
  if (!validator.isEmail(email) || email.length > 254) errors.add('email', 'must be an e-mail address');
  if (!isRole(input.role)) errors.add('role', `must be one of ${ROLES.join(', ')}`);
  errors.throwIfAny();
  const org = await one<{ id: string }>(ctx.pool, 'SELECT id FROM organizations WHERE id = $1', [input.organizationId]);
  if (!org) throw notFound('organization', input.organizationId);
  const token = randomToken(32);
  const id = newId('portalInvitation');
  const role = input.role as Role;
  const expiresAt = await withTransaction(ctx.pool, async (tx) => {
    const expires = await tokens.insertInvitation(
      tx,
      { id, organizationId: org.id, email, role, tokenHash: sha256(token), invitedBy: input.invitedBy },
      INVITATION_TTL_SECONDS,
    );
    if (input.audit)
      await recordAudit(tx, {
        actor: input.audit,
        organizationId: org.id,
        environment: null,
        action: 'invitation.created',
        targetId: id,
        before: null,
        after: invitationSnapshot({ id, email, role, expiresAt: expires }),
      });
    return expires;
  });
  return { id, invitationUrl: invitationUrl(ctx, token), expiresAt };
}

/** The link of an invitation token (PORTAL_BASE_URL; the token in the query, which logs never show). */
function invitationUrl(ctx: AppContext, token: string): string {
  return `${ctx.config.portalBaseUrl}/invitation?token=${encodeURIComponent(token)}`;
}

/** The open invitation of a token (not accepted, not expired); null otherwise. */
export function openInvitation(ctx: AppContext, token: string): Promise<tokens.InvitationRow | null> {
  return token ? tokens.findOpenInvitation(ctx.pool, sha256(token)) : Promise.resolve(null);
}

/** Whether a member with the invitation's e-mail exists (they accept signed in, without a new password). */
export async function inviteeHasAccount(ctx: AppContext, email: string): Promise<boolean> {
  return (await members.findMemberByEmail(ctx.pool, email)) !== null;
}

/** Outcome of accepting an invitation as a new member. */
export type AcceptOutcome =
  | { ok: true; sessionId: string; organizationId: string }
  | { ok: false; reason: 'gone' }
  | { ok: false; reason: 'busy' }
  | { ok: false; reason: 'taken' }
  | { ok: false; reason: 'invalid'; message: string };

/**
 * Accepts an invitation by creating the member it names (PORTAL-3, PORTAL-4): the password is checked for length and
 * hashed through the bounded queue first, outside any transaction; then one transaction spends the invitation (of
 * two acceptances of one link exactly one succeeds), creates the member and the membership, and starts a session.
 */
export async function acceptAsNewMember(
  ctx: AppContext,
  passwords: PortalPasswords,
  input: { token: string; name: string; password: string; confirm: string; address: string; userAgent: string },
): Promise<AcceptOutcome> {
  const invitation = await openInvitation(ctx, input.token);
  if (!invitation) return { ok: false, reason: 'gone' };
  const name = input.name.trim();
  if (!name || name.length > 200)
    return { ok: false, reason: 'invalid', message: 'Enter your name (at most 200 characters).' };
  const problem = passwordProblem(input.password, input.confirm, invitation.email);
  if (problem) return { ok: false, reason: 'invalid', message: problem };
  const passwordHash = await passwords.hashNew(input.password);
  if (!passwordHash) return { ok: false, reason: 'busy' };
  const memberId = newId('member');
  try {
    return await withTransaction(ctx.pool, async (tx) => {
      const spent = await tokens.acceptInvitation(tx, sha256(input.token), memberId);
      if (!spent) return { ok: false as const, reason: 'gone' as const };
      await members.insertMember(tx, { id: memberId, email: spent.email, name, passwordHash });
      await members.addMembership(tx, spent.organization_id, memberId, spent.role);
      await recordJoin(tx, spent, { id: memberId, email: spent.email, name }, input.address);
      const sessionId = await createSession(tx, {
        memberId,
        pending: false,
        clientAddress: input.address,
        userAgent: input.userAgent,
      });
      return { ok: true as const, sessionId, organizationId: spent.organization_id };
    });
  } catch (err) {
    // The e-mail got an account meanwhile (another invitation accepted first): they accept signed in instead.
    if (isUniqueViolation(err)) return { ok: false, reason: 'taken' };
    throw err;
  }
}

/**
 * Accepts an invitation for the signed-in member it was sent to (PORTAL-3): spends it and adds the membership (an
 * existing membership keeps its role), in one transaction with its audit entry when it made a membership (AUDIT-1).
 * @throws AppError not_found when the invitation is gone; forbidden when it names another e-mail address.
 */
export async function acceptAsMember(
  ctx: AppContext,
  member: { id: string; email: string; name: string },
  token: string,
  address: string,
): Promise<{ organizationId: string; organizationName: string }> {
  const invitation = await openInvitation(ctx, token);
  if (!invitation) throw new AppError('not_found', 'This invitation was used already or has expired.');
  if (invitation.email.toLowerCase() !== member.email.toLowerCase())
    throw new AppError(
      'forbidden',
      `This invitation is for ${invitation.email}; you are signed in as ${member.email}.`,
    );
  return withTransaction(ctx.pool, async (tx) => {
    const spent = await tokens.acceptInvitation(tx, sha256(token), member.id);
    if (!spent) throw new AppError('not_found', 'This invitation was used already or has expired.');
    if (await members.addMembership(tx, spent.organization_id, member.id, spent.role))
      await recordJoin(tx, spent, member, address);
    return { organizationId: spent.organization_id, organizationName: spent.organization_name };
  });
}

// AUDIT-1: the newcomer joining by an invitation is recorded as the member who acted, from the accepting request.
async function recordJoin(
  tx: Db,
  spent: tokens.InvitationRow,
  member: { id: string; email: string; name: string },
  address: string,
): Promise<void> {
  await recordAudit(tx, {
    actor: { kind: 'member', id: member.id, label: member.email, address },
    organizationId: spent.organization_id,
    environment: null,
    action: 'member.added',
    targetId: member.id,
    before: null,
    after: memberSnapshot(member, spent.role),
  });
}

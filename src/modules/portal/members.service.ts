import type { AppContext } from '../../context.js';
import { withTransaction } from '../../lib/db.js';
import { AppError } from '../../lib/errors.js';
import { memberSnapshot } from '../audit/audit-redaction.js';
import { type AuditActor, recordAudit } from '../audit/audit.service.js';
import { createInvitation, type CreatedInvitation } from './invitations.service.js';
import * as repo from './members.repo.js';
import { can, canManageMember, isRole, type Role } from './roles.js';

/** The acting member and their role in the organization shown (from the session). */
export interface Actor {
  memberId: string;
  organizationId: string;
  role: Role;
}

/** The organization's members, for those who may see them (PORTAL-2). @throws AppError forbidden otherwise. */
export async function listMembers(ctx: AppContext, actor: Actor): Promise<repo.OrganizationMemberRow[]> {
  if (!can(actor.role, 'members.read')) throw new AppError('forbidden', 'Your role may not see the members.');
  return repo.listOrganizationMembers(ctx.pool, actor.organizationId);
}

/**
 * A member invites someone into the organization shown (PORTAL-2, PORTAL-3): owners any role, admins any but owner;
 * recorded in the audit log as done by `audit` (AUDIT-1).
 * @throws AppError forbidden when the role may not; ValidationError for a bad e-mail or role.
 */
export async function inviteMember(
  ctx: AppContext,
  actor: Actor,
  input: { email: string; role: string },
  audit: AuditActor,
): Promise<CreatedInvitation> {
  if (!can(actor.role, 'members.invite') || (isRole(input.role) && !canManageMember(actor.role, input.role)))
    throw new AppError('forbidden', `Your role (${actor.role}) may not invite ${input.role}s.`);
  return createInvitation(ctx, {
    ...input,
    organizationId: actor.organizationId,
    invitedBy: `member:${actor.memberId}`,
    audit,
  });
}

/**
 * Removes a member from the organization shown (PORTAL-2): owners anyone, admins anyone but owners; the last owner
 * stays (an organization is never left without one). Under the organization's lock, so two removals cannot both
 * take the last two owners; the removal is recorded in the audit log in its transaction (AUDIT-1, AUDIT-2).
 * @throws AppError forbidden or not_found; conflict for the last owner.
 */
export async function removeMember(ctx: AppContext, actor: Actor, memberId: string, audit: AuditActor): Promise<void> {
  if (!can(actor.role, 'members.remove')) throw new AppError('forbidden', 'Your role may not remove members.');
  await withTransaction(ctx.pool, async (tx) => {
    await repo.lockMemberships(tx, actor.organizationId);
    const target = await repo.roleIn(tx, actor.organizationId, memberId);
    if (!target) throw new AppError('not_found', 'No such member in this organization.');
    if (!canManageMember(actor.role, target))
      throw new AppError('forbidden', `Your role (${actor.role}) may not remove an ${target}.`);
    if (target === 'owner' && (await repo.countOwners(tx, actor.organizationId)) <= 1)
      throw new AppError('conflict', 'The last owner cannot be removed; invite another owner first.');
    const removed = (await repo.findMember(tx, memberId))!;
    await repo.deleteMembership(tx, actor.organizationId, memberId);
    await recordAudit(tx, {
      actor: audit,
      organizationId: actor.organizationId,
      environment: null,
      action: 'member.removed',
      targetId: memberId,
      before: memberSnapshot(removed, target),
      after: null,
    });
  });
}

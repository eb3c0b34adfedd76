import type { AppContext } from '../../context.js';
import { withTransaction } from '../../lib/db.js';
import { AppError } from '../../lib/errors.js';
import { open, seal } from '../../lib/secret-box.js';
import * as members from './members.repo.js';
import { completeSecondFactor, noteSecondFactor } from './sessions.repo.js';
import { SESSION_MAX_SECONDS } from './sessions.js';
import { checkSecondFactor, type StepResult, totpSealContext } from './sign-in.service.js';
import { newRecoveryCodes, newTotpSecret, recoveryCodeHash, totpUri } from './totp.js';

/** What the enrolment page shows: the state, and while enrolling the secret to type into the app and its URI. */
export type EnrolmentView =
  | { state: 'enabled'; since: Date; recoveryCodesLeft: number }
  | { state: 'enrolling'; secret: string; uri: string }
  | { state: 'none' };

/** The member's second factor as the enrolment page shows it (PORTAL-5). */
export async function enrolmentView(ctx: AppContext, memberId: string): Promise<EnrolmentView> {
  const member = await members.findMember(ctx.pool, memberId);
  if (!member) throw new AppError('not_found', 'No such member');
  if (member.totp_enabled_at)
    return {
      state: 'enabled',
      since: member.totp_enabled_at,
      recoveryCodesLeft: await members.countRecoveryCodes(ctx.pool, memberId),
    };
  if (!member.totp_sealed) return { state: 'none' };
  const secret = open(ctx.secrets.dataKeys, member.totp_sealed, totpSealContext(memberId));
  return { state: 'enrolling', secret, uri: totpUri(secret, member.email) };
}

/**
 * Starts (or restarts) an enrolment: a new secret, kept sealed under the data encryption key and not trusted until a
 * code from it is confirmed (PORTAL-5). @throws AppError conflict when a second factor is already enabled.
 */
export async function startEnrolment(ctx: AppContext, memberId: string): Promise<void> {
  const member = await members.findMember(ctx.pool, memberId);
  if (!member) throw new AppError('not_found', 'No such member');
  if (member.totp_enabled_at) throw new AppError('conflict', 'Two-factor authentication is already on.');
  await members.setPendingTotp(
    ctx.pool,
    memberId,
    seal(ctx.secrets.dataKeys, newTotpSecret(), totpSealContext(memberId)),
  );
}

/**
 * Confirms an enrolment with a code from the app (PORTAL-5): the secret becomes trusted, new recovery codes replace any
 * old ones (only their hashes are kept; the codes are returned to be shown once), and the session counts as having
 * given its second factor now.
 */
export async function confirmEnrolment(
  ctx: AppContext,
  session: { idHash: string; memberId: string },
  code: string,
  address: string,
): Promise<StepResult<{ recoveryCodes: string[] }>> {
  const checked = await checkSecondFactor(ctx, session.memberId, code, address, true);
  if (!checked.ok) return checked;
  const recoveryCodes = newRecoveryCodes();
  await withTransaction(ctx.pool, async (tx) => {
    await members.replaceRecoveryCodes(tx, session.memberId, recoveryCodes.map(recoveryCodeHash));
    await completeSecondFactor(tx, session.idHash, SESSION_MAX_SECONDS);
  });
  return { ok: true, recoveryCodes };
}

/**
 * A step-up (PORTAL-10): the member gives the second factor again (a TOTP code or an unspent recovery code, which
 * this spends), throttled like sign-in (PORTAL-8); on success the session's proof is dated now.
 */
export async function stepUp(
  ctx: AppContext,
  session: { idHash: string; memberId: string },
  code: string,
  address: string,
): Promise<StepResult<{ recoveryCodeUsed: boolean }>> {
  const checked = await checkSecondFactor(ctx, session.memberId, code, address);
  if (checked.ok) await noteSecondFactor(ctx.pool, session.idHash);
  return checked;
}

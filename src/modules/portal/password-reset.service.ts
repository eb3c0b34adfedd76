import validator from 'validator';
import type { AppContext } from '../../context.js';
import { withTransaction } from '../../lib/db.js';
import { newId } from '../../lib/ids.js';
import { addJob } from '../../lib/jobs.js';
import { randomToken, sha256 } from '../../lib/secrets.js';
import { seal } from '../../lib/secret-box.js';
import * as members from './members.repo.js';
import { passwordProblem, type PortalPasswords } from './password-checks.js';
import { revokeOtherSessions } from './sessions.repo.js';
import * as tokens from './tokens.repo.js';

/** A password-reset link works for one hour, once (PORTAL-9). */
export const RESET_TTL_SECONDS = 60 * 60;

/** Associated data of a reset token sealed into its e-mail job: it opens for that reset only. */
export function resetSealContext(resetId: string): string {
  return `portal-reset:${resetId}`;
}

/**
 * Starts a password reset for `email` (PORTAL-9): when an active member has that address, a new single-use token
 * (its sha256 kept; earlier open ones stop working) and a job that e-mails its link, in one transaction. The token
 * travels in the job's payload only sealed under the data encryption key. The caller answers the same whether or
 * not a member was found, so the form tells nobody which addresses have accounts.
 */
export async function requestPasswordReset(ctx: AppContext, email: string): Promise<void> {
  const address = email.trim();
  if (!validator.isEmail(address)) return;
  const member = await members.findMemberByEmail(ctx.pool, address);
  if (!member || member.disabled_at) return;
  const token = randomToken(32);
  const resetId = newId('passwordReset');
  await withTransaction(ctx.pool, async (tx) => {
    await tokens.insertPasswordReset(
      tx,
      { id: resetId, memberId: member.id, tokenHash: sha256(token) },
      RESET_TTL_SECONDS,
    );
    await addJob(
      tx,
      'send_portal_password_reset',
      { resetId, sealedToken: seal(ctx.secrets.dataKeys, token, resetSealContext(resetId)) },
      { maxAttempts: 5 },
    );
  });
}

/** The link of a reset token (PORTAL_BASE_URL; the token in the query, which logs never show). */
export function resetUrl(ctx: AppContext, token: string): string {
  return `${ctx.config.portalBaseUrl}/password-reset/new?token=${encodeURIComponent(token)}`;
}

/** The e-mail address of an open reset token, for its form; null when unknown, used or expired. */
export async function openReset(ctx: AppContext, token: string): Promise<string | null> {
  if (!token) return null;
  return (await tokens.findOpenReset(ctx.pool, sha256(token)))?.email ?? null;
}

/** Outcome of choosing a new password with a reset link. */
export type ResetOutcome =
  | { ok: true }
  | { ok: false; reason: 'gone' }
  | { ok: false; reason: 'busy' }
  | { ok: false; reason: 'invalid'; message: string };

/**
 * Sets a new password with a reset token (PORTAL-9): hashed through the bounded queue outside any transaction, then
 * one transaction spends the token (a link works once), stores the hash and signs every session of the member out.
 * The second factor stays as it was: the next sign-in still asks for it.
 */
export async function resetPassword(
  ctx: AppContext,
  passwords: PortalPasswords,
  input: { token: string; password: string; confirm: string },
): Promise<ResetOutcome> {
  const email = await openReset(ctx, input.token);
  if (!email) return { ok: false, reason: 'gone' };
  const problem = passwordProblem(input.password, input.confirm, email);
  if (problem) return { ok: false, reason: 'invalid', message: problem };
  const passwordHash = await passwords.hashNew(input.password);
  if (!passwordHash) return { ok: false, reason: 'busy' };
  return withTransaction(ctx.pool, async (tx) => {
    const memberId = await tokens.spendReset(tx, sha256(input.token));
    if (!memberId) return { ok: false as const, reason: 'gone' as const };
    await members.updatePasswordHash(tx, memberId, passwordHash);
    await revokeOtherSessions(tx, memberId, null);
    return { ok: true as const };
  });
}

import type { AppContext } from '../../context.js';
import { withTransaction } from '../../lib/db.js';
import { open } from '../../lib/secret-box.js';
import * as members from './members.repo.js';
import type { PortalPasswords } from './password-checks.js';
import { completeSecondFactor } from './sessions.repo.js';
import { createSession, SESSION_MAX_SECONDS } from './sessions.js';
import { attemptSucceeded, claimSignInAttempt } from './sign-in-limits.js';
import { looksLikeRecoveryCode, recoveryCodeHash, totpStep } from './totp.js';

/** Outcome of a sign-in step: done, wrong, throttled (with seconds to wait) or refused while busy. */
export type StepResult<T> =
  | ({ ok: true } & T)
  | { ok: false; reason: 'invalid' }
  | { ok: false; reason: 'throttled'; retryAfterSeconds: number }
  | { ok: false; reason: 'busy' };

/** Associated data of a member's sealed TOTP secret: bound to the member, it opens for no other row. */
export function totpSealContext(memberId: string): string {
  return `member-totp:${memberId}`;
}

/**
 * The password step of a sign-in (PORTAL-4, PORTAL-8), in the order that keeps a flood cheap: a place in the bounded
 * password queue (none: 'busy' at once), the limiter (at its limit: 'throttled' at once, nothing hashed), then the
 * check outside any transaction (an unknown e-mail checks the dummy hash, so it takes as long), then one short
 * transaction that marks the attempt a success and starts the session: pending its second factor when the member has
 * one, else full.
 */
export async function signInWithPassword(
  ctx: AppContext,
  passwords: PortalPasswords,
  input: { email: string; password: string; address: string; userAgent: string },
): Promise<StepResult<{ sessionId: string; pending: boolean }>> {
  const release = passwords.admit();
  if (!release) return { ok: false, reason: 'busy' };
  try {
    const claim = await claimSignInAttempt(ctx.pool, 'password', { account: input.email, address: input.address });
    if (!claim.allowed) return { ok: false, reason: 'throttled', retryAfterSeconds: claim.retryAfterSeconds };
    const member = await members.findMemberByEmail(ctx.pool, input.email.trim());
    const valid = await passwords.verify(input.password, member?.password_hash ?? null);
    if (!member || !valid || member.disabled_at) return { ok: false, reason: 'invalid' };
    const pending = member.totp_enabled_at !== null;
    const sessionId = await withTransaction(ctx.pool, async (tx) => {
      await attemptSucceeded(tx, claim);
      return createSession(tx, {
        memberId: member.id,
        pending,
        clientAddress: input.address,
        userAgent: input.userAgent,
      });
    });
    return { ok: true, sessionId, pending };
  } finally {
    release();
  }
}

/**
 * Checks a member's second factor (PORTAL-5): a 6-digit code of the authenticator (accepted once: its time step must
 * be later than the last one accepted) or an unspent recovery code (spent by this). Throttled like passwords, per
 * member and per address (PORTAL-8). `enable`: the code confirms an enrolment, which makes the secret trusted.
 */
export async function checkSecondFactor(
  ctx: AppContext,
  memberId: string,
  code: string,
  address: string,
  enable = false,
): Promise<StepResult<{ recoveryCodeUsed: boolean }>> {
  const claim = await claimSignInAttempt(ctx.pool, 'second-factor', { account: memberId, address });
  if (!claim.allowed) return { ok: false, reason: 'throttled', retryAfterSeconds: claim.retryAfterSeconds };
  const member = await members.findMember(ctx.pool, memberId);
  if (!member?.totp_sealed || member.disabled_at) return { ok: false, reason: 'invalid' };
  let accepted = false;
  const recovery = !enable && looksLikeRecoveryCode(code);
  if (recovery) {
    accepted =
      member.totp_enabled_at !== null && (await members.spendRecoveryCode(ctx.pool, memberId, recoveryCodeHash(code)));
  } else if (enable || member.totp_enabled_at) {
    const secret = open(ctx.secrets.dataKeys, member.totp_sealed, totpSealContext(memberId));
    const step = totpStep(secret, code);
    accepted = step !== null && (await members.useTotpStep(ctx.pool, memberId, step, enable));
  }
  if (!accepted) return { ok: false, reason: 'invalid' };
  await attemptSucceeded(ctx.pool, claim);
  return { ok: true, recoveryCodeUsed: recovery };
}

/** Completes a pending session after its second factor (full lifetime from its start, PORTAL-5, PORTAL-6). */
export async function completeSignIn(ctx: AppContext, idHash: string): Promise<void> {
  await completeSecondFactor(ctx.pool, idHash, SESSION_MAX_SECONDS);
}

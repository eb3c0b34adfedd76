import type { AppContext } from '../../context.js';
import { DUMMY_HASH, hashPassword, verifyPassword } from '../console/password.js';
import { PasswordCheckQueue } from '../console/password-queue.js';

/** Seconds a password form refused because the checks are saturated is told to wait (Retry-After). */
export const BUSY_RETRY_SECONDS = 5;

/** Shortest password a member may choose (PORTAL-4). */
export const MIN_PASSWORD_LENGTH = 12;

/**
 * The portal's password work (PORTAL-4): every hash and check goes through a bounded queue of the console's kind
 * (PASSWORD_HASH_*, AUTH-8: bounded in number, in time and in CPU), never inside a database transaction. A check that
 * cannot start in time to end within SIGN_IN_ANSWER_MS is refused ('busy', null) without being run.
 */
export class PortalPasswords {
  constructor(
    private readonly queue: PasswordCheckQueue,
    private readonly answerMs: number,
  ) {}

  /**
   * Checks `password` against `hash` (the dummy hash for an unknown account, so both take as long).
   * @returns whether it matches, or null when the queue refused it as busy.
   */
  async verify(password: string, hash: string | null): Promise<boolean | null> {
    // Portal members are not told apart by address: every sign-in's check waits in the shared part of the line.
    return this.ran(() => verifyPassword(password, hash ?? DUMMY_HASH), false);
  }

  /**
   * Hashes a chosen password (argon2id, AUTH-9); null when the queue refused it as busy. A chosen password comes with a
   * valid single-use token (invitation or reset), so it is no guess: it goes with the clean sign-ins.
   */
  async hashNew(password: string): Promise<string | null> {
    return this.ran(() => hashPassword(password), true);
  }

  private async ran<T>(work: () => Promise<T>, clean: boolean): Promise<T | null> {
    const outcome = await this.queue.run(work, { clean, deadline: performance.now() + this.answerMs });
    return outcome.ran ? outcome.value : null;
  }
}

const perContext = new WeakMap<AppContext, PortalPasswords>();

/** The portal's password queue of this app (one per context, shared by every portal route). */
export function portalPasswords(ctx: AppContext): PortalPasswords {
  let passwords = perContext.get(ctx);
  if (!passwords) {
    passwords = new PortalPasswords(
      new PasswordCheckQueue({
        concurrency: ctx.config.passwordHashConcurrency,
        waiting: ctx.config.passwordHashQueue + ctx.config.passwordHashHeld,
        holdMs: ctx.config.passwordHashHoldMs,
        cpuPercent: ctx.config.passwordHashCpuPercent,
        answerMs: ctx.config.signInAnswerMs,
      }),
      ctx.config.signInAnswerMs,
    );
    perContext.set(ctx, passwords);
  }
  return passwords;
}

/** Why a chosen password is refused, or null when it is acceptable (PORTAL-4). */
export function passwordProblem(password: string, confirm: string, email: string): string | null {
  if (password.length < MIN_PASSWORD_LENGTH) return `Choose a password of at least ${MIN_PASSWORD_LENGTH} characters.`;
  if (password.length > 200) return 'Choose a password of at most 200 characters.';
  if (password !== confirm) return 'The two passwords differ; type the same password twice.';
  if (password.toLowerCase() === email.toLowerCase()) return 'Choose a password other than your e-mail address.';
  return null;
}

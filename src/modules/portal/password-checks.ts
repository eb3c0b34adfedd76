import type { AppContext } from '../../context.js';
import { DUMMY_HASH, hashPassword, verifyPassword } from '../console/password.js';
import { PasswordCheckQueue } from '../console/password-queue.js';

/** Seconds a password form refused because the checks are saturated is told to wait (Retry-After). */
export const BUSY_RETRY_SECONDS = 5;

/** Shortest password a member may choose (PORTAL-4). */
export const MIN_PASSWORD_LENGTH = 12;

/**
 * The portal's password work (PORTAL-4): every hash and check goes through the console's bounded queue
 * (PASSWORD_HASH_CONCURRENCY / _QUEUE / _CPU_PERCENT, AUTH-8), never inside a database transaction. A form that finds
 * the queue full is refused at once ('busy'), before any database work.
 */
export class PortalPasswords {
  constructor(private readonly queue: PasswordCheckQueue) {}

  /** A place for one password form's whole work; null when saturated. Call the release when done. */
  admit(): (() => void) | null {
    return this.queue.admit();
  }

  /** Checks `password` against `hash` (the dummy hash for an unknown account, so both take as long). */
  verify(password: string, hash: string | null): Promise<boolean> {
    return this.queue.run(() => verifyPassword(password, hash ?? DUMMY_HASH));
  }

  /**
   * Hashes a chosen password (scrypt, AUTH-9) in a place of its own: null at once when the queue is full ('busy'),
   * without any other work.
   */
  async hashNew(password: string): Promise<string | null> {
    const release = this.queue.admit();
    if (!release) return null;
    try {
      return await this.queue.run(() => hashPassword(password));
    } finally {
      release();
    }
  }
}

const perContext = new WeakMap<AppContext, PortalPasswords>();

/** The portal's password queue of this app (one per context, shared by every portal route). */
export function portalPasswords(ctx: AppContext): PortalPasswords {
  let passwords = perContext.get(ctx);
  if (!passwords) {
    passwords = new PortalPasswords(
      new PasswordCheckQueue(
        ctx.config.passwordHashConcurrency,
        ctx.config.passwordHashQueue,
        ctx.config.passwordHashCpuPercent,
      ),
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

import type pg from 'pg';
import { withTransaction, type Db } from '../../lib/db.js';
import { DUMMY_HASH, verifyPassword } from './password.js';
import type { PasswordCheckQueue } from './password-queue.js';
import * as repo from './operators.repo.js';
import { createSession } from './sessions.js';

/**
 * Login throttling: failures are counted in PostgreSQL (`login_attempts`), never in process memory, so every
 * server process sees the same counters. Per e-mail: 5 failures in 15 minutes (a successful sign-in starts the
 * count again). Per client IP: 20 failures in 15 minutes.
 */
export const LOGIN_LIMITS = { windowSeconds: 15 * 60, perEmail: 5, perIp: 20 } as const;

/** Seconds a sign-in refused because the password checks are saturated is told to wait (Retry-After). */
export const BUSY_RETRY_SECONDS = 5;

/** Outcome of a sign-in: a new session (expiresAt is a Date), wrong credentials, throttled, or refused while busy. */
export type LoginResult =
  | { ok: true; sessionId: string; expiresAt: Date; operatorId: string }
  | { ok: false; reason: 'invalid' }
  | { ok: false; reason: 'throttled'; retryAfterSeconds: number }
  | { ok: false; reason: 'busy'; retryAfterSeconds: number };

/**
 * A sign-in in three steps, none of which holds a database connection while the password is hashed:
 * 1. one short transaction (advisory lock on the e-mail, so parallel guesses cannot overrun the limit) checks the
 *    throttle and records the attempt as FAILED before any hash is computed, then reads the operator;
 * 2. the password is checked through `checks` (bounded concurrency);
 * 3. only on success, a second short transaction marks the attempt succeeded and starts a session.
 * The whole sign-in is admitted by `checks` first (or arrives with `admission`, a place the caller already holds and
 * that is released here): beyond its bound it is refused at once ('busy') with no database
 * work and nothing recorded. A throttled attempt is not recorded either (it checked no password; recording it would
 * let an attacker keep a real operator locked out forever).
 */
export async function attemptLogin(
  pool: pg.Pool,
  checks: PasswordCheckQueue,
  input: { email: string; password: string; ip: string },
  admission?: () => void,
): Promise<LoginResult> {
  const release = admission ?? checks.admit();
  if (!release) return { ok: false, reason: 'busy', retryAfterSeconds: BUSY_RETRY_SECONDS };
  try {
    const email = input.email.trim().toLowerCase();
    const keys = { email: `email:${email}`, ip: `ip:${input.ip}` };
    const claim = await recordAttempt(pool, keys, email);
    if (claim.kind === 'throttled') return { ok: false, reason: 'throttled', retryAfterSeconds: claim.wait };
    const valid = await checks.run(() => verifyPassword(input.password, claim.operator?.password_hash ?? DUMMY_HASH));
    const operator = claim.operator;
    if (!operator || !valid || operator.disabled_at) return { ok: false, reason: 'invalid' };
    return await withTransaction(pool, async (tx) => {
      await repo.markAttemptsSucceeded(tx, [keys.email, keys.ip], claim.attemptedAt);
      const session = await createSession(tx, operator.id);
      return { ok: true as const, ...session, operatorId: operator.id };
    });
  } finally {
    release();
  }
}

type Claim =
  | { kind: 'throttled'; wait: number }
  | { kind: 'recorded'; attemptedAt: string; operator: Awaited<ReturnType<typeof repo.findOperatorByEmail>> };

// Step 1: throttle check and the attempt written as a failure, in one short transaction.
async function recordAttempt(pool: pg.Pool, keys: { email: string; ip: string }, email: string): Promise<Claim> {
  return withTransaction(pool, async (tx) => {
    await repo.lockLoginKey(tx, `console-login:${keys.email}`);
    const wait = Math.max(
      await throttledFor(tx, keys.email, LOGIN_LIMITS.perEmail, true),
      await throttledFor(tx, keys.ip, LOGIN_LIMITS.perIp, false),
    );
    if (wait > 0) return { kind: 'throttled', wait };
    // As text: a JS Date would drop the microseconds the success update must match.
    const attemptedAt = await repo.insertFailedAttempts(tx, keys.email, keys.ip);
    return { kind: 'recorded', attemptedAt, operator: await repo.findOperatorByEmail(tx, email) };
  });
}

// Seconds until the key may try again (0: allowed now). Counts failures inside the window, for e-mails only
// those after the last success; the wait ends when the oldest counted failure leaves the window.
async function throttledFor(db: Db, key: string, limit: number, resetOnSuccess: boolean): Promise<number> {
  const row = await repo.countRecentFailures(db, key, LOGIN_LIMITS.windowSeconds, limit, resetOnSuccess);
  return row && row.failures >= limit ? Math.max(1, row.wait ?? 1) : 0;
}

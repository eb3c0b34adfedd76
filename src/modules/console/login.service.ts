import type pg from 'pg';
import { one, withTransaction, type Db } from '../../lib/db.js';
import { DUMMY_HASH, verifyPassword } from './password.js';
import * as repo from './operators.repo.js';
import { createSession } from './sessions.js';

/**
 * Login throttling (issue 6 item 1): failures are counted in PostgreSQL (`login_attempts`), never in process
 * memory, so every server process sees the same counters. Per e-mail: 5 failures in 15 minutes (a successful
 * sign-in starts the count again). Per client IP: 20 failures in 15 minutes.
 */
export const LOGIN_LIMITS = { windowSeconds: 15 * 60, perEmail: 5, perIp: 20 } as const;

/** Outcome of a sign-in: a new session (expiresAt is a Date), wrong credentials, or throttled for `retryAfterSeconds`. */
export type LoginResult =
  | { ok: true; sessionId: string; expiresAt: Date; operatorId: string }
  | { ok: false; reason: 'invalid' }
  | { ok: false; reason: 'throttled'; retryAfterSeconds: number };

/**
 * Checks the throttle, then the password, records the attempt and on success starts a session, in one
 * transaction holding an advisory lock on the e-mail so that parallel guesses cannot overrun the limit.
 * A refused (throttled) attempt is not recorded: it checked no password, and recording it would let an
 * attacker keep a real operator locked out forever.
 */
export async function attemptLogin(pool: pg.Pool, input: { email: string; password: string; ip: string }): Promise<LoginResult> {
  const email = input.email.trim().toLowerCase();
  const emailKey = `email:${email}`;
  const ipKey = `ip:${input.ip}`;
  return withTransaction(pool, async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`console-login:${emailKey}`]);
    const wait = Math.max(await throttledFor(tx, emailKey, LOGIN_LIMITS.perEmail, true), await throttledFor(tx, ipKey, LOGIN_LIMITS.perIp, false));
    if (wait > 0) return { ok: false, reason: 'throttled', retryAfterSeconds: wait };
    const operator = await repo.findOperatorByEmail(tx, email);
    const valid = await verifyPassword(input.password, operator?.password_hash ?? DUMMY_HASH);
    const succeeded = Boolean(operator && valid && !operator.disabled_at);
    await tx.query(`INSERT INTO login_attempts (key, succeeded) VALUES ($1, $3), ($2, $3)`, [emailKey, ipKey, succeeded]);
    await tx.query(`DELETE FROM login_attempts WHERE attempted_at < now() - interval '1 day'`);
    if (!succeeded) return { ok: false, reason: 'invalid' };
    await tx.query(`DELETE FROM operator_sessions WHERE operator_id = $1 AND expires_at < now() - interval '30 days'`, [operator!.id]);
    const session = await createSession(tx, operator!.id);
    return { ok: true, ...session, operatorId: operator!.id };
  });
}

// Seconds until the key may try again (0: allowed now). Counts failures inside the window, for e-mails only
// those after the last success; the wait ends when the oldest counted failure leaves the window.
async function throttledFor(db: Db, key: string, limit: number, resetOnSuccess: boolean): Promise<number> {
  const row = await one<{ failures: number; wait: number | null }>(
    db,
    `WITH since AS (
       SELECT greatest(now() - make_interval(secs => $2),
                       CASE WHEN $4 THEN coalesce((SELECT max(attempted_at) FROM login_attempts WHERE key = $1 AND succeeded), '-infinity') ELSE '-infinity' END) AS t),
     failed AS (
       SELECT attempted_at FROM login_attempts, since WHERE key = $1 AND NOT succeeded AND attempted_at > since.t
       ORDER BY attempted_at DESC LIMIT $3)
     SELECT count(*)::int AS failures,
            ceil(extract(epoch FROM (min(attempted_at) + make_interval(secs => $2) - now())))::int AS wait
       FROM failed`,
    [key, LOGIN_LIMITS.windowSeconds, limit, resetOnSuccess],
  );
  return row && row.failures >= limit ? Math.max(1, row.wait ?? 1) : 0;
}

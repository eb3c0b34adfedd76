import type pg from 'pg';
import { many, one, withTransaction, type Db } from '../../lib/db.js';

/**
 * How failed portal sign-ins are throttled (PORTAL-8), counted in PostgreSQL (`login_attempts`, keys prefixed
 * `portal:`) so every process sees the same counts. In a window of 15 minutes: 5 failures per account (the e-mail for
 * passwords, the member for second factors; a success starts the count again) and 20 per client address (whose count no success clears).
 */
export const PORTAL_SIGN_IN_LIMITS = { windowSeconds: 15 * 60, perAccount: 5, perAddress: 20 } as const;

/** What is being tried: a password of an e-mail, or a second factor (TOTP or recovery code) of a member. */
export type AttemptKind = 'password' | 'second-factor';

/** Who tries: the account (e-mail or member id) and the client address (request.ip, SEC-8). */
export interface SignInParty {
  account: string;
  address: string;
}

/** An attempt allowed and recorded as failed until told otherwise, or refused for `retryAfterSeconds`. */
export type AttemptClaim =
  | { allowed: true; keys: [string, string]; attemptedAt: string }
  | { allowed: false; retryAfterSeconds: number };

/**
 * The portal's one sign-in limiter call, made before any password is hashed or code checked (PORTAL-8): in one short
 * transaction, under an advisory lock on the account (parallel guesses cannot overrun the limit), the failures of
 * the account and of the address are counted; when either is at its limit the attempt is refused with the seconds
 * until the oldest counted failure leaves the window, and nothing is recorded (a refused attempt checked nothing, and
 * recording it would keep a real member locked out for good). Otherwise the attempt is recorded as failed before the
 * check runs; {@link attemptSucceeded} turns it into a success.
 */
export async function claimSignInAttempt(pool: pg.Pool, kind: AttemptKind, party: SignInParty): Promise<AttemptClaim> {
  const account = party.account.trim().toLowerCase();
  const keys: [string, string] = [`portal:${kind}:account:${account}`, `portal:${kind}:address:${party.address}`];
  return withTransaction(pool, async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [keys[0]]);
    const [byAccount, byAddress] = await failuresOf(tx, keys);
    const wait = Math.max(
      waitFor(byAccount!, PORTAL_SIGN_IN_LIMITS.perAccount),
      waitFor(byAddress!, PORTAL_SIGN_IN_LIMITS.perAddress),
    );
    if (wait > 0) return { allowed: false as const, retryAfterSeconds: wait };
    const row = await one<{ attempted_at: string }>(
      tx,
      `INSERT INTO login_attempts (key, succeeded) SELECT unnest($1::text[]), false RETURNING attempted_at::text`,
      [keys],
    );
    return { allowed: true as const, keys, attemptedAt: row!.attempted_at };
  });
}

/** Marks an allowed attempt as succeeded: the account's failures count from zero again. */
export async function attemptSucceeded(db: Db, claim: { keys: string[]; attemptedAt: string }): Promise<void> {
  await db.query(
    'UPDATE login_attempts SET succeeded = true WHERE key = ANY($1) AND attempted_at = $2::timestamptz AND NOT succeeded',
    [claim.keys, claim.attemptedAt],
  );
}

interface Failures {
  failures: number;
  wait: number | null;
}

// Seconds to wait at `limit` failures: until the oldest counted failure leaves the window (0: allowed now).
function waitFor(f: Failures, limit: number): number {
  return f.failures >= limit ? Math.max(1, f.wait ?? 1) : 0;
}

// Per key: failures in the window (for the account, after its latest success: an address's successes reset nothing,
// or an attacker could clear its count by signing in to an account of its own), and seconds until the oldest of them leaves the window.
function failuresOf(db: Db, keys: string[]): Promise<Failures[]> {
  return many<Failures>(
    db,
    `SELECT f.failures, f.wait
       FROM unnest($1::text[]) WITH ORDINALITY AS k(key, n)
       CROSS JOIN LATERAL (
         SELECT count(*)::int AS failures,
                ceil(extract(epoch FROM min(a.attempted_at) + make_interval(secs => $2) - now()))::int AS wait
           FROM login_attempts a
          WHERE a.key = k.key AND NOT a.succeeded
            AND a.attempted_at > greatest(now() - make_interval(secs => $2),
                  coalesce(CASE WHEN k.n = 1 THEN (SELECT max(s.attempted_at) FROM login_attempts s
                                                     WHERE s.key = k.key AND s.succeeded) END,
                           '-infinity'))) f
      ORDER BY k.n`,
    [keys, PORTAL_SIGN_IN_LIMITS.windowSeconds],
  );
}

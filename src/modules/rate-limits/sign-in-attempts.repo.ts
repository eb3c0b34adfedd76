import { many, one, type Db } from '../../lib/db.js';

/** A key's failed sign-ins that still count: how many (at most the limit asked for) and ms since the last one. */
export interface FailureSummary {
  key: string;
  failures: number;
  /** ms from the latest counted failure to the database's now(); null when none counts. */
  sinceLastMs: number | null;
}

/**
 * The failed sign-ins of each key that still count (AUTH-8): those of the last `windowSeconds` after the key's
 * latest success, at most `limit` of them (the newest). A failure recorded before its password was checked (a check
 * under way) counts too. One row per key, in the order of `keys`.
 */
export function failuresOf(db: Db, keys: string[], windowSeconds: number, limit: number): Promise<FailureSummary[]> {
  return many<FailureSummary>(
    db,
    `SELECT k.key, f.failures, f.since_last_ms AS "sinceLastMs"
       FROM unnest($1::text[]) WITH ORDINALITY AS k(key, n)
       CROSS JOIN LATERAL (
         SELECT count(*)::int AS failures,
                (extract(epoch FROM now() - max(c.attempted_at)) * 1000)::float8 AS since_last_ms
           FROM (SELECT a.attempted_at FROM login_attempts a
                  WHERE a.key = k.key AND NOT a.succeeded
                    AND a.attempted_at > greatest(
                          now() - make_interval(secs => $2),
                          coalesce((SELECT max(s.attempted_at) FROM login_attempts s WHERE s.key = k.key AND s.succeeded),
                                   '-infinity'))
                  ORDER BY a.attempted_at DESC
                  LIMIT $3) c) f
      ORDER BY k.n`,
    [keys, windowSeconds, limit],
  );
}

/** Takes the transaction-scoped advisory lock of a key, so that attempts on it are recorded one after the other. */
export async function lockAttemptKey(tx: Db, key: string): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [key]);
}

/** Records one attempt as failed under every key. @returns attempted_at as text (microseconds kept). */
export async function insertFailedAttempt(tx: Db, keys: string[]): Promise<string> {
  const row = await one<{ attempted_at: string }>(
    tx,
    `INSERT INTO login_attempts (key, succeeded) SELECT unnest($1::text[]), false RETURNING attempted_at::text`,
    [keys],
  );
  return row!.attempted_at;
}

/** Marks the attempt recorded at `attemptedAt` (text timestamptz) under the keys as succeeded. */
export async function markAttemptSucceeded(tx: Db, keys: string[], attemptedAt: string): Promise<void> {
  await tx.query(
    'UPDATE login_attempts SET succeeded = true WHERE key = ANY($1) AND attempted_at = $2::timestamptz AND NOT succeeded',
    [keys, attemptedAt],
  );
}

/**
 * Moves the failure recorded at `attemptedAt` to now(): a failure counts from when it was known (its check's end), so
 * its delay runs from the answer however long the check took.
 */
export async function stampFailure(db: Db, keys: string[], attemptedAt: string): Promise<void> {
  await db.query(
    'UPDATE login_attempts SET attempted_at = now() WHERE key = ANY($1) AND attempted_at = $2::timestamptz AND NOT succeeded',
    [keys, attemptedAt],
  );
}

/** Deletes the failure recorded at `attemptedAt` under the keys (an attempt that was never answered). */
export async function deleteAttempt(db: Db, keys: string[], attemptedAt: string): Promise<void> {
  await db.query(
    'DELETE FROM login_attempts WHERE key = ANY($1) AND attempted_at = $2::timestamptz AND NOT succeeded',
    [keys, attemptedAt],
  );
}

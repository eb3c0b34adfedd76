import { many, one, type Db } from '../../lib/db.js';

/** An operator account (CONS-1). `password_hash` never leaves the console module. */
export interface OperatorRow {
  id: string;
  email: string;
  name: string;
  password_hash: string;
  created_at: Date;
  disabled_at: Date | null;
}

/** Inserts an operator. @throws the unique violation of operators_email_lower for a taken e-mail. */
export function insertOperator(
  db: Db,
  op: { id: string; email: string; name: string; passwordHash: string },
): Promise<OperatorRow | null> {
  return one<OperatorRow>(
    db,
    'INSERT INTO operators (id, email, name, password_hash) VALUES ($1, $2, $3, $4) RETURNING *',
    [op.id, op.email, op.name, op.passwordHash],
  );
}

/** The operator with this e-mail (case-insensitive), disabled or not; null when none. */
export function findOperatorByEmail(db: Db, email: string): Promise<OperatorRow | null> {
  return one<OperatorRow>(db, 'SELECT * FROM operators WHERE lower(email) = lower($1)', [email]);
}

/** By id or e-mail (the CLI accepts either). */
export function findOperator(db: Db, idOrEmail: string): Promise<OperatorRow | null> {
  return one<OperatorRow>(db, 'SELECT * FROM operators WHERE id = $1 OR lower(email) = lower($1)', [idOrEmail]);
}

/** Every operator, oldest first. */
export function listOperators(db: Db): Promise<OperatorRow[]> {
  return many<OperatorRow>(db, 'SELECT * FROM operators ORDER BY created_at');
}

/** Sets disabled_at (kept when already disabled); null for an unknown id. */
export function disableOperator(db: Db, id: string): Promise<OperatorRow | null> {
  return one<OperatorRow>(
    db,
    'UPDATE operators SET disabled_at = COALESCE(disabled_at, now()) WHERE id = $1 RETURNING *',
    [id],
  );
}

/** Clears disabled_at; null for an unknown id. */
export function enableOperator(db: Db, id: string): Promise<OperatorRow | null> {
  return one<OperatorRow>(db, 'UPDATE operators SET disabled_at = NULL WHERE id = $1 RETURNING *', [id]);
}

/** Signs out every live session of an operator. */
export async function revokeOperatorSessions(db: Db, operatorId: string): Promise<void> {
  await db.query('UPDATE operator_sessions SET revoked_at = now() WHERE operator_id = $1 AND revoked_at IS NULL', [
    operatorId,
  ]);
}

/** Takes the transaction-scoped advisory lock of a login key, so parallel guesses for it run one after the other. */
export async function lockLoginKey(tx: Db, lockKey: string): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [lockKey]);
}

/** Records a sign-in attempt as failed under both keys (e-mail, IP). @returns attempted_at as text (microseconds kept). */
export async function insertFailedAttempts(tx: Db, emailKey: string, ipKey: string): Promise<string> {
  const row = await one<{ attempted_at: string }>(
    tx,
    `INSERT INTO login_attempts (key, succeeded) VALUES ($1, false), ($2, false) RETURNING attempted_at::text`,
    [emailKey, ipKey],
  );
  return row!.attempted_at;
}

/** Marks the attempts recorded at `attemptedAt` (text timestamptz) under the keys as succeeded. */
export async function markAttemptsSucceeded(tx: Db, keys: string[], attemptedAt: string): Promise<void> {
  await tx.query(
    'UPDATE login_attempts SET succeeded = true WHERE key = ANY($1) AND attempted_at = $2::timestamptz AND NOT succeeded',
    [keys, attemptedAt],
  );
}

/**
 * The key's failures inside the window (at most `limit` counted; with `resetOnSuccess` only those after its last
 * success) and the seconds until the oldest counted one leaves the window.
 */
export function countRecentFailures(
  db: Db,
  key: string,
  windowSeconds: number,
  limit: number,
  resetOnSuccess: boolean,
): Promise<{ failures: number; wait: number | null } | null> {
  return one<{ failures: number; wait: number | null }>(
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
    [key, windowSeconds, limit, resetOnSuccess],
  );
}

/** Stores a session (only the sha256 of its id) expiring `ttlSeconds` from now. @returns its expires_at. */
export async function insertSession(
  db: Db,
  idHash: string,
  operatorId: string,
  csrfToken: string,
  ttlSeconds: number,
): Promise<Date> {
  const row = await one<{ expires_at: Date }>(
    db,
    `INSERT INTO operator_sessions (id_hash, operator_id, csrf_token, expires_at)
     VALUES ($1, $2, $3, now() + make_interval(secs => $4)) RETURNING expires_at`,
    [idHash, operatorId, csrfToken, ttlSeconds],
  );
  return row!.expires_at;
}

/** The session by id hash with its operator, when not revoked, not expired and the operator not disabled; else null. */
export function findLiveSession(
  db: Db,
  idHash: string,
): Promise<{ id_hash: string; csrf_token: string; expires_at: Date; id: string; email: string; name: string } | null> {
  return one<{ id_hash: string; csrf_token: string; expires_at: Date; id: string; email: string; name: string }>(
    db,
    `SELECT s.id_hash, s.csrf_token, s.expires_at, o.id, o.email, o.name
       FROM operator_sessions s JOIN operators o ON o.id = s.operator_id
      WHERE s.id_hash = $1 AND s.revoked_at IS NULL AND s.expires_at > now() AND o.disabled_at IS NULL`,
    [idHash],
  );
}

/** Revokes a session (kept revoked when it already was). */
export async function revokeSessionRow(db: Db, idHash: string): Promise<void> {
  await db.query('UPDATE operator_sessions SET revoked_at = now() WHERE id_hash = $1 AND revoked_at IS NULL', [idHash]);
}

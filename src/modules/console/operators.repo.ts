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

/**
 * Replaces a password hash made otherwise than hashPassword makes one now (AUTH-9), only while it is still `previous`:
 * a password changed meanwhile is kept.
 */
export async function upgradePasswordHash(db: Db, id: string, previous: string, hash: string): Promise<void> {
  await db.query('UPDATE operators SET password_hash = $3 WHERE id = $1 AND password_hash = $2', [id, previous, hash]);
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

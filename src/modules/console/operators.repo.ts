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
export function insertOperator(db: Db, op: { id: string; email: string; name: string; passwordHash: string }): Promise<OperatorRow | null> {
  return one<OperatorRow>(db, 'INSERT INTO operators (id, email, name, password_hash) VALUES ($1, $2, $3, $4) RETURNING *', [op.id, op.email, op.name, op.passwordHash]);
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

/** Names of operators by id, for showing `operator:<id>` actors. */
export async function operatorNames(db: Db, ids: string[]): Promise<Map<string, string>> {
  if (!ids.length) return new Map();
  const rows = await many<{ id: string; name: string; email: string }>(db, 'SELECT id, name, email FROM operators WHERE id = ANY($1)', [ids]);
  return new Map(rows.map((r) => [r.id, `${r.name} <${r.email}>`]));
}

/** Sets disabled_at (kept when already disabled); null for an unknown id. */
export function disableOperator(db: Db, id: string): Promise<OperatorRow | null> {
  return one<OperatorRow>(db, 'UPDATE operators SET disabled_at = COALESCE(disabled_at, now()) WHERE id = $1 RETURNING *', [id]);
}

/** Clears disabled_at; null for an unknown id. */
export function enableOperator(db: Db, id: string): Promise<OperatorRow | null> {
  return one<OperatorRow>(db, 'UPDATE operators SET disabled_at = NULL WHERE id = $1 RETURNING *', [id]);
}

/** Signs out every live session of an operator. */
export async function revokeOperatorSessions(db: Db, operatorId: string): Promise<void> {
  await db.query('UPDATE operator_sessions SET revoked_at = now() WHERE operator_id = $1 AND revoked_at IS NULL', [operatorId]);
}

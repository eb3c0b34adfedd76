import type pg from 'pg';
import { isEmailAddress } from '../../lib/validation.js';
import { isUniqueViolation, withTransaction } from '../../lib/db.js';
import { AppError, FieldErrors, notFound } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { randomToken } from '../../lib/secrets.js';
import { hashPassword } from './password.js';
import * as repo from './operators.repo.js';

/** Shortest password accepted for an operator account (NIST SP 800-63B allows 8; the console guards money). */
export const MIN_PASSWORD_LENGTH = 12;

/** An operator as listed by the CLI and the console: never the password hash. Times ISO 8601. */
export interface OperatorView {
  id: string;
  email: string;
  name: string;
  createdAt: string;
  disabledAt: string | null;
}

/** The operator without its password hash; dates as ISO strings. */
function serializeOperator(o: repo.OperatorRow): OperatorView {
  return {
    id: o.id,
    email: o.email,
    name: o.name,
    createdAt: o.created_at.toISOString(),
    disabledAt: o.disabled_at?.toISOString() ?? null,
  };
}

/**
 * Creates an operator account (CONS-1, AUTH-9). Without `password`, a random one is generated and returned
 * once as `generatedPassword`.
 * @throws ValidationError for a bad e-mail, empty name or short password; AppError conflict when the e-mail is taken.
 */
export async function createOperator(
  pool: pg.Pool,
  input: { email: string; name: string; password?: string },
): Promise<{ operator: OperatorView; generatedPassword: string | null }> {
  const email = input.email.trim().toLowerCase();
  const name = input.name.trim();
  const errors = new FieldErrors();
  if (!isEmailAddress(email)) errors.add('email', 'must be an e-mail address');
  if (!name) errors.add('name', 'must not be empty');
  if (input.password !== undefined && input.password.length < MIN_PASSWORD_LENGTH)
    errors.add('password', `must be at least ${MIN_PASSWORD_LENGTH} characters`);
  errors.throwIfAny();
  const generatedPassword = input.password === undefined ? randomToken(18) : null;
  const passwordHash = await hashPassword(input.password ?? generatedPassword!);
  try {
    const row = await repo.insertOperator(pool, { id: newId('operator'), email, name, passwordHash });
    return { operator: serializeOperator(row!), generatedPassword };
  } catch (err) {
    if (isUniqueViolation(err)) throw new AppError('conflict', `An operator with e-mail '${email}' already exists`);
    throw err;
  }
}

/** All operators, oldest first. */
export async function listOperators(pool: pg.Pool): Promise<OperatorView[]> {
  return (await repo.listOperators(pool)).map(serializeOperator);
}

/**
 * Disables an operator (by id or e-mail) and signs out every session of it at once.
 * @throws AppError not_found.
 */
export async function disableOperator(pool: pg.Pool, idOrEmail: string): Promise<OperatorView> {
  return withTransaction(pool, async (tx) => {
    const found = await repo.findOperator(tx, idOrEmail);
    if (!found) throw notFound('operator', idOrEmail);
    const row = await repo.disableOperator(tx, found.id);
    await repo.revokeOperatorSessions(tx, found.id);
    return serializeOperator(row!);
  });
}

/** Re-enables a disabled operator (by id or e-mail). @throws AppError not_found. */
export async function enableOperator(pool: pg.Pool, idOrEmail: string): Promise<OperatorView> {
  const found = await repo.findOperator(pool, idOrEmail);
  if (!found) throw notFound('operator', idOrEmail);
  return serializeOperator((await repo.enableOperator(pool, found.id))!);
}

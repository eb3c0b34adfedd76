import type { Tenant } from '../../context.js';
import { many, one, onePrepared, type Db } from '../../lib/db.js';

/** A row of `users` (USR-1). */
export interface UserRow {
  id: string;
  organization_id: string;
  environment: string;
  full_name: string;
  email: string;
  email_normalized: string;
  phone_number: string | null;
  created_at: Date;
  updated_at: Date;
}

/** Inserts a user; a duplicate email in the tenant raises the unique violation `users_email_unique`. */
export async function insertUser(
  db: Db,
  tenant: Tenant,
  u: { id: string; fullName: string; email: string; emailNormalized: string; phoneNumber: string | null },
): Promise<UserRow> {
  const row = await one<UserRow>(
    db,
    `INSERT INTO users (id, organization_id, environment, full_name, email, email_normalized, phone_number)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
    [u.id, tenant.organizationId, tenant.environment, u.fullName, u.email, u.emailNormalized, u.phoneNumber],
  );
  return row!;
}

/** The tenant's user with this id, or null. */
export function findUserById(db: Db, tenant: Tenant, id: string): Promise<UserRow | null> {
  // A hot read (every order checks its user through it too): prepared once per connection, with its columns named so
  // a column added by a later migration cannot change the prepared statement's result under a running process.
  return onePrepared<UserRow>(
    db,
    'user_by_id',
    `SELECT ${USER_COLUMNS} FROM users WHERE id = $1 AND organization_id = $2 AND environment = $3`,
    [id, tenant.organizationId, tenant.environment],
  );
}

const USER_COLUMNS =
  'id, organization_id, environment, full_name, email, email_normalized, phone_number, created_at, updated_at';

/** The tenant's user with this lower-cased email, or null. */
export function findUserByEmail(db: Db, tenant: Tenant, emailNormalized: string): Promise<UserRow | null> {
  return one<UserRow>(
    db,
    'SELECT * FROM users WHERE email_normalized = $1 AND organization_id = $2 AND environment = $3',
    [emailNormalized, tenant.organizationId, tenant.environment],
  );
}

/** Newest first; `limit + 1` rows so the caller can tell whether another page follows. */
export function listUsers(db: Db, tenant: Tenant, limit: number, startingAfter?: string): Promise<UserRow[]> {
  return many<UserRow>(
    db,
    `SELECT * FROM users WHERE organization_id = $1 AND environment = $2 AND ($3::text IS NULL OR id < $3)
     ORDER BY id DESC LIMIT $4`,
    [tenant.organizationId, tenant.environment, startingAfter ?? null, limit + 1],
  );
}

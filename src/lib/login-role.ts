import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';
import pg from 'pg';

/*
 * The login role the service's pools connect as (SEC-3). It is a member of the service role (fcs_service) and of
 * nothing else, with no attribute that reaches further (superuser, CREATEROLE, BYPASSRLS, REPLICATION), and it
 * inherits the service role's rights. So `SET ROLE NONE` or `RESET ROLE` on a pooled connection leaves it with
 * exactly those rights: nothing a connection sends reaches the owner's. The owner (DATABASE_URL's user) creates it
 * when it may create roles (the embedded database, a superuser URL, a CREATEROLE user); otherwise an administrator
 * runs once the SQL of {@link loginRoleSql} (`cli db roles`). Every start checks the role before serving.
 */

/** The default name of the login role (DATABASE_APP_ROLE). */
export const LOGIN_ROLE = 'fcs_app';

/** The login role the pools connect as, and what it must be a member of. */
export interface LoginRole {
  /** Its name, e.g. `fcs_app`. */
  name: string;
  /** The one role it is a member of and inherits the rights of, e.g. `fcs_service`. */
  serviceRole: string;
  /** Its password; null: none is sent (a server that trusts the login, such as a development machine's). */
  password: string | null;
}

/** The login role is missing, refused, or could reach more than the service role's rights; the message says the fix. */
export class LoginRoleError extends Error {
  override name = 'LoginRoleError';
}

/** `ownerUrl` (DATABASE_URL or the embedded database's URL) with the login role's user name and password. */
export function loginUrl(ownerUrl: string, role: LoginRole): string {
  const url = new URL(ownerUrl);
  url.username = encodeURIComponent(role.name);
  url.password = role.password ? encodeURIComponent(role.password) : '';
  url.searchParams.delete('user');
  url.searchParams.delete('password');
  return url.toString();
}

const LOGIN_ATTRIBUTES = 'LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS INHERIT';

/**
 * Creates the login role as a member of the service role when it is missing, or sets its password when one is
 * configured; on `client`, the owner's connection, inside the caller's transaction. Roles belong to the whole
 * server: another database's start creating it meanwhile is fine. A password the owner may not set (a role an
 * administrator created) is left as it is; the start's check then says whether the login works.
 * @throws LoginRoleError when the role is missing and the owner may not create roles.
 */
export async function ensureLoginRole(client: pg.ClientBase, role: LoginRole): Promise<void> {
  const { exists, mayCreate, owner, stored } = await roleState(client, role.name);
  if (!exists && !mayCreate)
    throw new LoginRoleError(
      `The login role ${role.name} does not exist, and ${owner} (DATABASE_URL's user) may not create roles. ` +
        'Fix: have an administrator run once the SQL that `npm run cli -- db roles` prints, then start again.',
    );
  // A password already set is not written again: no catalog write, and no wait on another start doing the same.
  const passwordKept = !role.password || !mayCreate || (stored !== null && verifierMatches(role.password, stored));
  if (exists && passwordKept) return;
  const name = client.escapeIdentifier(role.name);
  const password = role.password ? ` PASSWORD ${client.escapeLiteral(scramVerifier(role.password))}` : '';
  const sql = exists
    ? `ALTER ROLE ${name}${password}`
    : `CREATE ROLE ${name} ${LOGIN_ATTRIBUTES}${password} IN ROLE ${client.escapeIdentifier(role.serviceRole)}`;
  await client.query('SAVEPOINT login_role');
  try {
    await client.query(sql);
  } catch (err) {
    // 42710/23505: created meanwhile by another database's start; 42501: a role this owner may not alter;
    // XX000: altered meanwhile by another database's start ("tuple concurrently updated").
    if (!['42710', '23505', '42501', 'XX000'].includes((err as { code?: string }).code ?? '')) throw err;
    await client.query('ROLLBACK TO SAVEPOINT login_role');
  }
}

/** Whether the role exists, whether the owner may create roles, and (superuser only) the role's stored verifier. */
async function roleState(client: pg.ClientBase, name: string) {
  const { rows } = await client.query<{ exists: boolean; may_create: boolean; superuser: boolean; owner: string }>(
    `SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1) AS exists, current_user AS owner, r.rolsuper AS superuser,
            r.rolsuper OR r.rolcreaterole AS may_create
       FROM pg_roles r WHERE r.rolname = current_user`,
    [name],
  );
  const { exists, may_create: mayCreate, superuser, owner } = rows[0]!;
  // pg_authid, which holds the verifiers, is readable by superusers only.
  const stored = superuser
    ? ((await client.query<{ v: string | null }>('SELECT rolpassword AS v FROM pg_authid WHERE rolname = $1', [name]))
        .rows[0]?.v ?? null)
    : null;
  return { exists, mayCreate, owner, stored };
}

interface RoleFacts {
  login: string;
  member_of: string[];
  privileged: string[];
  inherits: boolean;
}

/**
 * Checks, on a connection of `pool` (which connects as the login role), that the connection can reach no more
 * than the service role's rights: its user is a member of the service role and of nothing else (directly or through
 * other roles), inherits its rights, and neither it nor any role it belongs to is a superuser or has CREATEROLE,
 * BYPASSRLS or REPLICATION.
 * @throws LoginRoleError naming what is wrong and the fix, also when the server refuses the login (password).
 */
export async function checkLoginRole(pool: pg.Pool, role: LoginRole): Promise<void> {
  let facts: RoleFacts;
  try {
    const { rows } = await pool.query<RoleFacts>(
      `WITH RECURSIVE reach(oid) AS (
         SELECT oid FROM pg_roles WHERE rolname = session_user
         UNION SELECT m.roleid FROM pg_auth_members m JOIN reach ON m.member = reach.oid)
       SELECT session_user AS login,
              coalesce(array_agg(r.rolname::text ORDER BY r.rolname) FILTER (WHERE r.rolname <> session_user), '{}') AS member_of,
              coalesce(array_agg(r.rolname::text ORDER BY r.rolname)
                         FILTER (WHERE r.rolsuper OR r.rolcreaterole OR r.rolbypassrls OR r.rolreplication), '{}') AS privileged,
              pg_has_role(session_user, $1, 'USAGE') AS inherits
         FROM reach JOIN pg_roles r ON r.oid = reach.oid`,
      [role.serviceRole],
    );
    facts = rows[0]!;
  } catch (err) {
    throw refusedLogin(err, role) ?? err;
  }
  const problem = roleProblem(facts, role);
  if (problem) throw new LoginRoleError(problem);
}

function roleProblem(f: RoleFacts, role: LoginRole): string | null {
  const who = `The login role ${f.login}`;
  if (f.privileged.length)
    return `${who} could act with the rights of ${f.privileged.join(', ')} (superuser, CREATEROLE, BYPASSRLS or REPLICATION), more than ${role.serviceRole}'s. Fix: ALTER ROLE ${f.login} ${LOGIN_ATTRIBUTES}; and revoke those memberships.`;
  const others = f.member_of.filter((r) => r !== role.serviceRole);
  if (others.length)
    return `${who} is a member of ${others.join(', ')} besides ${role.serviceRole}, so SET ROLE would reach their rights. Fix: REVOKE ${others.join(', ')} FROM ${f.login};`;
  if (!f.member_of.includes(role.serviceRole) || !f.inherits)
    return `${who} does not have ${role.serviceRole}'s rights. Fix: GRANT ${role.serviceRole} TO ${f.login}; (on PostgreSQL 16 and later WITH INHERIT TRUE; before, ALTER ROLE ${f.login} INHERIT;)`;
  return null;
}

// The server refused the login role itself (wrong or missing password, no pg_hba.conf line): say which variable.
function refusedLogin(err: unknown, role: LoginRole): LoginRoleError | null {
  const e = err as { code?: string; message?: string };
  const refused =
    e.code === '28P01' || e.code === '28000' || /client password must be a string|SASL/i.test(e.message ?? '');
  if (!refused) return null;
  return new LoginRoleError(
    `The database refused the login role ${role.name} (${e.message}). Fix: set DATABASE_APP_PASSWORD to its password ` +
      `(ALTER ROLE ${role.name} PASSWORD '…' as an administrator to choose one), or allow it in pg_hba.conf.`,
  );
}

/**
 * The SQL an administrator runs once, before the first start, to create the roles where DATABASE_URL's user may not
 * (`cli db roles`): the service role, the login role as its only member with the password's SCRAM-SHA-256 verifier
 * (the password itself is never in the SQL), and the service role granted to the owner with ADMIN OPTION (migration
 * 080 makes the owner a member of it).
 * @param owner DATABASE_URL's user name.
 */
export function loginRoleSql(role: LoginRole & { password: string }, owner: string): string {
  const id = pg.escapeIdentifier;
  return [
    '-- The database roles of the Filing Compliance Service (rule SEC-3; docs/deploying.md, "Database roles").',
    `-- Run once, before the first start, as an administrator of the server. ${id(owner)} keeps running the migrations.`,
    `CREATE ROLE ${id(role.serviceRole)} NOLOGIN;`,
    `CREATE ROLE ${id(role.name)} ${LOGIN_ATTRIBUTES} PASSWORD '${scramVerifier(role.password)}' IN ROLE ${id(role.serviceRole)};`,
    `GRANT ${id(role.serviceRole)} TO ${id(owner)} WITH ADMIN OPTION;`,
    '',
  ].join('\n');
}

/** A random password for the login role: 32 characters of base64url (192 bits). */
export function newLoginPassword(): string {
  return randomBytes(24).toString('base64url');
}

const SCRAM_ITERATIONS = 4096;

/** True when `stored` (a pg_authid.rolpassword) is a SCRAM-SHA-256 verifier of `password`. */
function verifierMatches(password: string, stored: string): boolean {
  const m = /^SCRAM-SHA-256\$(\d+):([^$]+)\$[^:]+:(.+)$/.exec(stored);
  if (!m) return false;
  const salted = pbkdf2Sync(password, Buffer.from(m[2]!, 'base64'), Number(m[1]), 32, 'sha256');
  return createHmac('sha256', salted).update('Server Key').digest('base64') === m[3];
}

/**
 * The SCRAM-SHA-256 verifier PostgreSQL stores for `password` (RFC 5802, 7677; its `pg_authid.rolpassword` format),
 * so the password never travels in SQL text, where the server's statement log could keep it. The password is
 * printable ASCII (DATABASE_APP_PASSWORD's check), which SASLprep leaves as it is.
 */
function scramVerifier(password: string, salt = randomBytes(16)): string {
  const salted = pbkdf2Sync(password, salt, SCRAM_ITERATIONS, 32, 'sha256');
  const storedKey = createHash('sha256').update(createHmac('sha256', salted).update('Client Key').digest()).digest();
  const serverKey = createHmac('sha256', salted).update('Server Key').digest();
  return `SCRAM-SHA-256$${SCRAM_ITERATIONS}:${salt.toString('base64')}$${storedKey.toString('base64')}:${serverKey.toString('base64')}`;
}

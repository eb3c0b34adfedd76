import type { Command } from 'commander';
import { loadConfig } from '../config.js';
import { loginRoleSql, newLoginPassword } from '../lib/login-role.js';
import { io, withContext } from './cli-context.js';

/**
 * The `db` group: `db migrate` applies pending migrations and seeds the reference data; `db roles` prints the SQL
 * that creates the database roles where DATABASE_URL's user may not (SEC-3).
 */
export function registerDbCommands(program: Command): void {
  const db = program.command('db').description('Database');
  db.command('migrate')
    .option('--json', 'print JSON')
    .description('Apply pending migrations and seed reference data')
    // Booting migrates, creates the login role and seeds, as every start does.
    .action((opts) => withContext(async () => io(opts).print({ ok: true }, () => 'Database is up to date.')));
  db.command('roles')
    .option('--owner <user>', "the user that runs the migrations (default: DATABASE_URL's user)")
    .description('Print the SQL an administrator runs once to create the database roles (managed PostgreSQL)')
    .action((opts: { owner?: string }) => printRolesSql(opts.owner));
}

// SEC-3: needs no database. The SQL goes to stdout (pipe it to psql); a password it generated goes to stderr only.
function printRolesSql(ownerOption: string | undefined): void {
  const config = loadConfig();
  const owner = ownerOption ?? userOf(config.databaseUrl);
  if (!owner) throw new Error('--owner is required when DATABASE_URL is not set (the user that runs the migrations)');
  if (!config.databaseServiceRole)
    throw new Error('DATABASE_SERVICE_ROLE is none: the service uses DATABASE_URL itself and needs no roles');
  const password = config.databaseAppPassword ?? newLoginPassword();
  process.stdout.write(
    loginRoleSql({ name: config.databaseAppRole, serviceRole: config.databaseServiceRole, password }, owner),
  );
  process.stderr.write(
    config.databaseAppPassword
      ? `The login role's password is DATABASE_APP_PASSWORD's.\n`
      : `Give the service DATABASE_APP_PASSWORD=${password} (kept like DATA_ENCRYPTION_KEY; shown only now).\n`,
  );
}

function userOf(url: string | null): string | null {
  return url ? decodeURIComponent(new URL(url).username) || null : null;
}

import { scrubSecrets } from './logger.js';
import { ConfigError } from '../config.js';
import { isDatabaseUnavailable } from './db.js';
import { EmbeddedDbError } from './embedded-db.js';
import { LoginRoleError } from './login-role.js';
import { MigrationHistoryError } from './migrate.js';

/** What the explanation may name: the database address (password hidden) and the HTTP address. */
export interface StartupSettings {
  databaseUrl?: string | null;
  port?: number;
  host?: string;
}

type Errno = Error & {
  code?: string;
  syscall?: string;
  path?: string;
  address?: string;
  port?: number;
  errors?: unknown[];
};

/**
 * Explains an error that stopped a process from starting in one plain message: the cause, then "Fix: …".
 * Known causes: invalid configuration, the embedded database, migrations from another version, the database
 * unreachable or refusing us, the service's login role missing, refused or reaching too far (SEC-3), a port in use
 * or not allowed, a directory without permission. Anything else is given by its message with how to see more; never
 * a stack trace (see {@link failStartup}).
 */
export function explainStartupError(err: unknown, settings: StartupSettings = {}): string {
  const known = knownStartupProblem(err, settings);
  if (known) return known;
  return `${err instanceof Error ? err.message : String(err)}. Fix: see the message above; run again with LOG_LEVEL=debug to print where it failed.`;
}

/**
 * The message of {@link explainStartupError} for a recognised cause (configuration, database, ports, permissions),
 * or null for anything else (the CLI then shows the error's own message).
 */
export function knownStartupProblem(err: unknown, settings: StartupSettings = {}): string | null {
  if (err instanceof ConfigError)
    return `${err.message}\nFix: correct the variables named above (README, "Configuration").`;
  if (err instanceof EmbeddedDbError || err instanceof MigrationHistoryError || err instanceof LoginRoleError)
    return err.message;
  const e = (err instanceof Error ? err : new Error(String(err))) as Errno;
  const code = e.code ?? (e.errors?.[0] as Errno | undefined)?.code;
  if (e.syscall === 'listen' || code === 'EADDRINUSE') return listenProblem(e, code, settings);
  const db = databaseProblem(e, code, settings);
  if (db) return db;
  if ((code === 'EACCES' || code === 'EPERM' || code === 'EROFS') && e.path) {
    return `No permission to use ${e.path} (${code}). Fix: set DATA_DIR (and STORAGE_DIR) to a directory this user can write, or give this user that directory.`;
  }
  if ((code === 'ENOTDIR' || code === 'EEXIST') && e.path) {
    return `Cannot create the directory ${e.path}: a file is in the way (${code}). Fix: set DATA_DIR (and STORAGE_DIR) to a directory, or move that file.`;
  }
  return null;
}

function listenProblem(e: Errno, code: string | undefined, s: StartupSettings): string {
  const where = `${e.address ?? s.host ?? '0.0.0.0'}:${e.port ?? s.port ?? '?'}`;
  if (code === 'EADDRINUSE')
    return `Port ${where} is already in use by another program. Fix: stop that program, or set PORT (or METRICS_PORT) to a free port.`;
  if (code === 'EACCES')
    return `Not allowed to listen on ${where} (ports below 1024 need privileges). Fix: set PORT to 1024 or above and put a proxy in front.`;
  if (code === 'EADDRNOTAVAIL')
    return `Cannot listen on ${where}: that address is not on this machine. Fix: set HOST to one of its addresses, or 0.0.0.0.`;
  return `Cannot listen on ${where} (${code ?? e.message}). Fix: check HOST and PORT.`;
}

function databaseProblem(e: Errno, code: string | undefined, s: StartupSettings): string | null {
  const where = databaseAddress(s.databaseUrl);
  if (code === '28P01' || code === '28000') {
    return `The database at ${where} refused the credentials (${e.message}). Fix: correct the user and password in DATABASE_URL, or allow this host in pg_hba.conf.`;
  }
  if (code === '3D000')
    return `The database at ${where} does not exist (${e.message}). Fix: create it (createdb), or point DATABASE_URL at an existing database.`;
  if (code === '42501')
    return `The database user lacks a privilege the migrations need (${e.message}). Fix: connect as the owner of the database's schema, or grant it CREATE.`;
  if (isDatabaseUnavailable(e)) {
    return `Cannot reach the database at ${where} (${code ?? e.message}). Fix: start PostgreSQL or correct DATABASE_URL (host, port, network, firewall); leave DATABASE_URL unset for the embedded database.`;
  }
  return null;
}

// The host, port and database of a connection URL; the password never leaves this function.
function databaseAddress(url: string | null | undefined): string {
  if (!url) return 'the configured address';
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || 5432}${u.pathname}`;
  } catch {
    return 'DATABASE_URL';
  }
}

/**
 * Prints {@link explainStartupError}'s message to stderr as `Cannot start <what>: …` and exits with code 1.
 * With LOG_LEVEL=debug or trace the stack follows, for developers.
 */
export function failStartup(what: string, err: unknown, settings: StartupSettings = {}): never {
  process.stderr.write(`Cannot start ${what}: ${scrubSecrets(explainStartupError(err, settings))}\n`);
  if (/^(debug|trace)$/.test(process.env.LOG_LEVEL ?? '') && err instanceof Error)
    process.stderr.write(`${scrubSecrets(err.stack ?? '')}\n`);
  process.exit(1);
}

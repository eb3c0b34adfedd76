import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import Postgrator from 'postgrator';
import { routinesFingerprint } from './schema-snapshot.js';

const MIGRATIONS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../migrations');
/** One file per function (with the triggers that call it), applied after the numbered migrations: see applyRepeatables. */
const REPEATABLE_DIR = path.join(MIGRATIONS_DIR, 'repeatable');
const LOCK_KEY = 727_001; // one migrator at a time across processes

/** The database was migrated by files this checkout does not have; the message names them and the fix. */
export class MigrationHistoryError extends Error {
  override name = 'MigrationHistoryError';
}

/**
 * The highest migration number among the files in `migrations/` (e.g. 11 for `011.do.sql-generated-ids.sql`):
 * the version a database must have reached for this build of the service. Reads the directory on each call.
 */
export function latestMigrationVersion(): number {
  return Math.max(
    0,
    ...fs
      .readdirSync(MIGRATIONS_DIR)
      .map((f) => /^(\d+)\.do\./.exec(f)?.[1])
      .filter(Boolean)
      .map(Number),
  );
}

/**
 * Applies the numbered SQL files in `migrations/` (`NNN.do.<name>.sql`, forward-only) that the database
 * has not seen, then the files of `migrations/repeatable/` when they or the database's functions and triggers changed
 * ({@link applyRepeatables}). Safe to call from several processes at once: an advisory lock serialises them.
 * @returns the versions applied by this call.
 * @throws MigrationHistoryError; RepeatableSqlError naming the file that failed (nothing of the files is applied).
 */
export async function migrate(databaseUrl: string): Promise<number[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [LOCK_KEY]);
    const postgrator = new Postgrator({
      migrationPattern: path.join(MIGRATIONS_DIR, '*.do.*.sql'),
      driver: 'pg',
      schemaTable: 'schema_migrations',
      execQuery: (query) => client.query(query),
    });
    await throwIfDatabaseIsFromAnotherHistory(client, await postgrator.getMigrations());
    const applied = await postgrator.migrate();
    await applyRepeatables(client);
    return applied.map((m) => m.version);
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [LOCK_KEY]).catch(() => undefined);
    await client.end();
  }
}

// A database migrated by files this checkout does not have (another branch, or migrations renumbered before the
// first release) cannot be brought up to date safely: say so instead of half-applying.
async function throwIfDatabaseIsFromAnotherHistory(client: pg.Client, files: Postgrator.Migration[]): Promise<void> {
  const table = await client.query(`SELECT to_regclass('schema_migrations') AS t`);
  if (!table.rows[0].t) return;
  const known = new Set(files.map((m) => Number(m.version)));
  const { rows } = await client.query<{ version: string }>('SELECT version FROM schema_migrations WHERE version > 0');
  const foreign = rows.map((r) => Number(r.version)).filter((v) => !known.has(v));
  if (foreign.length) {
    throw new MigrationHistoryError(
      `The database has migration(s) ${foreign.join(', ')} that migrations/ does not contain: it was migrated by another ` +
        'version of the service. Fix: run the version that migrated it, or use a fresh database ' +
        '(another DATABASE_URL; with the embedded default, remove DATA_DIR/pg).',
    );
  }
}

/** A file of migrations/repeatable/ failed; the message names it. Nothing of the files was applied. */
class RepeatableSqlError extends Error {
  override name = 'RepeatableSqlError';
}

/** The `.sql` files of migrations/repeatable/, in name order, with their text. */
export function repeatableFiles(): Array<{ name: string; sql: string }> {
  return fs
    .readdirSync(REPEATABLE_DIR)
    .filter((f) => f.endsWith('.sql'))
    .sort()
    .map((name) => ({ name, sql: fs.readFileSync(path.join(REPEATABLE_DIR, name), 'utf8') }));
}

/**
 * Applies every file of migrations/repeatable/ (each a function's current definition, `CREATE OR REPLACE`, with the
 * triggers that call it), in name order and in one transaction, when the files differ from those last applied or the
 * database's functions and triggers differ from what they were right after (a numbered migration dropped or changed
 * one, or a hand-made change): the manner of Flyway's repeatable `R__` scripts. Otherwise it changes nothing, so a
 * start takes no lock on the tables the triggers belong to. Files applied by a version with newer numbered migrations
 * than this one's are left alone. `CREATE OR REPLACE` keeps a function's owner and grants; each file states what the
 * function must keep (SECURITY DEFINER with its search_path, settings, REVOKE from PUBLIC). What was applied is kept
 * in `schema_repeatables` (migration 107). Called by {@link migrate}, under its lock, after the numbered migrations.
 * @returns the files applied (empty when nothing had changed).
 * @throws RepeatableSqlError naming the file whose SQL failed.
 */
export async function applyRepeatables(client: pg.ClientBase): Promise<string[]> {
  const files = repeatableFiles();
  const digest = createHash('sha256');
  for (const f of files) digest.update(f.name).update('\0').update(f.sql).update('\0');
  const filesSha256 = digest.digest('hex');
  const version = latestMigrationVersion();
  const { rows } = await client.query<{ files_sha256: string; catalog_md5: string; migration_version: number }>(
    'SELECT files_sha256, catalog_md5, migration_version FROM schema_repeatables',
  );
  const last = rows[0];
  if (last && Number(last.migration_version) > version) return [];
  if (last?.files_sha256 === filesSha256 && last.catalog_md5 === (await routinesFingerprint(client))) return [];
  await client.query('BEGIN');
  try {
    for (const f of files) {
      await client.query(f.sql).catch((err: Error) => {
        throw new RepeatableSqlError(`migrations/repeatable/${f.name}: ${err.message}`, { cause: err });
      });
    }
    await client.query(
      `INSERT INTO schema_repeatables (id, files_sha256, catalog_md5, migration_version) VALUES (1, $1, $2, $3)
       ON CONFLICT (id) DO UPDATE SET files_sha256 = $1, catalog_md5 = $2, migration_version = $3, applied_at = now()`,
      [filesSha256, await routinesFingerprint(client), version],
    );
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
  return files.map((f) => f.name);
}

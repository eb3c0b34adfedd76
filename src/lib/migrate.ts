import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import Postgrator from 'postgrator';

const MIGRATIONS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../migrations');
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
 * has not seen. Safe to call from several processes at once: an advisory lock serialises them.
 * @returns the versions applied by this call.
 */
export async function migrate(databaseUrl: string): Promise<number[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [LOCK_KEY]);
    const postgrator = new Postgrator({
      migrationPattern: path.join(MIGRATIONS_DIR, '*'),
      driver: 'pg',
      schemaTable: 'schema_migrations',
      execQuery: (query) => client.query(query),
    });
    await throwIfDatabaseIsFromAnotherHistory(client, await postgrator.getMigrations());
    const applied = await postgrator.migrate();
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

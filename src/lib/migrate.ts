import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import Postgrator from 'postgrator';

const MIGRATIONS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../migrations');
const LOCK_KEY = 727_001; // one migrator at a time across processes

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
    const applied = await postgrator.migrate();
    return applied.map((m) => m.version);
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [LOCK_KEY]).catch(() => undefined);
    await client.end();
  }
}

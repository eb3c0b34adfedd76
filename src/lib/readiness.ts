import type pg from 'pg';
import { isDatabaseUnavailable } from './db.js';

/** The answer of a readiness check: ready, or why not. `migration` is the database's latest applied version. */
export interface Readiness {
  ready: boolean;
  /** Why the process cannot take traffic, for people reading a probe's failure. */
  reason?: string;
  migration?: number;
  /** The migration version this build needs. */
  expectedMigration: number;
}

/**
 * Builds the readiness check behind `GET /readyz`: the database answers and has at least this build's
 * migrations (a database ahead of us, during a rolling deploy of a newer version, is fine: migrations only add).
 * One query, and its answer is shared by every caller for `cacheMs` (default 1000 ms), so an unauthenticated
 * probe costs the database at most one cheap query per interval however often it is called.
 * @param expectedMigration from `latestMigrationVersion()`.
 */
export function readinessCheck(pool: pg.Pool, expectedMigration: number, cacheMs = 1000): () => Promise<Readiness> {
  let cached: { at: number; answer: Promise<Readiness> } | null = null;
  return () => {
    const now = Date.now();
    if (!cached || now - cached.at >= cacheMs) cached = { at: now, answer: check(pool, expectedMigration) };
    return cached.answer;
  };
}

async function check(pool: pg.Pool, expectedMigration: number): Promise<Readiness> {
  try {
    const { rows } = await pool.query<{ version: number | null }>(
      'SELECT max(version)::int AS version FROM schema_migrations',
    );
    const migration = rows[0]?.version ?? 0;
    if (migration < expectedMigration) {
      return {
        ready: false,
        reason: `database migrations are behind: at ${migration}, this version needs ${expectedMigration} (run \`cli db migrate\`)`,
        migration,
        expectedMigration,
      };
    }
    return { ready: true, migration, expectedMigration };
  } catch (err) {
    const e = err as { code?: string; message?: string };
    if (e.code === '42P01')
      return { ready: false, reason: 'database is not migrated (no schema_migrations table)', expectedMigration };
    const why = isDatabaseUnavailable(err) ? 'database unreachable' : 'database check failed';
    return { ready: false, reason: `${why} (${e.code ?? e.message ?? 'unknown error'})`, expectedMigration };
  }
}

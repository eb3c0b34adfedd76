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
 * One query, shared by every caller while it runs and for `cacheMs` (default 1000 ms) after its answer, so an
 * unauthenticated probe costs the database at most one cheap query per interval however often it is called.
 * @param expectedMigration from `latestMigrationVersion()`.
 */
export function readinessCheck(pool: pg.Pool, expectedMigration: number, cacheMs = 1000): () => Promise<Readiness> {
  // `answeredAt` is null while the query runs: every caller meanwhile shares it, however long a loaded database takes,
  // and its answer then serves for `cacheMs` from the moment it came.
  let cached: { answeredAt: number | null; answer: Promise<Readiness> } | null = null;
  return () => {
    if (cached && (cached.answeredAt === null || Date.now() - cached.answeredAt < cacheMs)) return cached.answer;
    const entry: { answeredAt: number | null; answer: Promise<Readiness> } = {
      answeredAt: null,
      answer: check(pool, expectedMigration).finally(() => {
        entry.answeredAt = Date.now();
      }),
    };
    cached = entry;
    return entry.answer;
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

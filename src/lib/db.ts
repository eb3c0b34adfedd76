import pg from 'pg';

// int8 columns hold cents and counts far below 2^53; DATE columns stay 'YYYY-MM-DD' strings (no time zone shift).
pg.types.setTypeParser(20, (v) => Number(v));
pg.types.setTypeParser(1082, (v) => v);

/** Anything that runs SQL: the pool or a client inside a transaction. Repositories take this. */
export type Db = Pick<pg.Pool, 'query'> | pg.PoolClient;

/** Creates the connection pool. `max` defaults to 10 connections. */
export function createPool(connectionString: string, max = 10): pg.Pool {
  const pool = new pg.Pool({ connectionString, max });
  // A client dropped by the server (restart, idle timeout) is replaced on next use instead of crashing the process.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

/**
 * Runs `work` in one transaction (READ COMMITTED) and commits, or rolls back and rethrows.
 * Every write that touches money, orders or events goes through here.
 */
export async function withTransaction<T>(pool: pg.Pool, work: (tx: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/** First row or null. */
export async function one<T extends pg.QueryResultRow>(db: Db, sql: string, params: unknown[] = []): Promise<T | null> {
  const { rows } = await db.query<T>(sql, params);
  return rows[0] ?? null;
}

/** All rows. */
export async function many<T extends pg.QueryResultRow>(db: Db, sql: string, params: unknown[] = []): Promise<T[]> {
  const { rows } = await db.query<T>(sql, params);
  return rows;
}

/** True for a unique-constraint violation, optionally of one named constraint. */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const e = err as { code?: string; constraint?: string };
  return e?.code === '23505' && (!constraint || e.constraint === constraint);
}

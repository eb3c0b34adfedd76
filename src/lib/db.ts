import pg from 'pg';
import { sendSignals, takeSignals } from './commit-signals.js';

// int8 columns hold cents and counts far below 2^53; DATE columns stay 'YYYY-MM-DD' strings (no time zone shift).
pg.types.setTypeParser(20, (v) => Number(v));
pg.types.setTypeParser(1082, (v) => v);

/** Anything that runs SQL: the pool or a client inside a transaction. Repositories take this. */
export type Db = Pick<pg.Pool, 'query'> | pg.PoolClient;

/**
 * Creates the connection pool. `max` defaults to 10 connections. `connectTimeoutMs` bounds the wait for a
 * connection (a new one or a free one), so a request fails with 503 instead of hanging while the database is down
 * or the pool is exhausted; unset, it waits as long as it takes. The connections have the rights of the URL's user
 * and of nothing else: the service's pools connect as its login role (SEC-3, src/lib/login-role.ts), never as a
 * user that switches to a role with SET ROLE, which a statement could switch back.
 * Connections are pipelined (pg's `pipeline` option): a query sent on a connection whose previous query has not
 * answered yet goes out at once and runs right after it, rather than waiting in the driver for that answer. Only the
 * placement queue sends that way (ORD-17); every other caller awaits each query, which the option leaves unchanged.
 */
export function createPool(connectionString: string, max = 10, connectTimeoutMs?: number): pg.Pool {
  const pool = new pg.Pool({
    connectionString,
    max,
    connectionTimeoutMillis: connectTimeoutMs,
    pipeline: true,
  });
  // A client dropped by the server (restart, idle timeout) is replaced on next use instead of crashing the process.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

/**
 * Runs `work` in one transaction (READ COMMITTED) and commits, or rolls back and rethrows.
 * Every write that touches money, orders or events goes through here. Wake-up signals the work marked
 * (signalAtCommit) are sent once COMMIT has returned, and dropped on rollback (OPS-5).
 */
export async function withTransaction<T>(pool: pg.Pool, work: (tx: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    const signals = takeSignals(client);
    if (signals) sendSignals(pool, signals);
    return result;
  } catch (err) {
    takeSignals(client, false);
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/**
 * Marks a savepoint in the caller's transaction, so a later {@link rollbackToSavepoint} undoes only what came after
 * it (e.g. a placement that failed after the card was charged, whose refund is then recorded in the same commit).
 * `name` is a fixed SQL identifier of the caller, never user input.
 */
export async function savepoint(tx: Db, name: string): Promise<void> {
  await tx.query(`SAVEPOINT ${name}`);
}

/** Undoes the caller's transaction back to the savepoint `name` (see {@link savepoint}); the transaction goes on. */
export async function rollbackToSavepoint(tx: Db, name: string): Promise<void> {
  await tx.query(`ROLLBACK TO SAVEPOINT ${name}`);
}

/**
 * Subscribes a dedicated connection to NOTIFY channels (one statement). `channels` are the service's fixed channel
 * names, never user input.
 */
export async function listenOn(client: pg.Client, channels: string[]): Promise<void> {
  await client.query(channels.map((c) => `LISTEN ${c}`).join('; '));
}

/** First row or null. */
export async function one<T extends pg.QueryResultRow>(db: Db, sql: string, params: unknown[] = []): Promise<T | null> {
  const { rows } = await db.query<T>(sql, params);
  return rows[0] ?? null;
}

/**
 * All rows of a named prepared statement: each connection parses and plans `sql` once, the first time it runs it,
 * and then only binds and executes it, which is most of what a read by key costs the database. For the hot
 * statements only; `name` is fixed per `sql` text (one name, one text, for the life of the process), and `sql` names
 * its columns rather than `*`, so a column added by a later migration cannot change a prepared result under a
 * running process.
 */
export async function manyPrepared<T extends pg.QueryResultRow>(
  db: Db,
  name: string,
  sql: string,
  params: unknown[],
): Promise<T[]> {
  const { rows } = await db.query<T>({ name, text: sql, values: params });
  return rows;
}

/** First row or null of a named prepared statement (see {@link manyPrepared}). */
export async function onePrepared<T extends pg.QueryResultRow>(
  db: Db,
  name: string,
  sql: string,
  params: unknown[],
): Promise<T | null> {
  return (await manyPrepared<T>(db, name, sql, params))[0] ?? null;
}

/** All rows. */
export async function many<T extends pg.QueryResultRow>(db: Db, sql: string, params: unknown[] = []): Promise<T[]> {
  const { rows } = await db.query<T>(sql, params);
  return rows;
}

// SQLSTATE classes and codes meaning "the server cannot serve us right now", not "this query is wrong":
// 08 connection exception, 57P01-57P03 shutting down / crashed / starting, 53300 too many connections.
const UNAVAILABLE_SQLSTATE = /^(08|57P0[1-3]|53300)/;
const UNAVAILABLE_ERRNO = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
]);
const UNAVAILABLE_MESSAGE =
  /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection terminated due to connection timeout/i;

/**
 * True when `err` says the database cannot be reached or is restarting (refused or dropped connections, pool
 * connect timeout, server shutting down), as opposed to an error in the query itself. Requests answer these
 * with 503 so clients retry; nothing was committed by the failed statement.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown; errors?: unknown[] } | null;
  if (!e || typeof e !== 'object') return false;
  if (
    typeof e.code === 'string' &&
    (UNAVAILABLE_ERRNO.has(e.code) || (e.code.length === 5 && UNAVAILABLE_SQLSTATE.test(e.code)))
  )
    return true;
  if (Array.isArray(e.errors) && e.errors.some(isDatabaseUnavailable)) return true; // AggregateError of IPv4/IPv6 attempts
  return typeof e.message === 'string' && UNAVAILABLE_MESSAGE.test(e.message);
}

/** True for a unique-constraint violation, optionally of one named constraint. */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const e = err as { code?: string; constraint?: string };
  return e?.code === '23505' && (!constraint || e.constraint === constraint);
}

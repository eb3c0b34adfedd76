import type pg from 'pg';
import type { Logger } from 'pino';
import { isDatabaseUnavailable } from './db.js';

/**
 * Tells an outage of the database once, as a warning naming the cause, instead of one error line per failed
 * poll, query or reconnect of background work (OPS-2). Whatever notices the outage calls `report`; whatever
 * notices the database answering again calls `recovered`.
 */
export interface OutageReporter {
  /**
   * Takes an error seen by background work. @returns true when it means the database is unreachable (then it is
   * logged as a warning the first time in an outage and at debug level afterwards), false for any other error,
   * which the caller logs itself.
   */
  report(err: unknown, context?: string): boolean;
  /** The database answered: the next outage is told again (and this one's end is logged once). */
  recovered(): void;
  /** True between the first reported failure and `recovered()`. */
  readonly down: boolean;
}

/** An outage reporter logging to `log` on behalf of `who` (e.g. "the worker"). */
export function createOutageReporter(log: Logger, who: string): OutageReporter {
  let since: number | null = null;
  return {
    report(err, context) {
      if (!isDatabaseUnavailable(err)) return false;
      const cause = (err as Error).message || String((err as { code?: string }).code ?? 'unreachable');
      if (since === null) {
        since = Date.now();
        log.warn({ cause, context }, `database unavailable (${cause}); ${who} waits and retries until it is back`);
      } else {
        log.debug({ cause, context }, 'database still unavailable');
      }
      return true;
    },
    recovered() {
      if (since === null) return;
      log.warn({ downMs: Date.now() - since }, `database reachable again; ${who} resumes`);
      since = null;
    },
    get down() {
      return since !== null;
    },
  };
}

/** A pool from {@link waitingPool}: the same pool, plus a way to wait for what was taken through it. */
export type WaitingPool = pg.Pool & {
  /**
   * Resolves once every connection taken through this wrapper (or still being waited for) is released, and stops
   * watching the pool's releases. A stopping process awaits it, once, before closing the pool (OPS-4).
   */
  drained(): Promise<void>;
};

/**
 * The same pool, except that `connect()` waits while the database is unreachable instead of failing: it retries
 * with backoff (200 ms doubling to `maxDelayMs`) until a connection opens, `stopping()` turns true (then the last
 * error is thrown), or the error is not about reachability. For a library that polls the database and treats a
 * failed connect as an error to log or, worse, as a reason to give up on a job it has already run
 * (graphile-worker's job completion). Both the promise and the callback form of `connect` are kept; every other
 * property is the pool's own.
 *
 * It also keeps the connections it hands out, for `drained()`, and learns of their return from the pool's `release`
 * event: graphile-worker records a finished job without waiting for that write (its runner's stop() can resolve
 * first), so closing the pool as soon as the runner has stopped would leave a job that ran locked, to be run again
 * by another worker (OPS-4).
 */
export function waitingPool(
  pool: pg.Pool,
  reporter: OutageReporter,
  stopping: () => boolean,
  maxDelayMs = 5_000,
): WaitingPool {
  let connecting = 0;
  const lent = new Set<pg.PoolClient>();
  const waiters: Array<() => void> = [];
  const settle = () => {
    if (connecting === 0 && lent.size === 0) for (const resolve of waiters.splice(0)) resolve();
  };
  const onRelease = (_err: Error, client: pg.PoolClient) => {
    if (lent.delete(client)) settle();
  };
  pool.on('release', onRelease);
  const open = async (): Promise<pg.PoolClient> => {
    let delay = 200;
    for (;;) {
      try {
        const client = await pool.connect();
        reporter.recovered();
        return client;
      } catch (err) {
        if (stopping() || !reporter.report(err, 'connect')) throw err;
        await new Promise((resolve) => setTimeout(resolve, delay));
        delay = Math.min(delay * 2, maxDelayMs);
      }
    }
  };
  const connect = async (): Promise<pg.PoolClient> => {
    connecting += 1;
    try {
      const client = await open();
      lent.add(client);
      return client;
    } finally {
      connecting -= 1;
      settle();
    }
  };
  const drained = async (): Promise<void> => {
    if (connecting > 0 || lent.size > 0) await new Promise<void>((resolve) => waiters.push(resolve));
    pool.off('release', onRelease);
  };
  return new Proxy(pool, {
    get(target, prop) {
      if (prop === 'drained') return drained;
      if (prop === 'connect') {
        return (
          callback?: (err: Error | undefined, client?: pg.PoolClient, done?: (release?: unknown) => void) => void,
        ) => {
          if (!callback) return connect();
          connect().then(
            (client) => callback(undefined, client, (release) => client.release(release as boolean)),
            (err: Error) => callback(err),
          );
          return undefined;
        };
      }
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  }) as WaitingPool;
}

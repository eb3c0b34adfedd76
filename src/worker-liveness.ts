import type pg from 'pg';

/**
 * Frees the jobs of worker processes that died mid-job ("a crash of the worker mid-delivery loses nothing").
 * graphile-worker 0.17 marks a running job with its worker pool's id (`locked_by`) and only frees it after 4
 * hours, so a webhook delivery cut off by a crash would wait that long. Here every worker pool holds a
 * session-level advisory lock named after its pool id for as long as its process lives; a lock that nobody holds
 * (the process died, so did its connection) means the pool is gone, and its jobs are handed back at once with
 * graphile-worker's own `force_unlock_workers`. A job is run at least once, never lost; webhook receivers
 * deduplicate on the event id.
 *
 * A restart of PostgreSQL ends every session, so the locks of live pools vanish too: the lock connection is
 * opened again and every lock re-taken as soon as the database answers (OPS-2), and a process never counts its
 * own pools as dead, so its running jobs are not handed to another worker in the meantime.
 */

/** First key of the two-key advisory locks (its own key space; migrate.ts uses the one-key form). */
const LIVENESS_LOCK_CLASS = 727_002;

/** Jobs locked more recently than this are left alone: the pool may still be taking its liveness lock. */
const LOCK_GRACE_SECONDS = 5;

/** How often a worker process looks for jobs of dead pools, in ms (also once at start). */
const SWEEP_INTERVAL_MS = 5_000;

/** How soon a lost lock connection is opened again, in ms (and again after each failed try). */
const RELOCK_INTERVAL_MS = 1_000;

/** A process's liveness locks and its sweeper; close it when the worker stops. */
export interface WorkerLiveness {
  /** Holds the liveness lock of a worker pool of this process until close(); resolves once it is held. */
  register(poolId: string): Promise<void>;
  /** Frees jobs of dead pools now. @returns the pool ids found dead. */
  sweep(): Promise<string[]>;
  /** True while the lock connection is open and holds every registered pool's lock. */
  readonly holding: boolean;
  close(): Promise<void>;
}

/** What a liveness reports besides failed sweeps. */
export interface LivenessEvents {
  /** A sweep or a re-lock failed (sweeps never throw into the worker). */
  onError(err: unknown): void;
  /** The lock connection was open again and every lock re-taken after it had been lost. */
  onRelocked?(): void;
}

/**
 * Starts liveness for one worker process: one pooled connection is kept for its locks (released on close,
 * dropped with the process on a crash, opened again when the database drops it), and a sweep runs at start
 * and every SWEEP_INTERVAL_MS.
 * @param events `onError` gets a failed sweep's or re-lock's error; a bare function is taken as `onError`.
 * @throws the connect error when the first lock connection cannot be opened.
 */
export async function startWorkerLiveness(
  pool: pg.Pool,
  events: LivenessEvents | ((err: unknown) => void),
): Promise<WorkerLiveness> {
  const { onError, onRelocked } = typeof events === 'function' ? { onError: events, onRelocked: undefined } : events;
  const mine = new Set<string>();
  let holder: pg.PoolClient | null = null;
  let pending: Promise<unknown> = Promise.resolve();
  let closed = false;
  let relockTimer: NodeJS.Timeout | null = null;

  // Serialises everything done on the holder: one query at a time on one connection.
  const onHolder = <T>(work: () => Promise<T>): Promise<T> => {
    const next = pending.then(work);
    pending = next.catch(() => undefined);
    return next;
  };
  const lockQuery = (client: pg.PoolClient, poolId: string) =>
    client.query('SELECT pg_advisory_lock($1, hashtext($2))', [LIVENESS_LOCK_CLASS, poolId]);

  const adopt = (client: pg.PoolClient) => {
    let lost = false;
    const onLost = () => {
      if (lost || closed) return;
      lost = true;
      if (holder === client) holder = null;
      client.release(true);
      scheduleRelock();
    };
    client.on('error', onLost);
    client.on('end', onLost);
    holder = client;
  };
  const scheduleRelock = () => {
    if (closed || relockTimer) return;
    relockTimer = setTimeout(() => {
      relockTimer = null;
      void relock();
    }, RELOCK_INTERVAL_MS);
  };
  const relock = () =>
    onHolder(async () => {
      if (closed || holder) return;
      let client: pg.PoolClient | null = null;
      try {
        client = await pool.connect();
        for (const poolId of mine) await lockQuery(client, poolId);
      } catch (err) {
        client?.release(true);
        onError(err);
        scheduleRelock();
        return;
      }
      adopt(client);
      onRelocked?.();
    });

  adopt(await pool.connect());
  const runSweep = () =>
    sweepDeadWorkers(pool, mine).catch((err) => {
      onError(err);
      return [] as string[];
    });
  const timer = setInterval(() => void runSweep(), SWEEP_INTERVAL_MS);
  timer.unref();
  return {
    register(poolId) {
      mine.add(poolId);
      // Without a holder the lock is taken by the next re-lock, with the others.
      return onHolder(async () => {
        if (holder) await lockQuery(holder, poolId);
      }).catch(onError);
    },
    sweep: runSweep,
    get holding() {
      return holder !== null;
    },
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      if (relockTimer) clearTimeout(relockTimer);
      await pending;
      // Ending the session releases its locks; the connection is not reused with locks held.
      const last = holder;
      holder = null;
      last?.release(true);
    },
  };
}

/**
 * One sweep: every pool id holding a job for longer than LOCK_GRACE_SECONDS whose liveness lock can be taken
 * (nobody holds it) is dead; its jobs and queues are unlocked so a live worker runs them again. Pools in `alive`
 * (the sweeping process's own) are never dead, whether or not their lock is held at this moment.
 * @returns the dead pool ids.
 */
export async function sweepDeadWorkers(pool: pg.Pool, alive: ReadonlySet<string> = new Set()): Promise<string[]> {
  // graphile-worker's `jobs` view is its stable way to read jobs; its tables may change in any release.
  const { rows } = await pool.query<{ locked_by: string }>(
    `SELECT DISTINCT locked_by FROM graphile_worker.jobs
      WHERE locked_by IS NOT NULL AND locked_at < now() - make_interval(secs => $1)`,
    [LOCK_GRACE_SECONDS],
  );
  const candidates = rows.map((r) => r.locked_by).filter((id) => !alive.has(id));
  if (!candidates.length) return [];
  const client = await pool.connect();
  const dead: string[] = [];
  try {
    for (const poolId of candidates) {
      const got = await client.query<{ free: boolean }>('SELECT pg_try_advisory_lock($1, hashtext($2)) AS free', [
        LIVENESS_LOCK_CLASS,
        poolId,
      ]);
      if (!got.rows[0]!.free) continue;
      await client.query('SELECT pg_advisory_unlock($1, hashtext($2))', [LIVENESS_LOCK_CLASS, poolId]);
      dead.push(poolId);
    }
    if (dead.length) await client.query('SELECT graphile_worker.force_unlock_workers($1::text[])', [dead]);
  } finally {
    client.release();
  }
  return dead;
}

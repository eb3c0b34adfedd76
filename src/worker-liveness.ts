import type pg from 'pg';

/**
 * Frees the jobs of worker processes that died mid-job (issue 4 item 10: "a crash of the worker mid-delivery
 * loses nothing"). graphile-worker 0.17 marks a running job with its worker pool's id (`locked_by`) and only
 * frees it after 4 hours, so a webhook delivery cut off by a crash would wait that long. Here every worker
 * pool holds a session-level advisory lock named after its pool id for as long as its process lives; a lock
 * that nobody holds (the process died, so did its connection) means the pool is gone, and its jobs are handed
 * back at once with graphile-worker's own `force_unlock_workers`. A job is run at least once, never lost;
 * webhook receivers deduplicate on the event id.
 */

/** First key of the two-key advisory locks (its own key space; migrate.ts uses the one-key form). */
const LIVENESS_LOCK_CLASS = 727_002;

/** Jobs locked more recently than this are left alone: the pool may still be taking its liveness lock. */
export const LOCK_GRACE_SECONDS = 5;

/** How often a worker process looks for jobs of dead pools, in ms (also once at start). */
export const SWEEP_INTERVAL_MS = 5_000;

/** A process's liveness locks and its sweeper; close it when the worker stops. */
export interface WorkerLiveness {
  /** Holds the liveness lock of a worker pool of this process until close(); resolves once it is held. */
  register(poolId: string): Promise<void>;
  /** Frees jobs of dead pools now. @returns the pool ids found dead. */
  sweep(): Promise<string[]>;
  close(): Promise<void>;
}

/**
 * Starts liveness for one worker process: one pooled connection is kept for its locks (released on close,
 * dropped with the process on a crash), and a sweep runs at start and every SWEEP_INTERVAL_MS.
 * @param onError called with a failed sweep's error (sweeps never throw into the worker).
 */
export async function startWorkerLiveness(pool: pg.Pool, onError: (err: unknown) => void): Promise<WorkerLiveness> {
  const holder = await pool.connect();
  let pending: Promise<unknown> = Promise.resolve();
  let closed = false;
  const runSweep = () => sweepDeadWorkers(pool).catch((err) => {
    onError(err);
    return [] as string[];
  });
  const timer = setInterval(() => void runSweep(), SWEEP_INTERVAL_MS);
  timer.unref();
  return {
    register(poolId) {
      const held = pending.then(() => holder.query('SELECT pg_advisory_lock($1, hashtext($2))', [LIVENESS_LOCK_CLASS, poolId])).then(() => undefined, onError);
      pending = held;
      return held;
    },
    sweep: runSweep,
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      await pending;
      // Ending the session releases its locks; the connection is not reused with locks held.
      holder.release(true);
    },
  };
}

/**
 * One sweep: every pool id holding a job for longer than LOCK_GRACE_SECONDS whose liveness lock can be taken
 * (nobody holds it) is dead; its jobs and queues are unlocked so a live worker runs them again.
 * @returns the dead pool ids.
 */
export async function sweepDeadWorkers(pool: pg.Pool): Promise<string[]> {
  const { rows } = await pool.query<{ locked_by: string }>(
    `SELECT DISTINCT locked_by FROM graphile_worker._private_jobs
      WHERE locked_by IS NOT NULL AND locked_at < now() - make_interval(secs => $1)`,
    [LOCK_GRACE_SECONDS],
  );
  if (!rows.length) return [];
  const client = await pool.connect();
  const dead: string[] = [];
  try {
    for (const { locked_by: poolId } of rows) {
      const got = await client.query<{ free: boolean }>('SELECT pg_try_advisory_lock($1, hashtext($2)) AS free', [LIVENESS_LOCK_CLASS, poolId]);
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

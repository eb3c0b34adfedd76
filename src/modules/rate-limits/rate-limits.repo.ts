import { many, type Db } from '../../lib/db.js';

/** Hits of one counter in one window to add: `windowStart` and `windowMs` in ms since the epoch / ms. */
export interface CounterDelta {
  bucket: string;
  windowStart: number;
  windowMs: number;
  hits: number;
}

/** A counter whose total to read without adding to it: `windowStart` in ms since the epoch. */
export interface CounterRead {
  bucket: string;
  windowStart: number;
}

/**
 * Adds every delta and reads the totals of `reads` (counters this process only looks at) in ONE statement, and
 * returns each counter's total over all processes, keyed by `${bucket}\u0000${windowStart}` (a read counter no
 * process has counted is absent). Rows are written in a fixed order so that processes syncing at the same time lock
 * them in the same order and never deadlock. `reads` must not name a counter of `deltas`.
 */
export async function addCounts(
  db: Db,
  deltas: CounterDelta[],
  reads: CounterRead[] = [],
): Promise<Map<string, number>> {
  const sorted = [...deltas].sort((a, b) =>
    a.bucket < b.bucket ? -1 : a.bucket > b.bucket ? 1 : a.windowStart - b.windowStart,
  );
  const rows = await many<{ bucket: string; window_start: number; hits: number }>(
    db,
    `WITH added AS (
       INSERT INTO rate_limit_counters AS c (bucket, window_start, hits, expires_at)
       SELECT d.bucket, d.window_start, sum(d.hits), to_timestamp((d.window_start + max(d.window_ms)) / 1000.0)
         FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::int[]) AS d(bucket, window_start, window_ms, hits)
        GROUP BY d.bucket, d.window_start
        ORDER BY d.bucket, d.window_start
       ON CONFLICT (bucket, window_start) DO UPDATE SET hits = c.hits + EXCLUDED.hits
       RETURNING bucket, window_start, hits
     )
     SELECT bucket, window_start, hits FROM added
     UNION ALL
     SELECT c.bucket, c.window_start, c.hits
       FROM unnest($5::text[], $6::bigint[]) AS r(bucket, window_start)
       JOIN rate_limit_counters c ON c.bucket = r.bucket AND c.window_start = r.window_start`,
    [
      sorted.map((d) => d.bucket),
      sorted.map((d) => d.windowStart),
      sorted.map((d) => d.windowMs),
      sorted.map((d) => d.hits),
      reads.map((r) => r.bucket),
      reads.map((r) => r.windowStart),
    ],
  );
  return new Map(rows.map((r) => [`${r.bucket}\u0000${r.window_start}`, r.hits]));
}

/** Deletes counters of windows that have ended. */
export async function deleteExpiredCounters(db: Db): Promise<void> {
  await db.query('DELETE FROM rate_limit_counters WHERE expires_at < now()');
}

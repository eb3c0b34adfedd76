import type pg from 'pg';

/** Shares (0-1) of {@link sampleStatementStates}' samples, which add up to 1. */
export interface StatementStates {
  /** A backend was running the statement, with no wait event: working on the CPU (or waiting for one). */
  running: number;
  /** Its backend was waiting for WAL to be written or flushed to disk: the commit's flush (IO:WALSync, WALWrite). */
  flush: number;
  /** Its backend was waiting for anything else: a lock, a file extension, a data page read. */
  otherWait: number;
  /** No backend was running it: the database waited for the service's next statement. */
  none: number;
}

/**
 * Where the time of one kind of statement goes in the database while `load` runs: every `everyMs` ms (the sampler
 * sleeps between samples, so about that often) reads `pg_stat_activity` for active client backends of this
 * database whose statement starts with `statement`, until `load` settles. When several are active at once, a
 * sample counts the first state of running, flush, other wait. Sampling costs a query each time, so run it in a
 * window of its own, not in one whose rate is reported. @returns the shares of samples; @throws what `load` throws.
 */
export async function sampleStatementStates(
  pool: pg.Pool,
  statement: string,
  everyMs: number,
  load: Promise<unknown>,
): Promise<StatementStates> {
  const counts = { running: 0, flush: 0, otherWait: 0, none: 0 };
  let done = false;
  const finished = load.finally(() => {
    done = true;
  });
  finished.catch(() => undefined); // rethrown below, once the sampling has stopped: not an unhandled rejection meanwhile
  while (!done) {
    const { rows } = await pool.query<{ wait: string | null }>(
      `SELECT wait_event_type || ':' || wait_event AS wait FROM pg_stat_activity
        WHERE datname = current_database() AND backend_type = 'client backend' AND state = 'active'
          AND pid <> pg_backend_pid() AND starts_with(query, $1)`,
      [statement],
    );
    counts[stateOf(rows.map((r) => r.wait))] += 1;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
  await finished;
  const total = counts.running + counts.flush + counts.otherWait + counts.none || 1;
  return {
    running: counts.running / total,
    flush: counts.flush / total,
    otherWait: counts.otherWait / total,
    none: counts.none / total,
  };
}

function stateOf(waits: Array<string | null>): keyof StatementStates {
  if (!waits.length) return 'none';
  if (waits.some((w) => w === null)) return 'running';
  if (waits.some((w) => /^(IO:WAL(Sync|Write)|LWLock:WALWrite)$/.test(w!))) return 'flush';
  return 'otherWait';
}

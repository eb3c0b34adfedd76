import { startChild } from './lib/child.js';
import { runLoad, type LoadFigures } from './lib/load.js';
import { record } from './lib/report.js';

/** The bare baselines of one run: one INSERT per request and one SELECT by key per request. */
export interface Baselines {
  insert: LoadFigures;
  select: LoadFigures;
  /**
   * Loads the baseline server again now, for `seconds`: the bench's ratios are taken against windows of it that
   * alternate with the measured path's (see {@link alternating}), so that a machine whose speed drifts during the
   * run moves both alike. The first figures above are the ones printed as this run's baselines.
   */
  measure(kind: 'insert' | 'select', seconds: number): Promise<LoadFigures>;
  /** Stops the baseline server. */
  close(): Promise<void>;
}

/** Bench settings shared by every section. */
export interface BenchSettings {
  /** Seconds per load scenario. */
  seconds: number;
  /** Concurrent HTTP connections of the load generator, and the database pool size of the servers. */
  connections: number;
}

/**
 * Measures the baselines on `databaseUrl` (a fresh database of this run): a bare Fastify + pg server in its
 * own process, loaded by autocannon from this process with `connections` connections for `seconds` each. The server
 * stays up for {@link Baselines.measure} until `close()`.
 */
export async function measureBaselines(databaseUrl: string, s: BenchSettings): Promise<Baselines> {
  const server = await startChild('baseline-server.ts', {
    DATABASE_URL: databaseUrl,
    BENCH_POOL_SIZE: String(s.connections),
  });
  let rows = 1;
  const measure = async (kind: 'insert' | 'select', seconds: number) => {
    if (kind === 'insert') {
      const insert = await runLoad({
        url: `${server.url}/insert`,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ kind: 'baseline', note: 'one row per request', n: 1 }),
        connections: s.connections,
        seconds,
      });
      rows += insert.ok;
      return insert;
    }
    let n = 0;
    return runLoad({
      url: `${server.url}/select/1`,
      connections: s.connections,
      seconds,
      requests: [{ setupRequest: (r) => ({ ...r, path: `/select/${(n++ % rows) + 1}` }) }],
    });
  };
  try {
    const insert = await measure('insert', s.seconds);
    record({ section: 'baseline', name: 'one INSERT per request', value: insert.rps, unit: 'req/s' });
    const select = await measure('select', s.seconds);
    record({ section: 'baseline', name: 'one SELECT by key per request', value: select.rps, unit: 'req/s' });
    return { insert, select, measure, close: () => server.stop() };
  } catch (err) {
    await server.stop();
    throw err;
  }
}

/** A path's throughput measured in windows alternating with a baseline's, and that baseline over the same windows. */
export interface Alternated {
  /** Requests per second of the path over all its windows. */
  rps: number;
  /** Requests per second of the baseline over its windows, taken between the path's. */
  baselineRps: number;
  /** The median of the path's windows' p99, ms. */
  p99: number;
  failed: number;
}

/** Windows per side of {@link alternating}. */
export const WINDOWS = 3;

/**
 * Seconds of load a path gets before its first timed window, as the baseline's server has had by then (its code
 * optimised under load, a route's response serializer compiled at its first answer).
 */
export const WARM_UP_SECONDS = 2;

/**
 * Measures a path (`run(seconds)`, one closed-loop window) in WINDOWS windows, each right after a window of the
 * baseline `kind`, `seconds` in all per side: the ratio of the two sums compares the path with the baseline as the
 * machine was at the same moments.
 */
export async function alternating(
  baselines: Baselines,
  kind: 'insert' | 'select',
  seconds: number,
  run: (seconds: number) => Promise<LoadFigures>,
): Promise<Alternated> {
  const window = Math.max(1, Math.round(seconds / WINDOWS));
  let base = 0;
  let path = 0;
  let failed = 0;
  const p99s: number[] = [];
  for (let i = 0; i < WINDOWS; i++) {
    base += (await baselines.measure(kind, window)).rps;
    const figures = await run(window);
    path += figures.rps;
    failed += figures.failed;
    p99s.push(figures.p99);
  }
  return {
    rps: path / WINDOWS,
    baselineRps: base / WINDOWS,
    p99: p99s.sort((a, b) => a - b)[Math.floor(WINDOWS / 2)]!,
    failed,
  };
}

import { startChild } from './lib/child.js';
import { addCpu, type CpuSpent, cpuBetween, NO_CPU, readCpu } from './lib/cpu-usage.js';
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
  /** The baseline server's process id (whose CPU {@link alternating} counts). */
  pid: number | undefined;
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
    return { insert, select, measure, pid: server.process.pid, close: () => server.stop() };
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
  /**
   * The CPU the path's and the baseline's windows spent, and the requests they answered (2xx), when `pathPid` was
   * given and /proc can be read.
   */
  cpu?: { path: CpuSpent; pathRequests: number; baseline: CpuSpent; baselineRequests: number };
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
 * machine was at the same moments. With `pathPid` (the process serving the path) it also counts the CPU each side's
 * windows spent, by part (see `CpuSpent`).
 */
export async function alternating(
  baselines: Baselines,
  kind: 'insert' | 'select',
  seconds: number,
  run: (seconds: number) => Promise<LoadFigures>,
  pathPid?: number,
): Promise<Alternated> {
  const window = Math.max(1, Math.round(seconds / WINDOWS));
  let base = 0;
  let path = 0;
  let failed = 0;
  const p99s: number[] = [];
  const cpu = { path: NO_CPU, pathRequests: 0, baseline: NO_CPU, baselineRequests: 0 };
  let counted = pathPid !== undefined;
  // Runs one window and adds what it spent; a window whose readings failed leaves the CPU figures out.
  const timed = async (pid: number | undefined, load: () => Promise<LoadFigures>) => {
    const before = counted ? readCpu(pid) : null;
    const figures = await load();
    const after = before ? readCpu(pid) : null;
    counted = counted && after !== null;
    return { figures, spent: before && after ? cpuBetween(before, after) : NO_CPU };
  };
  for (let i = 0; i < WINDOWS; i++) {
    const b = await timed(baselines.pid, () => baselines.measure(kind, window));
    base += b.figures.rps;
    cpu.baseline = addCpu(cpu.baseline, b.spent);
    cpu.baselineRequests += b.figures.ok;
    const p = await timed(pathPid, () => run(window));
    path += p.figures.rps;
    failed += p.figures.failed;
    p99s.push(p.figures.p99);
    cpu.path = addCpu(cpu.path, p.spent);
    cpu.pathRequests += p.figures.ok;
  }
  return {
    rps: path / WINDOWS,
    baselineRps: base / WINDOWS,
    p99: p99s.sort((a, b) => a - b)[Math.floor(WINDOWS / 2)]!,
    failed,
    ...(counted ? { cpu } : {}),
  };
}

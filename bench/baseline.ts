import { startChild } from './lib/child.js';
import { runLoad, type LoadFigures } from './lib/load.js';
import { record } from './lib/report.js';

/** The bare baselines of one run: one INSERT per request and one SELECT by key per request. */
export interface Baselines {
  insert: LoadFigures;
  select: LoadFigures;
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
 * own process, loaded by autocannon from this process with `connections` connections for `seconds` each.
 */
export async function measureBaselines(databaseUrl: string, s: BenchSettings): Promise<Baselines> {
  const server = await startChild('baseline-server.ts', {
    DATABASE_URL: databaseUrl,
    BENCH_POOL_SIZE: String(s.connections),
  });
  try {
    const body = JSON.stringify({ kind: 'baseline', note: 'one row per request', n: 1 });
    const insert = await runLoad({
      url: `${server.url}/insert`,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      connections: s.connections,
      seconds: s.seconds,
    });
    record({ section: 'baseline', name: 'one INSERT per request', value: insert.rps, unit: 'req/s' });
    const rows = Math.max(1, insert.ok);
    let n = 0;
    const select = await runLoad({
      url: `${server.url}/select/1`,
      connections: s.connections,
      seconds: s.seconds,
      requests: [{ setupRequest: (r) => ({ ...r, path: `/select/${(n++ % rows) + 1}` }) }],
    });
    record({ section: 'baseline', name: 'one SELECT by key per request', value: select.rps, unit: 'req/s' });
    return { insert, select };
  } finally {
    await server.stop();
  }
}

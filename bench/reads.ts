/**
 * Bench section `reads`: GET of single resources — a company, a user, a document and an event — with a warm API-key
 * cache, against the one-SELECT-by-key baseline of the same run, measured in windows alternating with each path's
 * (target: 70 % of it, AUTH-12), each path after WARM_UP_SECONDS of load of its own. The service runs in its own
 * process on a fresh database; the resources are made through the API first.
 */
import pg from 'pg';
import { alternating, WARM_UP_SECONDS } from './baseline.js';
import type { BenchSection } from './run.js';
import { startChild } from './lib/child.js';
import { runLoad } from './lib/load.js';
import { record } from './lib/report.js';
import { createBenchTenant } from './lib/tenant.js';
import { formationBody } from './orders.js';

/** The share of the SELECT baseline a single-resource GET should reach. */
export const READ_TARGET = 0.7;

export const benchReads: BenchSection = async (db, settings, baselines) => {
  const url = await db.another('reads');
  const server = await startChild('app-server.ts', {
    DATABASE_URL: url,
    DATABASE_POOL_SIZE: String(settings.connections),
  });
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  try {
    const { headers, userId } = await createBenchTenant(pool, server.url, 'Bench Reads Org', 1_000_000);
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${server.url}/test/v1${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
      return res.json() as Promise<Record<string, any>>;
    };
    const placed = await call('POST', '/orders', formationBody(userId));
    const orderId = placed.items[0].orderId as string;
    const document = await call('POST', `/test_helpers/orders/${orderId}/documents`, { documentType: 'company' });
    const events = await call('GET', '/events?limit=1');
    const targets: Array<[string, string]> = [
      ['GET /companies/{id}', `/companies/${placed.companyId}`],
      ['GET /users/{id}', `/users/${userId}`],
      ['GET /documents/{id}', `/documents/${document.documentId}`],
      ['GET /events/{id}', `/events/${events.data[0].id}`],
    ];
    for (const [name, path] of targets) {
      const run = (seconds: number) =>
        runLoad({ url: `${server.url}/test/v1${path}`, headers, connections: settings.connections, seconds });
      // Without it the path timed first paid for the service's warm-up: 62-64 % of the baseline in three runs, 76-82 %
      // warmed.
      await run(WARM_UP_SECONDS);
      const load = await alternating(baselines, 'select', settings.seconds, run);
      record({
        section: 'reads',
        name,
        value: load.rps,
        unit: 'req/s',
        baseline: { name: 'SELECT baseline beside it', value: load.baselineRps },
        target: `>= ${READ_TARGET * 100} % of SELECT baseline`,
        pass: load.rps / load.baselineRps >= READ_TARGET && load.failed === 0,
      });
      record({ section: 'reads', name: `${name} p99`, value: load.p99, unit: 'ms' });
    }
  } finally {
    await pool.end();
    await server.stop();
  }
};

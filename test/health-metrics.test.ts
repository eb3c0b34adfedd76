import { EventEmitter } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { run, type WorkerEvents } from 'graphile-worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { createPool } from '../src/lib/db.js';
import { startMetricsServer } from '../src/lib/metrics-server.js';
import { observeJobFailures, registry } from '../src/lib/metrics.js';
import { latestMigrationVersion } from '../src/lib/migrate.js';
import { withTransaction } from '../src/lib/db.js';
import { verifyLedger } from '../src/modules/ledger-audit/ledger-verify.js';
import { emitEvents } from '../src/modules/events/events.service.js';
import { createTestApp, OPERATOR_TOKEN, type TestApp } from './harness.js';
import { listeningPort, spawnService, type ServiceProcess } from './service-process.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t?.close();
});

/** A sample line of the Prometheus text, e.g. `worker_job_failures_total{task="x",will_retry="false"} 1`. */
function sample(text: string, name: string, labels: Record<string, string>): number | null {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const labelText = line.slice(name.length + 1, line.indexOf('}'));
    if (wanted.every((w) => labelText.split(',').includes(w))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return null;
}

describe('health probes', () => {
  it('GET /healthz answers without a key or a database query', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok' });
  });

  it("GET /readyz is ready when the database has this build's migrations", async () => {
    const res = await t.app.inject({ method: 'GET', url: '/readyz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      status: 'ready',
      migration: latestMigrationVersion(),
      expectedMigration: latestMigrationVersion(),
    });
    expect(latestMigrationVersion()).toBeGreaterThanOrEqual(11);
  });

  it('GET /readyz answers 503 naming the cause when the database is behind or unreachable', async () => {
    const behind = await createTestApp();
    try {
      await behind.ctx.pool.query(
        'DELETE FROM schema_migrations WHERE version = (SELECT max(version) FROM schema_migrations)',
      );
      const res = await behind.app.inject({ method: 'GET', url: '/readyz' });
      expect(res.statusCode).toBe(503);
      expect(res.json()).toMatchObject({
        code: 'service_unavailable',
        message: expect.stringMatching(/migrations are behind: at \d+, this version needs \d+/),
      });
    } finally {
      await behind.close();
    }
    const deadPool = createPool('postgres://postgres:postgres@127.0.0.1:1/none', 1, 2000);
    const unreachable = await buildApp({ ...t.ctx, pool: deadPool }, { logger: false });
    try {
      const res = await unreachable.inject({ method: 'GET', url: '/readyz' });
      expect(res.statusCode).toBe(503);
      expect(res.json().message).toMatch(/database unreachable \(ECONNREFUSED\)/);
      expect((await unreachable.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
      // Any request needing the database fails at once with 503 and says to retry, instead of hanging or a 500.
      const tenant = await t.newTenant();
      const api = await unreachable.inject({
        method: 'GET',
        url: '/test/v1/users',
        headers: { 'x-api-key': tenant.keys.test },
      });
      expect(api.statusCode).toBe(503);
      expect(api.json()).toMatchObject({
        code: 'service_unavailable',
        message: expect.stringMatching(/database is unavailable.*Retry/),
      });
    } finally {
      await unreachable.close();
      await deadPool.end();
    }
  });

  it('GET /readyz shares one query among callers within a second', async () => {
    let queries = 0;
    const counting = createPool(t.ctx.config.databaseUrl!, 2);
    counting.on('acquire', () => (queries += 1));
    const app = await buildApp({ ...t.ctx, pool: counting }, { logger: false });
    try {
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => app.inject({ method: 'GET', url: '/readyz' })),
      );
      expect(answers.map((a) => a.statusCode)).toEqual(Array(20).fill(200));
      expect(queries).toBe(1);
    } finally {
      await app.close();
      await counting.end();
    }
  });
});

describe('metrics', () => {
  it('GET /metrics needs the operator token and serves request durations by route and status, and pool use', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(401);
    await t.app.inject({ method: 'GET', url: '/healthz' });
    const res = await t.app.inject({
      method: 'GET',
      url: '/metrics',
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}` },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(
      sample(res.body, 'http_request_duration_seconds_count', { method: 'GET', route: '/healthz', status: '200' }),
    ).toBeGreaterThanOrEqual(1);
  });

  it('METRICS_PORT serves the same text without authentication, and nothing else', async () => {
    const server = await startMetricsServer(0, '127.0.0.1');
    try {
      const res = await fetch(`http://127.0.0.1:${server.port}/metrics`);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('# TYPE http_request_duration_seconds histogram');
      expect((await fetch(`http://127.0.0.1:${server.port}/admin/v1/organizations`)).status).toBe(404);
    } finally {
      await server.close();
    }
  });

  it('counts failed job attempts by task, and whether the job will be retried', async () => {
    const events: WorkerEvents = new EventEmitter();
    observeJobFailures(events);
    const runner = await run({
      pgPool: t.ctx.pool,
      taskList: {
        always_fails: async () => {
          throw new Error('the receiving system said no');
        },
      },
      concurrency: 1,
      noHandleSignals: true,
      pollInterval: 100,
      events,
      logger: new (await import('graphile-worker')).Logger(() => () => undefined),
    });
    const server = await startMetricsServer(0, '127.0.0.1');
    try {
      await runner.addJob('always_fails', {}, { maxAttempts: 1 });
      await runner.addJob('always_fails', {}, { maxAttempts: 5 });
      const deadline = Date.now() + 20_000;
      let text = '';
      for (;;) {
        text = await (await fetch(`http://127.0.0.1:${server.port}/metrics`)).text();
        if (
          sample(text, 'worker_job_failures_total', { task: 'always_fails', will_retry: 'false' }) === 1 &&
          sample(text, 'worker_job_failures_total', { task: 'always_fails', will_retry: 'true' }) === 1
        )
          break;
        if (Date.now() > deadline) throw new Error(`job failures never counted; metrics:\n${text}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(await registry.getSingleMetricAsString('worker_job_failures_total')).toContain('task="always_fails"');
    } finally {
      await server.close();
      await runner.stop();
    }
  });

  it('a worker process serves its metrics, job failures and its pool included, on METRICS_PORT, to this machine only', async () => {
    const worker: ServiceProcess = spawnService('src/worker-main.ts', {
      DATABASE_URL: t.ctx.config.databaseUrl!,
      OPERATOR_TOKEN,
      FILE_URL_SECRET: 'test-file-url-secret-0123456789',
      METRICS_PORT: '0',
      // Every address for the API: not for the unauthenticated metrics, which stay on 127.0.0.1 (METRICS_HOST unset).
      HOST: '0.0.0.0',
      LOG_LEVEL: 'info',
    });
    try {
      const { port, host } = await worker.waitForLog(/^metrics listening$/);
      expect(host).toBe('127.0.0.1');
      await worker.waitForLog(/^worker started$/);
      const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      expect(text).toContain('# TYPE worker_job_failures_total counter');
      expect(sample(text, 'db_pool_clients', { pool: 'worker', state: 'total' })).toBeGreaterThanOrEqual(1);
      // Another address of this machine (on Linux all of 127.0.0.0/8 is local) is not listened on.
      await expect(fetch(`http://127.0.0.2:${port}/metrics`)).rejects.toMatchObject({
        cause: { code: 'ECONNREFUSED' },
      });
    } finally {
      worker.kill();
    }
  });

  it('an API process reports the webhook backlog and its oldest age, and the last ledger check whichever process ran it', async () => {
    const api: ServiceProcess = spawnService('src/server.ts', {
      DATABASE_URL: t.ctx.config.databaseUrl!,
      OPERATOR_TOKEN,
      FILE_URL_SECRET: 'test-file-url-secret-0123456789',
      PORT: '0',
      START_WORKER: 'false',
      LOG_LEVEL: 'info',
    });
    try {
      const port = await listeningPort(api);
      const scrape = async () => {
        const res = await fetch(`http://127.0.0.1:${port}/metrics`, {
          headers: { authorization: `Bearer ${OPERATOR_TOKEN}` },
        });
        expect(res.status).toBe(200);
        return res.text();
      };
      const value = (text: string, name: string) => {
        const line = text.split('\n').find((l) => l.startsWith(`${name} `));
        return line === undefined ? null : Number(line.slice(name.length + 1));
      };
      // No check has run on this database: the time says so, rather than a 0 that would read as "all added up".
      let text = await scrape();
      expect(value(text, 'fcs_ledger_last_check_timestamp_seconds')).toBe(0);
      // Pool use of the pool that serves this process's requests, beside the worker pool's.
      for (const pool of ['api', 'worker'])
        for (const state of ['total', 'idle', 'waiting'])
          expect(sample(text, 'db_pool_clients', { pool, state }), `${pool} ${state}`).toBeGreaterThanOrEqual(0);

      // Three deliveries due to an endpoint no worker serves (this process runs none): the backlog grows and ages.
      const tenant = await t.newTenant('Backlog Co');
      expect((await tenant.api('POST', '/test_helpers/balance-credits', { amount: 25 })).statusCode).toBe(201);
      const endpoint = (
        await tenant.api('POST', '/webhook-endpoints', {
          url: 'http://127.0.0.1:9/hooks',
          eventTypes: ['document.uploaded'],
        })
      ).json();
      const events = Array.from({ length: 3 }, (_, n) => ({
        type: 'document.uploaded' as const,
        data: { documentType: 'company', n },
      }));
      await withTransaction(t.ctx.pool, (tx) =>
        emitEvents(tx, { organizationId: tenant.organizationId, environment: 'test' }, events),
      );
      await new Promise((r) => setTimeout(r, 1500));
      text = await scrape();
      expect(value(text, 'webhook_backlog_due_deliveries')).toBeGreaterThanOrEqual(3);
      expect(value(text, 'webhook_backlog_oldest_due_seconds')).toBeGreaterThanOrEqual(1);
      expect((await tenant.api('DELETE', `/webhook-endpoints/${endpoint.id}`)).statusCode).toBeLessThan(300);

      // A check run by another process (here the test's) that finds a balance the ledger does not explain.
      await t.ctx.pool.query(
        `UPDATE balances SET balance_cents = balance_cents + 1 WHERE organization_id = $1 AND environment = 'test'`,
        [tenant.organizationId],
      );
      const before = Date.now() / 1000;
      expect(await verifyLedger(t.ctx)).toHaveLength(1);
      await new Promise((r) => setTimeout(r, 600)); // past the scrape cache
      text = await scrape();
      expect(value(text, 'fcs_ledger_differences')).toBe(1);
      expect(value(text, 'fcs_ledger_last_check_timestamp_seconds')).toBeGreaterThanOrEqual(Math.floor(before) - 1);
      await t.ctx.pool.query(
        `UPDATE balances SET balance_cents = balance_cents - 1 WHERE organization_id = $1 AND environment = 'test'`,
        [tenant.organizationId],
      );
      expect(await verifyLedger(t.ctx)).toEqual([]);
      await new Promise((r) => setTimeout(r, 600));
      expect(value(await scrape(), 'fcs_ledger_differences')).toBe(0);
    } finally {
      api.kill();
    }
  });

  it('a worker process counts its webhook attempts by outcome', async () => {
    // Each delivery is refused with 500 on its first arrival and accepted on its second.
    const seen = new Set<string>();
    const receiver = http.createServer((req, res) => {
      const id = String(req.headers['service-delivery-id']);
      req.resume();
      res.writeHead(seen.has(id) ? 200 : 500).end();
      seen.add(id);
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const tenant = await t.newTenant('Outcome Co');
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
    expect(
      (await tenant.api('POST', '/webhook-endpoints', { url, eventTypes: ['document.uploaded'] })).statusCode,
    ).toBe(201);
    const events = Array.from({ length: 2 }, (_, n) => ({
      type: 'document.uploaded' as const,
      data: { documentType: 'company', n },
    }));
    await withTransaction(t.ctx.pool, (tx) =>
      emitEvents(tx, { organizationId: tenant.organizationId, environment: 'test' }, events),
    );
    const worker: ServiceProcess = spawnService('src/worker-main.ts', {
      DATABASE_URL: t.ctx.config.databaseUrl!,
      OPERATOR_TOKEN,
      FILE_URL_SECRET: 'test-file-url-secret-0123456789',
      METRICS_PORT: '0',
      LOG_LEVEL: 'info',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_RETRY_SCHEDULE: '1,1,1',
    });
    try {
      const { port } = await worker.waitForLog(/^metrics listening$/);
      const deadline = Date.now() + 30_000;
      let text = '';
      for (;;) {
        text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
        if ((sample(text, 'webhook_delivery_attempts_total', { outcome: 'success' }) ?? 0) >= 2) break;
        if (Date.now() > deadline) throw new Error(`attempts never counted; metrics:\n${text}`);
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(sample(text, 'webhook_delivery_attempts_total', { outcome: 'http_error' })).toBeGreaterThanOrEqual(2);
      expect(text).toContain('# TYPE webhook_deliveries_in_flight gauge');
    } finally {
      worker.kill();
      receiver.closeAllConnections();
      await new Promise((resolve) => receiver.close(resolve));
    }
  });
});

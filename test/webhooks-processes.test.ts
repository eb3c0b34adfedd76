import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { withTransaction } from '../src/lib/db.js';
import { emitEvent, emitEvents, type NewEvent } from '../src/modules/events/events.service.js';
import { createTestApp, OPERATOR_TOKEN, type TestApp, type TestTenant } from './harness.js';
import { spawnService, type ServiceProcess } from './service-process.js';
import { verifyWithStripe, waitFor, type ReceivedRequest } from './webhook-receiver.js';

// Real worker processes (`npm run worker`) against one database: a SIGKILL mid-send loses nothing, and several
// processes share the deliveries without two of them attempting one delivery at once (WH-15, WH-16).
let t: TestApp;
const workers: ServiceProcess[] = [];
beforeAll(async () => {
  t = await createTestApp();
});
afterEach(async () => {
  for (const w of workers.splice(0)) {
    w.kill();
    await w.exited;
  }
});
afterAll(async () => {
  await t?.close();
});

/** `npm run worker` as its own OS process on the test database, serving its metrics on a port of its own. */
async function startWorkerProcess(
  env: Record<string, string> = {},
): Promise<{ proc: ServiceProcess; metricsPort: number }> {
  const proc = spawnService('src/worker-main.ts', {
    DATABASE_URL: t.ctx.config.databaseUrl!,
    OPERATOR_TOKEN,
    FILE_URL_SECRET: t.ctx.secrets.fileUrlSecret,
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    METRICS_PORT: '0',
    LOG_LEVEL: 'info',
    ...env,
  });
  workers.push(proc);
  const line = await proc.waitForLog(/^metrics listening$/, 60_000);
  await proc.waitForLog(/^worker started$/, 60_000);
  return { proc, metricsPort: Number(line.port) };
}

/**
 * A receiver that records, per delivery id (Service-Delivery-Id), how many attempts were open at the same time.
 * `answer` decides each request: a status after `delayMs`, or 'hang'.
 */
interface TrackingReceiver {
  url: string;
  requests: ReceivedRequest[];
  maxConcurrentPerDelivery(): number;
  answer: (req: ReceivedRequest) => { status: number; delayMs?: number } | 'hang';
  close(): Promise<void>;
}

async function startTrackingReceiver(): Promise<TrackingReceiver> {
  const open = new Map<string, number>();
  let max = 0;
  const receiver: TrackingReceiver = {
    url: '',
    requests: [],
    maxConcurrentPerDelivery: () => max,
    answer: () => ({ status: 200 }),
    close: async () => undefined,
  };
  const server = http.createServer((req, res) => {
    const id = String(req.headers['service-delivery-id']);
    const n = (open.get(id) ?? 0) + 1;
    open.set(id, n);
    max = Math.max(max, n);
    const done = () => open.set(id, (open.get(id) ?? 1) - 1);
    req.on('close', done);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      const received: ReceivedRequest = {
        path: req.url ?? '/',
        headers: req.headers,
        rawBody,
        event: JSON.parse(rawBody),
      };
      receiver.requests.push(received);
      const answer = receiver.answer(received);
      if (answer === 'hang') return;
      setTimeout(() => res.writeHead(answer.status).end('ok'), answer.delayMs ?? 0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  receiver.close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return receiver;
}

async function deliveryStates(tenant: TestTenant) {
  const { rows } = await t.ctx.pool.query<{ id: string; status: string; attempt_count: number }>(
    'SELECT id, status, attempt_count FROM webhook_deliveries WHERE organization_id = $1 ORDER BY id',
    [tenant.organizationId],
  );
  return rows;
}

/** The worker's `webhook_delivery_attempts_total{outcome="success"}`, read from its metrics port. */
async function successfulAttempts(metricsPort: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('webhook_delivery_attempts_total{outcome="success"}'));
  return line ? Number(line.split(' ').pop()) : 0;
}

describe('webhook delivery by worker processes', () => {
  it('sends again what a worker killed with SIGKILL had in flight, after its lease, and records one attempt each', async () => {
    const r = await startTrackingReceiver();
    try {
      const tenant = await t.newTenant();
      const ep = (
        await tenant.api('POST', '/webhook-endpoints', { url: r.url, eventTypes: ['document.uploaded'] })
      ).json();
      // The first worker's requests never get an answer.
      r.answer = () => 'hang';
      const first = await startWorkerProcess({ WEBHOOK_TIMEOUT_MS: '60000', WEBHOOK_LEASE_MS: '3000' });
      const events = [];
      for (let i = 0; i < 5; i++) {
        events.push(
          await withTransaction(t.ctx.pool, (tx) =>
            emitEvent(tx, { organizationId: tenant.organizationId, environment: 'test' }, 'document.uploaded', {
              n: i,
            }),
          ),
        );
      }
      await waitFor('the first worker to send every event', () => r.requests.length === 5);

      // Crash: no shutdown handler runs, the requests are cut off mid-flight.
      first.proc.child.kill('SIGKILL');
      await first.proc.exited;
      expect((await deliveryStates(tenant)).map((d) => [d.status, d.attempt_count])).toEqual(
        events.map(() => ['pending', 0]),
      );

      r.answer = () => ({ status: 200 });
      await startWorkerProcess({ WEBHOOK_LEASE_MS: '3000' });
      // The lease is 3 s: everything is resent within seconds, not after a timeout or a sweep.
      await waitFor(
        'every delivery to succeed',
        async () => (await deliveryStates(tenant)).every((d) => d.status === 'succeeded'),
        15_000,
      );
      expect((await deliveryStates(tenant)).map((d) => d.attempt_count)).toEqual(events.map(() => 1));
      expect(r.requests.length).toBe(10);
      const received = r.requests.slice(5).map((q) => verifyWithStripe(q, ep.secret) as { id: string });
      expect(received.map((e) => e.id).sort()).toEqual(events.map((e) => e.id).sort());
    } finally {
      await r.close();
    }
  });

  it('shares the deliveries between two worker processes, never attempting one delivery twice at once', async () => {
    const r = await startTrackingReceiver();
    try {
      // Answers take a little while, so both processes have many attempts open at the same time.
      r.answer = () => ({ status: 200, delayMs: 5 + Math.floor(Math.random() * 20) });
      const tenants = [await t.newTenant(), await t.newTenant()];
      for (const tenant of tenants) {
        for (let i = 0; i < 2; i++)
          await tenant.api('POST', '/webhook-endpoints', {
            url: `${r.url}/${i}`,
            eventTypes: ['filing.status_changed'],
          });
      }
      const [a, b] = [await startWorkerProcess(), await startWorkerProcess()];
      const batch: NewEvent[] = Array.from({ length: 25 }, (_, i) => ({
        type: 'filing.status_changed',
        data: { n: i },
      }));
      for (let round = 0; round < 6; round++) {
        for (const tenant of tenants) {
          await withTransaction(t.ctx.pool, (tx) =>
            emitEvents(tx, { organizationId: tenant.organizationId, environment: 'test' }, batch),
          );
        }
      }
      // 6 rounds × 2 tenants × 25 events × 2 endpoints.
      const total = 600;
      await waitFor(
        'every delivery to succeed',
        async () => {
          const states = [...(await deliveryStates(tenants[0]!)), ...(await deliveryStates(tenants[1]!))];
          return states.length === total && states.every((d) => d.status === 'succeeded');
        },
        60_000,
      );
      expect(r.maxConcurrentPerDelivery()).toBe(1);
      const ids = r.requests.map((q) => String(q.headers['service-delivery-id']));
      expect(new Set(ids).size).toBe(total);
      expect(ids.length).toBe(total);
      const [fromA, fromB] = [await successfulAttempts(a.metricsPort), await successfulAttempts(b.metricsPort)];
      expect(fromA + fromB).toBe(total);
      expect(fromA).toBeGreaterThan(0);
      expect(fromB).toBeGreaterThan(0);
    } finally {
      await r.close();
    }
  });
});

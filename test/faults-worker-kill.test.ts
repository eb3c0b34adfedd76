import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTransaction } from '../src/lib/db.js';
import { emitEvents } from '../src/modules/events/events.service.js';
import { exitOf, type ServiceProcess } from './service-process.js';
import { fleetEnv, pollUntil, startFleetReceiver, startWorkerProcess, type FleetReceiver } from './fleet.js';
import { createTestApp, type TestApp, type TestTenant } from './harness.js';

// A worker process killed outright (SIGKILL: no shutdown handler, requests cut mid-flight) while it works through
// 10,000 deliveries: a worker started afterwards finishes the job, every delivery arrives, and the only
// duplicates are the few the killed worker had sent but not yet recorded.
const DELIVERIES = 10_000;
const CONCURRENCY = 10;
/** Webhook attempts one worker process has in flight at most (WEBHOOK_CONCURRENCY, its default). */
const WEBHOOK_CONCURRENCY = 100;
/**
 * Most repeats allowed: the deliveries the killed worker had sent and not yet recorded (in flight, or finished and
 * waiting for their outcome to be written). Its dispatcher holds at most twice WEBHOOK_CONCURRENCY claimed rows,
 * queued ones included (those were never sent, so they are not repeats), which bounds them (OPS-1, WH-17).
 */
const MAX_DUPLICATES = 2 * WEBHOOK_CONCURRENCY;

let t: TestApp;
let tenant: TestTenant;
let receiver: FleetReceiver;
const started: ServiceProcess[] = [];
beforeAll(async () => {
  t = await createTestApp();
  receiver = await startFleetReceiver();
  tenant = await t.newTenant('Kill Test Platform');
  const endpoint = (
    await tenant.api('POST', '/webhook-endpoints', {
      url: `${receiver.url}/hooks/kill`,
      eventTypes: ['document.uploaded'],
    })
  ).json();
  receiver.secrets.set('/hooks/kill', endpoint.secret);
}, 120_000);
afterAll(async () => {
  for (const s of started) s.kill();
  await receiver?.close();
  await t?.close();
});

async function deliveryCounts(): Promise<{ total: number; succeeded: number; failed: number }> {
  const { rows } = await t.ctx.pool.query(
    `SELECT count(*)::int AS total, count(*) FILTER (WHERE status = 'succeeded')::int AS succeeded, count(*) FILTER (WHERE status = 'failed')::int AS failed
       FROM webhook_deliveries WHERE organization_id = $1`,
    [tenant.organizationId],
  );
  return rows[0];
}

describe('a worker killed with SIGKILL mid-way through 10,000 deliveries', () => {
  it("loses none: a new worker delivers the rest, and duplicates stay within the killed worker's share in flight", async () => {
    // The events are written the way the service writes them (events and their deliveries in one transaction).
    const scope = { organizationId: tenant.organizationId, environment: 'test' as const };
    for (let batch = 0; batch < DELIVERIES / 1000; batch++) {
      const events = Array.from({ length: 1000 }, (_, i) => ({
        type: 'document.uploaded' as const,
        data: { documentType: 'company', n: batch * 1000 + i },
      }));
      await withTransaction(t.ctx.pool, (tx) => emitEvents(tx, scope, events));
    }
    const { rows: events } = await t.ctx.pool.query<{ id: string }>(
      'SELECT id FROM events WHERE organization_id = $1',
      [tenant.organizationId],
    );
    expect(events).toHaveLength(DELIVERIES);
    expect((await deliveryCounts()).total).toBe(DELIVERIES);

    const env = fleetEnv(t.ctx.config.databaseUrl!, {
      WORKER_CONCURRENCY: String(CONCURRENCY),
      WORKER_DATABASE_POOL_SIZE: String(CONCURRENCY + 2),
      WEBHOOK_CONCURRENCY: String(WEBHOOK_CONCURRENCY),
      WEBHOOK_RETRY_SCHEDULE: '1,1,1,1,1',
    });
    const first = await startWorkerProcess(env, started);
    await pollUntil(
      'the first worker to deliver a quarter of the events',
      () => receiver.received >= DELIVERIES / 4,
      600_000,
      () => `${receiver.received} received`,
      20,
    );
    first.child.kill('SIGKILL');
    expect(await exitOf(first)).toEqual({ code: null, signal: 'SIGKILL' });
    const atKill = await deliveryCounts();
    expect(atKill.succeeded).toBeLessThan(DELIVERIES);

    const second = await startWorkerProcess(env, started);
    let counts = atKill;
    await pollUntil(
      'every delivery to succeed after the kill',
      async () => {
        counts = await deliveryCounts();
        if (counts.failed) throw new Error(`${counts.failed} deliveries failed for good`);
        return counts.succeeded === DELIVERIES && receiver.perDelivery.size === DELIVERIES;
      },
      900_000,
      () => `${counts.succeeded}/${DELIVERIES} succeeded, ${receiver.perDelivery.size} distinct events received`,
    );

    const missing = events.filter((e) => !receiver.perDelivery.has(`/hooks/kill ${e.id}`));
    expect(missing).toEqual([]);
    expect(receiver.badSignatures).toEqual([]);
    expect(receiver.maxInFlightPerDelivery).toBe(1);
    const duplicates = receiver.received - DELIVERIES;
    const repeated = [...receiver.perDelivery.values()].filter((n) => n > 1).length;
    process.stdout.write(
      `worker kill: ${atKill.succeeded} recorded before SIGKILL, ${duplicates} duplicate requests (${repeated} events received more than once), bound ${MAX_DUPLICATES}\n`,
    );
    expect(duplicates).toBeLessThanOrEqual(MAX_DUPLICATES);
    expect(second.logs().filter((l) => l.level >= 50)).toEqual([]);
  }, 1_800_000);
});

import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  call,
  createTenant,
  expectCall,
  fleetEnv,
  formationBody,
  inParallel,
  pollUntil,
  startApi,
  startFleetReceiver,
  startWorkerProcess,
  type ApiProcess,
  type FleetReceiver,
  type FleetTenant,
} from './fleet.js';
import { createTestApp, OPERATOR_TOKEN, TEST_DATA_ENCRYPTION_KEY, type TestApp } from './harness.js';
import { startTestS3, type TestS3 } from './s3-server.js';
import type { ServiceProcess } from './service-process.js';

// Scale-out: two API processes and two worker processes on one PostgreSQL database and one S3-compatible bucket, as a
// deployment runs them.
// Orders and their transitions go through both APIs at once; the receiver must get every event, never one
// delivery from two senders at the same moment, and every balance must equal the sum of its ledger entries.
const ORDERS = 1000;
const TENANTS = 4;
const CLIENT_CONCURRENCY = 8;

let t: TestApp;
let s3: TestS3;
let receiver: FleetReceiver;
const started: ServiceProcess[] = [];
let apis: ApiProcess[] = [];
let workers: ServiceProcess[] = [];
beforeAll(async () => {
  t = await createTestApp();
  s3 = await startTestS3();
  receiver = await startFleetReceiver();
  // Retries a second apart, so the deliveries the receiver refuses once are tried again within the test.
  const env = fleetEnv(t.ctx.config.databaseUrl!, {
    WEBHOOK_RETRY_SCHEDULE: '1,1,1,1,1,1,1,1',
    DATABASE_POOL_SIZE: '5',
    WORKER_DATABASE_POOL_SIZE: '5',
    // Documents in the bucket (DOC-7): what one API stores, the other serves.
    ...s3.env('fleet'),
  });
  [apis, workers] = await Promise.all([
    Promise.all([startApi(env, started), startApi(env, started)]),
    Promise.all([startWorkerProcess(env, started), startWorkerProcess(env, started)]),
  ]);
}, 420_000);
afterAll(async () => {
  for (const s of started) s.kill();
  await receiver?.close();
  await s3?.close();
  await t?.close();
});

/** A stable pseudo-random choice per delivery: about one in eight is refused with 500 on its first arrival. */
const refusedOnce = (delivery: string) => createHash('sha256').update(delivery).digest()[0]! < 32;

describe('scale-out: two API processes and two workers on one database', () => {
  it('takes 1,000 orders and their transitions through both APIs; every event arrives, one attempt of a delivery at a time; every ledger adds up', async () => {
    receiver.respond = (_req, delivery, arrival) => ({
      status: arrival === 1 && refusedOnce(delivery) ? 500 : 200,
      // Long enough that a second sender of the same delivery would be caught while the first is in flight.
      delayMs: 5 + Math.floor(Math.random() * 40),
    });
    const tenants: FleetTenant[] = [];
    for (let i = 0; i < TENANTS; i++)
      tenants.push(await createTenant(apis[i % 2]!.baseUrl, receiver, `Fleet Tenant ${i}`, 1_000_000));

    // Each order is placed through one API, moved to pending through the other, and filed through the first.
    const api = (i: number) => apis[i % 2]!.baseUrl;
    const orderIds: string[] = [];
    const placing = Date.now();
    await inParallel(
      Array.from({ length: ORDERS }, (_, i) => i),
      CLIENT_CONCURRENCY,
      async (i) => {
        const tenant = tenants[i % TENANTS]!;
        const key = { 'x-api-key': tenant.testKey };
        const placed = await expectCall(201, api(i), 'POST', '/test/v1/orders', formationBody(tenant.userId, i), key);
        const orderId = placed.items[0].orderId as string;
        orderIds.push(orderId);
        await expectCall(
          200,
          api(i + 1),
          'POST',
          `/test/v1/test_helpers/orders/${orderId}/advance`,
          { filingStatus: 'pending' },
          key,
        );
        await expectCall(
          200,
          api(i),
          'POST',
          `/test/v1/test_helpers/orders/${orderId}/advance`,
          { filingStatus: 'filed', filingDate: '2025-03-14' },
          key,
        );
      },
    );
    expect(new Set(orderIds).size).toBe(ORDERS);
    const placedMs = Date.now() - placing;

    const orgIds = tenants.map((x) => x.organizationId);
    const pathOf = new Map(tenants.map((x) => [x.organizationId, x.endpointPath]));
    const { rows: events } = await t.ctx.pool.query<{ id: string; organization_id: string }>(
      'SELECT id, organization_id FROM events WHERE organization_id = ANY($1)',
      [orgIds],
    );
    // submitted, pending, filed: one event each, each delivered to its tenant's one endpoint.
    expect(events).toHaveLength(ORDERS * 3);
    const expected = events.map((e) => `${pathOf.get(e.organization_id)} ${e.id}`);

    const settled = async () => {
      const { rows } = await t.ctx.pool.query<{ total: number; succeeded: number; failed: number }>(
        `SELECT count(*)::int AS total, count(*) FILTER (WHERE status = 'succeeded')::int AS succeeded, count(*) FILTER (WHERE status = 'failed')::int AS failed
           FROM webhook_deliveries WHERE organization_id = ANY($1)`,
        [orgIds],
      );
      return rows[0]!;
    };
    let last = await settled();
    await pollUntil(
      'every delivery to succeed and every event to reach the receiver',
      async () => {
        last = await settled();
        if (last.failed) throw new Error(`${last.failed} deliveries failed for good`);
        return last.succeeded === expected.length && expected.every((d) => receiver.perDelivery.has(d));
      },
      300_000,
      () => `${last.succeeded}/${expected.length} deliveries succeeded, ${receiver.received} requests received`,
    );

    const missing = expected.filter((d) => !receiver.perDelivery.has(d));
    expect(missing).toEqual([]);
    expect(receiver.badSignatures).toEqual([]);
    expect([...receiver.overlapping]).toEqual([]);
    expect(receiver.maxInFlightPerDelivery).toBe(1);
    const refused = expected.filter(refusedOnce).length;
    expect(refused).toBeGreaterThan(0);
    // Every refused delivery came back at least once more, from whichever worker took its retry.
    expect(receiver.received).toBeGreaterThanOrEqual(expected.length + refused);
    process.stdout.write(
      `scale-out: ${ORDERS} orders and ${ORDERS * 2} transitions in ${placedMs} ms; ${expected.length} deliveries settled after ${Date.now() - placing} ms, ${receiver.received} requests (${refused} refused once on purpose)\n`,
    );

    // The attempts the database recorded never overlap in time for one delivery: each began after the previous ended.
    const { rows: overlaps } = await t.ctx.pool.query(
      `SELECT a.delivery_id, a.attempt_number, a.created_at, a.duration_ms
         FROM (SELECT delivery_id, attempt_number, created_at, duration_ms,
                      lag(created_at) OVER (PARTITION BY delivery_id ORDER BY created_at, attempt_number) AS previous_end
                 FROM webhook_attempts WHERE organization_id = ANY($1)) a
        WHERE a.previous_end IS NOT NULL AND a.created_at - make_interval(secs => a.duration_ms / 1000.0) < a.previous_end`,
      [orgIds],
    );
    expect(overlaps).toEqual([]);
    const { rows: attempts } = await t.ctx.pool.query<{ n: number; deliveries: number }>(
      'SELECT count(*)::int AS n, count(DISTINCT delivery_id)::int AS deliveries FROM webhook_attempts WHERE organization_id = ANY($1)',
      [orgIds],
    );
    expect(attempts[0]).toMatchObject({ deliveries: expected.length });
    expect(attempts[0]!.n).toBeGreaterThanOrEqual(expected.length + refused);

    // Orders: all there, all filed, each tenant charged for its own.
    const { rows: orders } = await t.ctx.pool.query<{ organization_id: string; n: number }>(
      `SELECT organization_id, count(*)::int AS n FROM orders WHERE organization_id = ANY($1) AND filing_status = 'filed' GROUP BY organization_id ORDER BY organization_id`,
      [orgIds],
    );
    expect(orders.map((o) => o.n)).toEqual(Array(TENANTS).fill(ORDERS / TENANTS));

    // Every balance equals the sum of its ledger entries: the operator's own check, then the same sum by hand.
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/',
      DATABASE_URL: t.ctx.config.databaseUrl!,
      OPERATOR_TOKEN,
      FILE_URL_SECRET: 'test-file-url-secret-0123456789',
      DATA_ENCRYPTION_KEY: TEST_DATA_ENCRYPTION_KEY,
      DATA_DIR: t.ctx.config.dataDir,
      // The login role's password the suite's server knows (vitest.config.ts; SEC-3).
      DATABASE_APP_PASSWORD: process.env.DATABASE_APP_PASSWORD ?? '',
      LOG_LEVEL: 'silent',
    };
    const verify = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', path.resolve('src/cli.ts'), 'ledger', 'verify', '--json'],
      { env },
    );
    expect(JSON.parse(verify.stdout)).toEqual({ ok: true, differences: [] });
    const { rows: sums } = await t.ctx.pool.query(
      `SELECT b.organization_id, b.balance_cents, (SELECT coalesce(sum(l.amount_cents), 0) FROM ledger_entries l
                                                     WHERE l.organization_id = b.organization_id AND l.environment = b.environment)::bigint AS ledger_cents
         FROM balances b WHERE b.organization_id = ANY($1) AND b.environment = 'test' ORDER BY b.organization_id`,
      [orgIds],
    );
    expect(sums).toHaveLength(TENANTS);
    for (const s of sums) expect(s.balance_cents, s.organization_id).toBe(s.ledger_cents);
    // Each balance moved: credited once, charged for every order.
    for (const s of sums) expect(s.balance_cents).toBeLessThan(1_000_000 * 100);

    // The APIs answer through either process for any tenant, and nothing logged an error along the way.
    for (const a of apis) expect((await call(a.baseUrl, 'GET', '/readyz')).status).toBe(200);
    for (const s of [...apis.map((a) => a.service), ...workers])
      expect(s.logs().filter((l) => l.level >= 50)).toEqual([]);
  }, 600_000);

  it('stores documents through one API process and serves them through the other, from the bucket', async () => {
    const tenant = await createTenant(apis[0]!.baseUrl, receiver, 'Fleet Documents', 1000, ['filing.status_changed']);
    const key = { 'x-api-key': tenant.testKey };
    const placed = await expectCall(
      201,
      apis[0]!.baseUrl,
      'POST',
      '/test/v1/orders',
      formationBody(tenant.userId, 0),
      key,
    );
    const orderId = placed.items[0].orderId as string;

    // A generated PDF (test helper) and an operator's multipart upload, both through the first API.
    const sample = await expectCall(
      201,
      apis[0]!.baseUrl,
      'POST',
      `/test/v1/test_helpers/orders/${orderId}/documents`,
      { documentType: 'articles_of_organization' },
      key,
    );
    const bytes = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(300_000, 0x20), Buffer.from('\n%%EOF\n')]);
    const form = new FormData();
    form.append('file', new Blob([bytes], { type: 'application/pdf' }), 'certificate.pdf');
    form.append('documentType', 'certificate_of_good_standing');
    const res = await fetch(`${apis[0]!.baseUrl}/admin/v1/orders/${orderId}/documents`, {
      method: 'POST',
      body: form,
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}` },
    });
    expect(res.status, await res.clone().text()).toBe(201);
    const uploaded = (await res.json()) as { documentId: string };
    expect(await s3.keys()).toEqual(
      expect.arrayContaining([`fleet/test/${sample.documentId}`, `fleet/test/${uploaded.documentId}`]),
    );

    // Read through the second API: the document, then its file by the signed link.
    for (const [documentId, expected] of [
      [sample.documentId as string, null],
      [uploaded.documentId, bytes],
    ] as const) {
      const doc = await expectCall(200, apis[1]!.baseUrl, 'GET', `/test/v1/documents/${documentId}`, undefined, key);
      const link = new URL(doc.fileUrl);
      const file = await fetch(`${apis[1]!.baseUrl}${link.pathname}${link.search}`);
      expect(file.status).toBe(200);
      expect(file.headers.get('content-type')).toBe('application/pdf');
      const body = Buffer.from(await file.arrayBuffer());
      if (expected) expect(body.equals(expected)).toBe(true);
      else expect(body.subarray(0, 5).toString()).toBe('%PDF-');
    }
  }, 120_000);
});

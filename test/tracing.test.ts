import { spawnSync } from 'node:child_process';
import { trace } from '@opentelemetry/api';
import { tracing } from '@opentelemetry/sdk-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTracing } from '../src/lib/tracing-sdk.js';

// OPS-30 to OPS-33: the SDK is started before the application's modules load (as src/instrumentation.ts does before
// the entry points), with an in-memory exporter instead of OTLP; the app and its worker are then imported.
const exporter = new tracing.InMemorySpanExporter();
const sdk = startTracing({ spanProcessors: [new tracing.SimpleSpanProcessor(exporter)] });

const { createTestApp } = await import('./harness.js');
const { startWorker } = await import('../src/worker.js');
const { withTransaction } = await import('../src/lib/db.js');
const { addJob } = await import('../src/lib/jobs.js');
const { harborLightFormation, ok } = await import('./e2e-fixtures.js');
const { startReceiver, waitFor } = await import('./webhook-receiver.js');

type TestApp = Awaited<ReturnType<typeof createTestApp>>;
let t: TestApp;
let worker: Awaited<ReturnType<typeof startWorker>>;
let r: Awaited<ReturnType<typeof startReceiver>>;
beforeAll(async () => {
  t = await createTestApp({ LOG_LEVEL: 'info' });
  worker = await startWorker(t.ctx);
  r = await startReceiver();
});
afterAll(async () => {
  await worker?.stop();
  await r?.close();
  await t?.close();
  await sdk.shutdown();
});

const spans = () => exporter.getFinishedSpans();
/** Waits until `find` finds something, and returns it. */
const defined = async <T>(what: string, find: () => T | undefined): Promise<T> => (await waitFor(what, find)) as T;

describe('tracing with an OTLP endpoint set', () => {
  it('follows one POST /orders through to its webhook delivery, and the logs carry its trace id', async () => {
    const tenant = await t.newTenant('Traced Platform');
    await ok(
      await tenant.api('POST', '/webhook-endpoints', { url: r.url, eventTypes: ['filing.status_changed'] }),
      201,
    );
    await ok(await tenant.api('POST', '/test_helpers/balance-credits', { amount: 2000 }), 201);
    const user = await ok(
      await tenant.api('POST', '/users', { fullName: 'Ada Lovelace', email: 'ada@example.com' }),
      201,
    );
    const placed = await ok(
      await tenant.api('POST', '/orders', harborLightFormation(user.id, ['Traced Harbor LLC'])),
      201,
    );
    const orderId = placed.items[0].orderId as string;

    // The request's span: Fastify's root span of POST /test/v1/orders.
    const request = await defined('the POST /orders span', () =>
      spans().find(
        (s) =>
          s.instrumentationScope.name === '@fastify/otel' &&
          s.attributes['http.request.method'] === 'POST' &&
          String(s.attributes['url.path'] ?? s.attributes['http.route'] ?? '').endsWith('/orders'),
      ),
    );
    const traceId = request.spanContext().traceId;

    // The event it wrote stores that trace's context (OPS-31).
    const { rows } = await t.ctx.pool.query<{ id: string; traceparent: string | null }>(
      `SELECT id, traceparent FROM events WHERE organization_id = $1 AND data->>'orderId' = $2`,
      [tenant.organizationId, orderId],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]!.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));

    // Its delivery is a span linked to the request's trace, and the POST to the receiver is that span's child.
    await waitFor('the webhook at the receiver', () => r.requests.length >= 1);
    const delivery = await defined('the delivery span', () =>
      spans().find((s) => s.name === 'webhook delivery' && s.attributes['webhook.event.id'] === rows[0]!.id),
    );
    expect(delivery.links.map((l) => l.context.traceId)).toEqual([traceId]);
    expect(delivery.attributes['webhook.attempt.outcome']).toBe('success');
    expect(delivery.attributes['http.response.status_code']).toBe(200);
    const outgoing = spans().find(
      (s) =>
        s.instrumentationScope.name === '@opentelemetry/instrumentation-undici' &&
        s.parentSpanContext?.spanId === delivery.spanContext().spanId,
    );
    expect(outgoing, 'the undici span of the webhook POST').toBeDefined();
    expect(r.requests[0]!.headers.traceparent).toContain(delivery.spanContext().traceId);

    // OPS-33: the request's log lines name its trace.
    const lines = t.logs.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.some((l) => l.trace_id === traceId && l.msg === 'request completed')).toBe(true);
  });

  it('runs a job in the trace of what queued it', async () => {
    const queued = await trace.getTracer('test').startActiveSpan('queue a ledger check', async (span) => {
      await withTransaction(t.ctx.pool, (tx) => addJob(tx, 'verify_ledger', {}));
      span.end();
      return span.spanContext();
    });
    const job = await defined('the job span', () => spans().find((s) => s.name === 'job verify_ledger'));
    expect(job.spanContext().traceId).toBe(queued.traceId);
    expect(job.parentSpanContext?.spanId).toBe(queued.spanId);
  });
});

describe('the preload (src/instrumentation.ts)', () => {
  it('patches pg, undici and http in a process started as the entry points are', () => {
    const run = spawnSync(
      process.execPath,
      ['--import', 'tsx', '--import', './src/instrumentation.ts', 'test/tracing-probe.ts'],
      {
        env: {
          PATH: process.env.PATH,
          DATABASE_URL: t.ctx.config.databaseUrl!,
          OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9',
          OTEL_TRACES_EXPORTER: 'console',
        },
        encoding: 'utf8',
        timeout: 60_000,
      },
    );
    expect(run.status, run.stderr).toBe(0);
    for (const scope of ['instrumentation-pg', 'instrumentation-undici', 'instrumentation-http'])
      expect(run.stdout).toContain(`@opentelemetry/${scope}`);
  });

  it('loads no SDK at all without an OTLP endpoint', () => {
    const probe =
      "const m = require('node:module'); process.stdout.write(String(Object.keys(require.cache).some((k) => k.includes('sdk-node'))))";
    const run = (env: Record<string, string>) =>
      spawnSync(process.execPath, ['--import', 'tsx', '--import', './src/instrumentation.ts', '-e', probe], {
        env: { PATH: process.env.PATH, ...env },
        encoding: 'utf8',
        timeout: 60_000,
      });
    const off = run({});
    expect(off.stderr).toBe('');
    expect(off.stdout).toBe('false');
    // The same probe sees the SDK when an endpoint is set (nothing is sent: the process ends at once).
    expect(run({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_TRACES_EXPORTER: 'none' }).stdout).toBe(
      'true',
    );
  });
});

import { spawn, type ChildProcess } from 'node:child_process';
import type { Runner } from 'graphile-worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTransaction } from '../src/lib/db.js';
import { DELIVER_WEBHOOK_TASK, emitEvent } from '../src/modules/events/events.service.js';
import { startWorker } from '../src/worker.js';
import { startWorkerLiveness, sweepDeadWorkers } from '../src/worker-liveness.js';
import { createTestApp, OPERATOR_TOKEN, type TestApp } from './harness.js';
import { startReceiver, verifyWithStripe, waitFor, type Receiver } from './webhook-receiver.js';

// Issue 4 item 10: "a crash of the worker mid-delivery loses nothing".
let t: TestApp;
let r: Receiver;
let child: ChildProcess | null = null;
let worker: Runner | null = null;
beforeAll(async () => {
  // A long timeout, so the first worker is still waiting on the receiver when it is killed.
  t = await createTestApp({ WEBHOOK_TIMEOUT_MS: '60000' });
  r = await startReceiver();
});
afterAll(async () => {
  child?.kill('SIGKILL');
  await worker?.stop();
  await r?.close();
  await t?.close();
});

interface JobRow {
  id: string;
  locked_at: Date | null;
  locked_by: string | null;
  attempts: number;
}

async function deliveryJobs(deliveryId: string): Promise<JobRow[]> {
  const { rows } = await t.ctx.pool.query<JobRow>(
    `SELECT j.id, j.locked_at, j.locked_by, j.attempts FROM graphile_worker._private_jobs j
       JOIN graphile_worker._private_tasks k ON k.id = j.task_id
      WHERE k.identifier = $1 AND j.payload->>'deliveryId' = $2`,
    [DELIVER_WEBHOOK_TASK, deliveryId],
  );
  return rows;
}

/** `npm run worker` (src/worker-main.ts) as its own OS process against the test database. */
function spawnWorkerProcess(): ChildProcess {
  const { config } = t.ctx;
  return spawn(process.execPath, ['--import', 'tsx', 'src/worker-main.ts'], {
    env: {
      ...process.env,
      DATABASE_URL: config.databaseUrl!,
      DATA_DIR: config.dataDir,
      OPERATOR_TOKEN,
      FILE_URL_SECRET: t.ctx.secrets.fileUrlSecret,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_TIMEOUT_MS: '60000',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

describe('worker crash mid-delivery', () => {
  it('queues nothing when the transaction that emitted the event rolls back', async () => {
    const tenant = await t.newTenant();
    await tenant.api('POST', '/webhook-endpoints', { url: r.url, eventTypes: ['document.uploaded'] });
    const failing = withTransaction(t.ctx.pool, async (tx) => {
      await emitEvent(tx, { organizationId: tenant.organizationId, environment: 'test' }, 'document.uploaded', {});
      throw new Error('the change being reported failed');
    });
    await expect(failing).rejects.toThrow('the change being reported failed');
    expect((await tenant.api('GET', '/webhook-deliveries')).json().data).toEqual([]);
  });

  it('hands back the jobs of a worker pool whose process is gone, never those of a live one', async () => {
    const liveness = await startWorkerLiveness(t.ctx.pool, (err) => { throw err; });
    try {
      await liveness.register('pool-alive-probe');
      // A task no worker runs, so only the sweep touches these jobs.
      const jobs = await Promise.all(['pool-alive-probe', 'pool-dead-probe', 'pool-fresh-probe'].map(async (owner) => {
        const { rows } = await t.ctx.pool.query(`SELECT id FROM graphile_worker.add_job('liveness_probe', '{}'::json)`);
        const age = owner === 'pool-fresh-probe' ? '0 seconds' : '1 minute';
        await t.ctx.pool.query(`UPDATE graphile_worker._private_jobs SET locked_by = $2, locked_at = now() - $3::interval WHERE id = $1`, [rows[0].id, owner, age]);
        return { id: rows[0].id as string, owner };
      }));
      expect(await sweepDeadWorkers(t.ctx.pool)).toEqual(['pool-dead-probe']);
      const { rows } = await t.ctx.pool.query(`SELECT id, locked_by FROM graphile_worker._private_jobs WHERE id = ANY($1::bigint[])`, [jobs.map((j) => j.id)]);
      const lockedBy = Object.fromEntries(rows.map((r) => [String(r.id), r.locked_by]));
      // The dead pool's job is free again; the live pool's and the just-locked one stay locked.
      expect(jobs.map((j) => lockedBy[j.id])).toEqual(['pool-alive-probe', null, 'pool-fresh-probe']);
      await t.ctx.pool.query(`DELETE FROM graphile_worker._private_jobs WHERE id = ANY($1::bigint[])`, [jobs.map((j) => j.id)]);
    } finally {
      await liveness.close();
    }
  });

  it('delivers the event after the worker process is killed while waiting on the receiver', async () => {
    const tenant = await t.newTenant();
    const ep = (await tenant.api('POST', '/webhook-endpoints', { url: r.url, eventTypes: ['document.uploaded'] })).json();
    // The first request never gets an answer; later ones get 200.
    r.respond = (_req, n) => (n === 1 ? 'hang' : { status: 200, body: 'ok' });
    const event = await withTransaction(t.ctx.pool, (tx) =>
      emitEvent(tx, { organizationId: tenant.organizationId, environment: 'test' }, 'document.uploaded', { documentType: 'company' }),
    );
    const [delivery] = (await tenant.api('GET', `/webhook-deliveries?eventId=${event.id}`)).json().data;

    child = spawnWorkerProcess();
    await waitFor('the first worker to send the event', () => r.requests.length === 1, 60_000);
    const [running] = await deliveryJobs(delivery.id);
    expect(running?.locked_by).toBeTruthy();

    // Crash: SIGKILL, no shutdown handler runs, the HTTP request is cut off mid-flight.
    const exited = new Promise((resolve) => child!.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    child = null;

    // What the crash left: the delivery still pending with no attempt recorded, its job still locked by the dead worker.
    const left = (await tenant.api('GET', `/webhook-deliveries/${delivery.id}`)).json();
    expect(left).toMatchObject({ status: 'pending', attemptCount: 0, attempts: [] });
    const [stale] = await deliveryJobs(delivery.id);
    expect(stale).toMatchObject({ id: running!.id, locked_by: running!.locked_by });

    // graphile-worker alone would free this lock only after 4 hours; a new worker sees that the dead process no
    // longer holds its liveness lock and hands the job back within seconds (src/worker-liveness.ts).
    worker = await startWorker(t.ctx);
    const done = await waitFor('the new worker to deliver', async () => {
      const d = (await tenant.api('GET', `/webhook-deliveries/${delivery.id}`)).json();
      return d.status === 'succeeded' ? d : null;
    });
    expect(done.attempts).toEqual([expect.objectContaining({ attemptNumber: 1, statusCode: 200, error: null })]);
    expect(r.requests.length).toBe(2);
    for (const req of r.requests) expect(verifyWithStripe(req, ep.secret)).toEqual(event);
    expect(await deliveryJobs(delivery.id)).toEqual([]);
  });
});

import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import type { JobHelpers } from 'graphile-worker';
import { withTransaction, type Db } from '../src/lib/db.js';
import { addJob, type TaskPayload } from '../src/lib/jobs.js';
import { refundCardPaymentTask } from '../src/modules/payments/refund-card-payment.task.js';
import { cronItems, taskDefinitions } from '../src/tasks.js';
import { buildTaskList } from '../src/worker.js';
import { createTestApp, type TestApp } from './harness.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t?.close());

describe('background tasks', () => {
  it('are each registered under the name their file declares, and the worker runs every one of them', () => {
    for (const [name, task] of Object.entries(taskDefinitions)) expect(task.name).toBe(name);
    const list = buildTaskList(t.ctx);
    expect(Object.keys(list).sort()).toEqual(Object.keys(taskDefinitions).sort());
    for (const handler of Object.values(list)) expect(handler).toBeTypeOf('function');
  });

  it('keep their cron schedules, each naming a registered task', () => {
    expect(cronItems.map(({ task, match, identifier, options }) => ({ task, match, identifier, options }))).toEqual([
      {
        task: 'renew_subscriptions',
        match: '17 4 * * *',
        identifier: 'subscriptions:renew-daily',
        options: { backfillPeriod: 24 * 3600 * 1000, maxAttempts: 5, queueName: 'subscription_renewals' },
      },
      {
        task: 'purge_expired',
        match: '41 3 * * *',
        identifier: 'maintenance:purge-expired-daily',
        options: { backfillPeriod: 0, maxAttempts: 3, queueName: 'maintenance' },
      },
      {
        task: 'verify_ledger',
        match: '23 5 * * *',
        identifier: 'ledger:verify-daily',
        options: { backfillPeriod: 0, maxAttempts: 1, queueName: 'maintenance' },
      },
      {
        task: 'compliance_reminders',
        match: '7 6 * * *',
        identifier: 'compliance:reminders-daily',
        options: { backfillPeriod: 0, maxAttempts: 3, queueName: 'compliance' },
      },
      {
        task: 'recheck_white_label_domains',
        match: '23 4 * * *',
        identifier: 'maintenance:recheck-white-label-domains-daily',
        options: { backfillPeriod: 0, maxAttempts: 3, queueName: 'maintenance' },
      },
    ]);
    for (const item of cronItems) expect(Object.keys(taskDefinitions)).toContain(item.task);
  });

  it('type their payloads from GraphileWorker.Tasks, for queueing and handling alike (checked by tsc)', () => {
    expectTypeOf<TaskPayload<'refund_card_payment'>>().toEqualTypeOf<{ refundId: string }>();
    expectTypeOf<TaskPayload<'send_document_email'>>().toEqualTypeOf<{ documentId: string; userId: string }>();
    const handler = refundCardPaymentTask.handler(t.ctx);
    expectTypeOf(handler).parameter(0).toEqualTypeOf<{ refundId: string }>();
    expectTypeOf<Parameters<typeof handler>[1]>().toEqualTypeOf<JobHelpers>();
    // Never called: only compiled. A misspelt task or a payload its handler does not take fails to compile.
    const _wrong = async (db: Db) => {
      // @ts-expect-error: no such task
      await addJob(db, 'refund_card_payments', { refundId: 'rfnd_1' });
      // @ts-expect-error: refundId is a string
      await addJob(db, 'refund_card_payment', { refundId: 1 });
      // @ts-expect-error: the document email needs its recipient
      await addJob(db, 'send_document_email', { documentId: 'doc_1' });
    };
    expect(_wrong).toBeTypeOf('function');
  });

  it("addJob queues in the caller's transaction: committed with its payload and options, or not at all", async () => {
    const jobs = (key: string) =>
      t.ctx.pool.query(
        `SELECT k.identifier, j.payload, j.max_attempts FROM graphile_worker._private_jobs j
         JOIN graphile_worker._private_tasks k ON k.id = j.task_id WHERE j.key = $1`,
        [key],
      );
    await withTransaction(t.ctx.pool, (tx) =>
      addJob(
        tx,
        'verify_ledger',
        {},
        { jobKey: 'tasks-test:committed', maxAttempts: 2, runAt: new Date(Date.now() + 3600_000) },
      ),
    );
    expect((await jobs('tasks-test:committed')).rows).toEqual([
      { identifier: 'verify_ledger', payload: {}, max_attempts: 2 },
    ]);
    await expect(
      withTransaction(t.ctx.pool, async (tx) => {
        await addJob(
          tx,
          'verify_ledger',
          {},
          { jobKey: 'tasks-test:rolled-back', runAt: new Date(Date.now() + 3600_000) },
        );
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect((await jobs('tasks-test:rolled-back')).rows).toEqual([]);
    await t.ctx.pool.query(`SELECT graphile_worker.remove_job('tasks-test:committed')`);
  });
});

import type { Task, TaskSpec } from 'graphile-worker';
import { currentTraceparent, inSpan, JOB_TRACEPARENT_KEY } from './trace-context.js';
import type { AppContext } from '../context.js';
import type { Db } from './db.js';

/*
 * Background tasks and their jobs, typed end to end. Each `*.task.ts` file adds its task to graphile-worker's
 * `GraphileWorker.Tasks` interface (name -> payload type) and defines its handler with {@link defineTask}; jobs are
 * queued with {@link addJob}. So a job queued under a misspelt name, or with a payload its handler does not take,
 * fails to compile, and no handler casts its payload.
 */

/** The name of a background task: a key some `*.task.ts` file added to `GraphileWorker.Tasks`. */
export type TaskName = keyof GraphileWorker.Tasks;

/** The payload a job of task `K` carries. */
export type TaskPayload<K extends TaskName> = GraphileWorker.Tasks[K];

/** What graphile-worker's cron puts in the payload of the jobs it schedules: the tick's time (ISO 8601, UTC). */
export interface CronPayload {
  _cron?: { ts: string; backfilled?: boolean };
}

/** One background task: its name and its handler, bound to the context by the worker when it starts. */
export interface TaskDefinition<K extends TaskName> {
  readonly name: K;
  readonly handler: (ctx: AppContext) => Task<K>;
}

/**
 * Defines a background task. The handler's payload is the type the task's file declared for `name` in
 * `GraphileWorker.Tasks`. Register the result in `src/tasks.ts`.
 */
export function defineTask<K extends TaskName>(name: K, handler: (ctx: AppContext) => Task<K>): TaskDefinition<K> {
  return { name, handler };
}

/**
 * Queues a job of task `task` in the caller's transaction (`graphile_worker.add_job`), so a rolled-back caller
 * leaves no job behind and a committed one always has its job. graphile-worker's own `addJob` and `quickAddJob`
 * take the same arguments but use a connection of their own, outside the caller's transaction. When a span is active
 * its trace context rides in the payload under {@link JOB_TRACEPARENT_KEY}, and the job continues that trace (OPS-32,
 * {@link tracedTask}).
 */
export async function addJob<K extends TaskName>(
  db: Db,
  task: K,
  payload: TaskPayload<K>,
  spec: TaskSpec = {},
): Promise<void> {
  await db.query(
    `SELECT graphile_worker.add_job(identifier => $1::text, payload => $2::json, queue_name => $3::text, run_at => $4::timestamptz,
       max_attempts => $5::int, job_key => $6::text, priority => $7::int, flags => $8::text[], job_key_mode => $9::text)`,
    [
      task,
      JSON.stringify(withTraceparent(payload)),
      spec.queueName ?? null,
      spec.runAt?.toISOString() ?? null,
      spec.maxAttempts ?? null,
      spec.jobKey ?? null,
      spec.priority ?? null,
      spec.flags ?? null,
      spec.jobKeyMode ?? null,
    ],
  );
}

/** The payload with the active span's trace context added (OPS-32); the payload itself when none is active. */
function withTraceparent(payload: unknown): unknown {
  const traceparent = currentTraceparent();
  if (!traceparent || typeof payload !== 'object' || payload === null || Array.isArray(payload)) return payload;
  return { ...payload, [JOB_TRACEPARENT_KEY]: traceparent };
}

/**
 * Wraps a task's handler so each run is a span named after the task that continues the trace of what queued the job
 * (the payload's {@link JOB_TRACEPARENT_KEY}, OPS-32), or starts one of its own (cron jobs, jobs queued without a
 * span). The handler gets the payload as queued (the key included: handlers read their own keys by name). A no-op
 * span when tracing is off.
 */
export function tracedTask(name: string, handler: Task<TaskName>): Task<TaskName> {
  return (payload, helpers) => {
    const traceparent = (payload as Record<string, unknown> | null)?.[JOB_TRACEPARENT_KEY];
    return inSpan(
      {
        name: `job ${name}`,
        parent: typeof traceparent === 'string' ? traceparent : null,
        attributes: { 'job.id': helpers.job.id, 'job.task': name, 'job.attempt': helpers.job.attempts },
      },
      async () => handler(payload, helpers),
    );
  };
}

import { EventEmitter } from 'node:events';
import { Logger, parseCronItems, run, type Runner, type Task, type TaskList, type WorkerEvents } from 'graphile-worker';
import type { AppContext } from './context.js';
import { createOutageReporter, waitingPool, type OutageReporter } from './lib/db-outage.js';
import { observeJobFailures } from './lib/metrics.js';
import { tracedTask, type TaskName } from './lib/jobs.js';
import { cronItems, taskDefinitions } from './tasks.js';
import { startWorkerLiveness } from './worker-liveness.js';
import { startWebhookDispatcher, type WebhookDispatcher } from './modules/webhooks/dispatcher.js';

/** The task list bound to a context: every task of tasks.ts with its handler. */
export function buildTaskList(ctx: AppContext): TaskList {
  // OPS-32: every job runs in a span that continues the trace of what queued it.
  return Object.fromEntries(
    Object.values(taskDefinitions).map((task) => [
      task.name,
      tracedTask(task.name, task.handler(ctx) as Task<TaskName>),
    ]),
  );
}

/** A process's background work: graphile-worker's runner, the webhook dispatcher and the liveness locks. */
export interface BackgroundWorker {
  /**
   * Takes no more jobs and stops: running jobs and webhook attempts get half of SHUTDOWN_TIMEOUT_MS each, a finished
   * job's completion is written before this resolves (OPS-4), then the liveness connection is released.
   */
  stop(): Promise<void>;
  /** Cuts the running jobs (they are failed back to the queue and retried by a live worker). */
  kill(reason?: string): Promise<void>;
  /** Settles when the runner has stopped; rejects when it stopped on a fatal error. */
  readonly promise: Promise<void>;
}

/**
 * Starts a graphile-worker runner on the context's pool (LISTEN/NOTIFY pickup, SKIP LOCKED).
 * `npm start` runs it beside the HTTP server; production may run it alone via `npm run worker`.
 * Jobs of a worker process that died mid-job are run again within seconds (worker-liveness.ts), not after
 * graphile-worker's 4-hour lock expiry. `stop()` also releases the liveness connection. It also schedules the
 * recurring jobs of tasks.ts `cronItems` (graphile-worker cron, UTC), and starts the webhook dispatcher
 * (src/modules/webhooks/dispatcher.ts), which sends webhooks outside graphile-worker; `stop()` stops both.
 *
 * A database outage (restart, failover) stops nothing (OPS-2): graphile-worker's connections wait for the database
 * instead of failing, so no finished job is left locked because its completion could not be written; a job cut
 * off by the outage fails and is retried; the liveness locks are re-taken; and the outage is logged once as a
 * warning naming the cause, then its end, rather than as a stream of errors.
 */
export async function startWorker(ctx: AppContext): Promise<BackgroundWorker> {
  const outage = createOutageReporter(ctx.log.child({ component: 'worker' }), 'background work');
  let stopping = false;
  const liveness = await startWorkerLiveness(ctx.pool, {
    onError: (err) => {
      if (!outage.report(err, 'liveness')) ctx.log.error({ err }, 'worker liveness sweep failed');
    },
    onRelocked: () => outage.recovered(),
  });
  const events: WorkerEvents = new EventEmitter();
  events.on('pool:create', ({ workerPool }) => void liveness.register(workerPool.id));
  observeJobFailures(events);
  let runner: Runner;
  let dispatcher: WebhookDispatcher | null = null;
  const graphilePool = waitingPool(ctx.pool, outage, () => stopping);
  try {
    dispatcher = await startWebhookDispatcher(ctx, { outage });
    runner = await run({
      pgPool: graphilePool,
      taskList: buildTaskList(ctx),
      // Recurring jobs such as the daily subscription renewal (tasks.ts cronItems).
      parsedCronItems: parseCronItems(cronItems),
      concurrency: ctx.config.workerConcurrency,
      noHandleSignals: true,
      // Jobs are asked to wrap up (abort signal) halfway through SHUTDOWN_TIMEOUT_MS, before being cut at its end.
      gracefulShutdownAbortTimeout: Math.floor(ctx.config.shutdownTimeoutMs / 2),
      pollInterval: 1000,
      logger: graphileLogger(ctx, outage),
      events,
    });
  } catch (err) {
    await dispatcher?.stop(0);
    await liveness.close();
    throw err;
  }
  void liveness.sweep();
  const started = runner;
  const startedDispatcher = dispatcher;
  started.promise.finally(() => Promise.all([liveness.close(), startedDispatcher.stop(0)])).catch(() => undefined);
  return {
    async stop() {
      stopping = true;
      try {
        // Attempts under way get half the shutdown time, like graphile-worker's jobs. OPS-4: a job that finished is
        // recorded as done before the pool closes (graphile-worker's stop() does not wait for that write).
        await Promise.all([
          started.stop().then(() => graphilePool.drained()),
          startedDispatcher.stop(Math.floor(ctx.config.shutdownTimeoutMs / 2)),
        ]);
      } finally {
        await liveness.close();
      }
    },
    kill: (reason) => started.kill(reason),
    promise: started.promise,
  };
}

function graphileLogger(ctx: AppContext, outage: OutageReporter) {
  // graphile-worker's Logger is created from a factory; route its output to pino. Its errors caused by an
  // unreachable database (failed polls, LISTEN reconnects, a job cut off mid-way) go to the outage reporter.
  return new Logger((scope: Record<string, unknown>) => (level: string, message: string, meta?: unknown) => {
    if (level === 'error' || level === 'warning') {
      const m = (meta ?? {}) as { error?: unknown; fatalError?: unknown };
      if (outage.report(m.error ?? m.fatalError ?? { message }, message)) return;
    }
    const log = ctx.log.child({ component: 'worker', ...scope });
    const fn =
      level === 'error' ? log.error : level === 'warning' ? log.warn : level === 'info' ? log.debug : log.trace;
    fn.call(log, meta ?? {}, message);
  });
}

import { EventEmitter } from 'node:events';
import { Logger, parseCronItems, run, type Runner, type TaskList, type WorkerEvents } from 'graphile-worker';
import type { AppContext } from './context.js';
import { observeJobFailures } from './lib/metrics.js';
import { cronItems, taskFactories } from './tasks.js';
import { startWorkerLiveness } from './worker-liveness.js';
import { startWebhookDispatcher, type WebhookDispatcher } from './modules/webhooks/dispatcher.js';

/** The task list bound to a context. */
export function buildTaskList(ctx: AppContext): TaskList {
  return Object.fromEntries(Object.entries(taskFactories).map(([name, make]) => [name, make(ctx)]));
}

/**
 * Starts a graphile-worker runner on the context's pool (LISTEN/NOTIFY pickup, SKIP LOCKED).
 * `npm start` runs it beside the HTTP server; production may run it alone via `npm run worker`.
 * Jobs of a worker process that died mid-job are run again within seconds (worker-liveness.ts), not after
 * graphile-worker's 4-hour lock expiry. `stop()` also releases the liveness connection. It also schedules the
 * recurring jobs of tasks.ts `cronItems` (graphile-worker cron, UTC), and starts the webhook dispatcher
 * (src/modules/webhooks/dispatcher.ts), which sends webhooks outside graphile-worker; `stop()` stops both.
 */
export async function startWorker(ctx: AppContext): Promise<Runner> {
  const liveness = await startWorkerLiveness(ctx.pool, (err) => ctx.log.error({ err }, 'worker liveness sweep failed'));
  const events: WorkerEvents = new EventEmitter();
  events.on('pool:create', ({ workerPool }) => void liveness.register(workerPool.id));
  observeJobFailures(events);
  let runner: Runner;
  let dispatcher: WebhookDispatcher | null = null;
  try {
    dispatcher = await startWebhookDispatcher(ctx);
    runner = await run({
      pgPool: ctx.pool,
      taskList: buildTaskList(ctx),
      // Recurring jobs such as the daily subscription renewal (tasks.ts cronItems).
      parsedCronItems: parseCronItems(cronItems),
      concurrency: ctx.config.workerConcurrency,
      noHandleSignals: true,
      // Jobs are asked to wrap up (abort signal) halfway through SHUTDOWN_TIMEOUT_MS, before being cut at its end.
      gracefulShutdownAbortTimeout: Math.floor(ctx.config.shutdownTimeoutMs / 2),
      pollInterval: 1000,
      logger: graphileLogger(ctx),
      events,
    });
  } catch (err) {
    await dispatcher?.stop(0);
    await liveness.close();
    throw err;
  }
  void liveness.sweep();
  const stop = runner.stop.bind(runner);
  runner.stop = async () => {
    try {
      // Attempts under way get half the shutdown time, like graphile-worker's jobs.
      await Promise.all([stop(), dispatcher!.stop(Math.floor(ctx.config.shutdownTimeoutMs / 2))]);
    } finally {
      await liveness.close();
    }
  };
  runner.promise.finally(() => Promise.all([liveness.close(), dispatcher!.stop(0)])).catch(() => undefined);
  return runner;
}

function graphileLogger(ctx: AppContext) {
  // graphile-worker's Logger is created from a factory; route its output to pino.
  return new Logger((scope: Record<string, unknown>) => (level: string, message: string, meta?: unknown) => {
    const log = ctx.log.child({ component: 'worker', ...scope });
    const fn = level === 'error' ? log.error : level === 'warning' ? log.warn : level === 'info' ? log.debug : log.trace;
    fn.call(log, meta ?? {}, message);
  });
}

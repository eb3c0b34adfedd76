import { Logger, run, type Runner, type TaskList } from 'graphile-worker';
import type { AppContext } from './context.js';
import { taskFactories } from './tasks.js';

/** The task list bound to a context. */
export function buildTaskList(ctx: AppContext): TaskList {
  return Object.fromEntries(Object.entries(taskFactories).map(([name, make]) => [name, make(ctx)]));
}

/**
 * Starts a graphile-worker runner on the context's pool (LISTEN/NOTIFY pickup, SKIP LOCKED).
 * `npm start` runs it beside the HTTP server; production may run it alone via `npm run worker`.
 */
export async function startWorker(ctx: AppContext): Promise<Runner> {
  return run({
    pgPool: ctx.pool,
    taskList: buildTaskList(ctx),
    concurrency: ctx.config.workerConcurrency,
    noHandleSignals: true,
    pollInterval: 1000,
    logger: graphileLogger(ctx),
  });
}

function graphileLogger(ctx: AppContext) {
  // graphile-worker's Logger is created from a factory; route its output to pino.
  return new Logger((scope: Record<string, unknown>) => (level: string, message: string, meta?: unknown) => {
    const log = ctx.log.child({ component: 'worker', ...scope });
    const fn = level === 'error' ? log.error : level === 'warning' ? log.warn : level === 'info' ? log.debug : log.trace;
    fn.call(log, meta ?? {}, message);
  });
}

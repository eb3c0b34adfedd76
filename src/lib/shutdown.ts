import type { Logger } from 'pino';

/** One part of the process to stop: `stop` lets its work finish; `force` cuts what is still running. */
interface ShutdownStep {
  name: string;
  stop(): Promise<void>;
  force?(): Promise<void> | void;
}

/** What {@link installShutdown} stops, and how long it may take. */
export interface ShutdownPlan {
  log: Logger;
  /** SHUTDOWN_TIMEOUT_MS: how long `drain` may take before its unfinished steps are forced. */
  timeoutMs: number;
  /** Stopped together: HTTP listeners (no new requests, in-flight ones answered), the worker (running jobs finish). */
  drain: ShutdownStep[];
  /** Run after every drain step has ended: closing the database, which the drained work was still using. */
  last(): Promise<void>;
}

/**
 * Holds SIGTERM and SIGINT from the first line of start-up until {@link installShutdown}: a signal that arrives while
 * the process is still starting (default action: die at once, mid-migration or mid-request) is remembered and acted
 * on as soon as everything to stop exists.
 */
export function deferSignals(): { received(): string | null; release(): void } {
  let received: string | null = null;
  const hold = (signal: string) => {
    received ??= signal;
  };
  process.on('SIGTERM', hold);
  process.on('SIGINT', hold);
  return {
    received: () => received,
    release() {
      process.off('SIGTERM', hold);
      process.off('SIGINT', hold);
    },
  };
}

/**
 * Stops the process in order on SIGTERM and SIGINT: the `drain` steps in parallel within `timeoutMs` (the
 * unfinished ones are then forced and a warning names them), then `last`, then exit. Exit code 0 when
 * everything finished in time, 1 when something had to be cut or failed. Further signals during shutdown are
 * ignored: `npm start` in a terminal delivers Ctrl-C both to npm (which passes it on) and to us.
 * @param deferred from {@link deferSignals}: a signal received during start-up starts the shutdown now.
 * @returns the shutdown function itself, for fatal paths: `shutdown('worker failed', true)` exits 1.
 */
export function installShutdown(
  plan: ShutdownPlan,
  deferred?: ReturnType<typeof deferSignals>,
): (reason: string, failed?: boolean) => Promise<void> {
  let started: Promise<void> | null = null;
  const shutdown = (reason: string, failed = false) => {
    started ??= run(plan, reason).then((code) => process.exit(failed ? 1 : code));
    return started;
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  deferred?.release();
  const early = deferred?.received();
  if (early) void shutdown(early);
  return shutdown;
}

async function run(plan: ShutdownPlan, reason: string): Promise<number> {
  const { log } = plan;
  log.info(
    { signal: reason, timeoutMs: plan.timeoutMs },
    'shutting down: finishing in-flight requests and running jobs',
  );
  const pending = new Set(plan.drain.map((s) => s.name));
  let failed = false;
  const drained = Promise.all(
    plan.drain.map(async (step) => {
      try {
        await step.stop();
      } catch (err) {
        failed = true;
        log.warn({ err, step: step.name }, 'a part failed to stop cleanly');
      } finally {
        pending.delete(step.name);
      }
    }),
  );
  let timer: NodeJS.Timeout | undefined;
  const timedOut = await Promise.race([
    drained.then(() => false),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), plan.timeoutMs))),
  ]);
  clearTimeout(timer);
  if (timedOut) {
    log.warn(
      { unfinished: [...pending], timeoutMs: plan.timeoutMs },
      'shutdown timeout reached: cutting unfinished requests and jobs (jobs are retried)',
    );
    await Promise.all(plan.drain.filter((s) => pending.has(s.name)).map(async (s) => s.force?.()));
    // Forced steps get a short while to let go of their connections before the database closes under them.
    await Promise.race([drained, new Promise((resolve) => setTimeout(resolve, 2000).unref())]);
  }
  try {
    await plan.last();
  } catch (err) {
    failed = true;
    log.warn({ err }, 'closing the database failed');
  }
  log.info({ forced: timedOut }, 'stopped');
  return timedOut || failed ? 1 : 0;
}

import { boot, type Booted } from './boot.js';
import type { Config } from './config-types.js';
import { loadConfig, quickStartEnv } from './config.js';
import { startMetricsServer, type MetricsServer } from './lib/metrics-server.js';
import { deferSignals, installShutdown } from './lib/shutdown.js';
import { failStartup } from './lib/startup-error.js';
import { flushTracing } from './lib/trace-context.js';
import { type BackgroundWorker, startWorker } from './worker.js';

/**
 * Runs only the background worker (`npm run worker`, `node dist/worker-main.js`), for deployments that scale it
 * apart from HTTP. Its metrics (job failures, pool use) are served on METRICS_PORT when set. SIGTERM/SIGINT let
 * running jobs finish within SHUTDOWN_TIMEOUT_MS, then close the database.
 */
async function main(): Promise<void> {
  const signals = deferSignals();
  let config: Config | null = null;
  let booted: Booted | null = null;
  let runner: BackgroundWorker | null = null;
  let metrics: MetricsServer | null = null;
  try {
    // The same settings as `npm start` on the embedded quick start, so a worker started beside it delivers alike
    // (WH-14).
    const quickStart = quickStartEnv(process.env);
    config = loadConfig(quickStart.env);
    booted = await boot(config);
    if (quickStart.turnedOn.length)
      booted.ctx.log.warn(
        { turnedOn: quickStart.turnedOn },
        'embedded quick start: WEBHOOK_ALLOW_PRIVATE_NETWORKS turned on so webhooks can reach localhost',
      );
    if (config.metricsPort !== null) {
      metrics = await startMetricsServer(config.metricsPort, config.metricsHost);
      booted.ctx.log.info({ port: metrics.port, host: metrics.host }, 'metrics listening');
    }
    runner = await startWorker(booted.workerCtx);
  } catch (err) {
    await Promise.allSettled([metrics?.close(), runner?.stop()]);
    await booted?.close().catch(() => undefined);
    failStartup('the worker', err, config ?? {});
  }
  const running = { runner: runner!, booted: booted! };
  const shutdown = installShutdown(
    {
      log: running.booted.ctx.log,
      timeoutMs: config!.shutdownTimeoutMs,
      drain: [
        ...(metrics ? [{ name: 'metrics', stop: () => metrics!.close() }] : []),
        { name: 'worker', stop: () => running.runner.stop(), force: () => running.runner.kill('shutdown timeout') },
      ],
      // OPS-30: the spans still buffered go out last (a no-op when tracing is off).
      last: () => running.booted.close().finally(flushTracing),
    },
    signals,
  );
  // The worker stops by itself only on a fatal error: exit non-zero so the supervisor restarts the process.
  running.runner.promise.catch((err) => {
    running.booted.ctx.log.error({ err }, 'the background worker stopped on an error');
    void shutdown('worker failed', true);
  });
  running.booted.ctx.log.info({ concurrency: config!.workerConcurrency }, 'worker started');
}

void main();

import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import { boot, type Booted } from './boot.js';
import type { Config } from './config-types.js';
import { loadConfig, quickStartEnv } from './config.js';
import { startMetricsServer, type MetricsServer } from './lib/metrics-server.js';
import { deferSignals, installShutdown } from './lib/shutdown.js';
import { failStartup } from './lib/startup-error.js';
import { flushTracing } from './lib/trace-context.js';
import { ensureDemoOrganization } from './demo-organization.js';
import { livePaymentsStatus } from './modules/payments/payments.service.js';
import { type BackgroundWorker, startWorker } from './worker.js';

/**
 * Starts the HTTP server and (unless START_WORKER=false) the background worker in one process (`npm start`,
 * `npm run start:prod`).
 * A start that fails prints one message naming the cause and the fix and exits 1; SIGTERM/SIGINT drain
 * requests and jobs, then close the database (lib/shutdown.ts).
 */
async function main(): Promise<void> {
  const signals = deferSignals();
  let config: Config | null = null;
  let booted: Booted | null = null;
  let app: FastifyInstance | null = null;
  let worker: BackgroundWorker | null = null;
  let metrics: MetricsServer | null = null;
  try {
    const quickStart = quickStartEnv(process.env);
    config = loadConfig(quickStart.env);
    booted = await boot(config);
    const { ctx } = booted;
    if (booted.embedded) ctx.log.info({ dataDir: booted.embedded.clusterDir }, 'using the embedded PostgreSQL');
    // WH-14: the quick start says what it turned on by itself, and how to turn it off.
    if (quickStart.turnedOn.length) {
      ctx.log.warn(
        { turnedOn: quickStart.turnedOn },
        'embedded quick start: WEBHOOK_ALLOW_PRIVATE_NETWORKS turned on so webhooks can reach localhost (set WEBHOOK_ALLOW_PRIVATE_NETWORKS=false to refuse private addresses)',
      );
    } else if (config.webhookAllowPrivateNetworks) {
      ctx.log.warn(
        'WEBHOOK_ALLOW_PRIVATE_NETWORKS=true: webhook URLs may use plain http and private or local addresses',
      );
    }
    const payments = livePaymentsStatus(config);
    ctx.log[payments.level](payments.message);
    const demo = await ensureDemoOrganization(ctx);
    app = await buildApp(ctx);
    await app.listen({ port: config.port, host: config.host });
    if (config.metricsPort !== null) {
      metrics = await startMetricsServer(config.metricsPort, config.metricsHost);
      booted.ctx.log.info({ port: metrics.port, host: metrics.host }, 'metrics listening');
    }
    if (config.startWorker) worker = await startWorker(booted.workerCtx);
    if (demo) process.stdout.write(`${demo.join('\n')}\n`);
  } catch (err) {
    await Promise.allSettled([app?.close(), metrics?.close(), worker?.stop()]);
    await booted?.close().catch(() => undefined);
    failStartup('the service', err, config ?? {});
  }
  const running = { app: app!, worker, booted: booted! };
  const shutdown = installShutdown(
    {
      log: running.booted.ctx.log,
      timeoutMs: config!.shutdownTimeoutMs,
      drain: [
        // Fastify stops accepting, answers 503 on kept-alive connections, and waits for in-flight requests.
        { name: 'http', stop: () => running.app.close(), force: () => running.app.server.closeAllConnections() },
        ...(metrics ? [{ name: 'metrics', stop: () => metrics!.close() }] : []),
        // Running jobs finish; forced, they are failed back to the queue and retried by a live worker.
        ...(worker
          ? [{ name: 'worker', stop: () => worker!.stop(), force: () => worker!.kill('shutdown timeout') }]
          : []),
      ],
      // OPS-30: the spans still buffered go out last (a no-op when tracing is off).
      last: () => running.booted.close().finally(flushTracing),
    },
    signals,
  );
  // The worker stops by itself only on a fatal error: exit non-zero so the supervisor restarts the process.
  running.worker?.promise.catch((err) => {
    running.booted.ctx.log.error({ err }, 'the background worker stopped on an error');
    void shutdown('worker failed', true);
  });
}

void main();

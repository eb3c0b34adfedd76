/**
 * The service as the bench loads it, in its own process: `boot()` on DATABASE_URL (migrations, seeds), the HTTP
 * app without request logs, and the background worker when BENCH_WITH_WORKER=true. Other settings come from
 * the environment as in production (DATABASE_POOL_SIZE, WEBHOOK_*, ...). Prints `READY <base url>`.
 */
import { buildApp } from '../src/app.js';
import { boot } from '../src/boot.js';
import { loadConfig } from '../src/config.js';
import { startWorker } from '../src/worker.js';
import { benchServiceSettings } from './lib/service-settings.js';

const booted = await boot(
  loadConfig({
    ...benchServiceSettings('.data/bench'),
    ...process.env,
  }),
);
const app = await buildApp(booted.ctx, { logger: false });
const url = await app.listen({ host: '127.0.0.1', port: 0 });
const worker = process.env.BENCH_WITH_WORKER === 'true' ? await startWorker(booted.workerCtx) : null;
process.stdout.write(`READY ${url}\n`);
process.on('SIGTERM', () => {
  void (async () => {
    await app.close();
    await worker?.stop();
    await booted.close();
    process.exit(0);
  })();
});

/**
 * The service as the bench loads it, in its own process: `boot()` on DATABASE_URL (migrations, seeds), the HTTP
 * app without request logs, and the background worker when BENCH_WITH_WORKER=true. Other settings come from
 * the environment as in production (DATABASE_POOL_SIZE, WEBHOOK_*, ...). Prints `READY <base url>`.
 */
import { buildApp } from '../src/app.js';
import { boot } from '../src/boot.js';
import { loadConfig } from '../src/config.js';
import { startWorker } from '../src/worker.js';

const booted = await boot(
  loadConfig({
    LOG_LEVEL: 'warn',
    OPERATOR_TOKEN: 'bench-operator-token-0123456789abcdef',
    FILE_URL_SECRET: 'bench-file-url-secret-0123',
    DATA_DIR: '.data/bench',
    DATA_ENCRYPTION_KEY: 'YmVuY2gtZGF0YS1lbmNyeXB0aW9uLWtleS0zMmJ5dGU=',
    // The limiter runs on every request (its cost is part of what is measured) but never refuses the bench's load.
    RATE_LIMIT_API_REQUESTS: '1000000000',
    RATE_LIMIT_ADMIN_REQUESTS: '1000000000',
    RATE_LIMIT_SIGN_IN_ATTEMPTS: '1000000000',
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

import { boot } from './boot.js';
import { loadConfig } from './config.js';
import { startWorker } from './worker.js';

/** Runs only the background worker (`npm run worker`), for deployments that scale it apart from HTTP. */
const booted = await boot(loadConfig());
const runner = await startWorker(booted.workerCtx);
const stop = async () => {
  await runner.stop();
  await booted.close();
  process.exit(0);
};
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
await runner.promise;

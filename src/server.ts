import { buildApp } from './app.js';
import { boot } from './boot.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { ensureDemoOrganization } from './modules/organizations/demo.js';
import { scrubSecrets } from './lib/logger.js';
import { startWorker } from './worker.js';

/** Starts the HTTP server and the background worker in one process (`npm start`). */
async function main(): Promise<void> {
  const config = readConfig();
  const booted = await boot(config);
  const { ctx } = booted;
  if (booted.embedded) ctx.log.info({ dataDir: config.dataDir }, 'using the embedded PostgreSQL');
  if (config.webhookAllowPrivateNetworks) ctx.log.warn('WEBHOOK_ALLOW_PRIVATE_NETWORKS=true: webhook URLs may use plain http and private or local addresses');
  const demo = await ensureDemoOrganization(ctx);
  const app = await buildApp(ctx);
  await app.listen({ port: config.port, host: config.host });
  const worker = await startWorker(booted.workerCtx);
  if (demo) process.stdout.write(`${demo.join('\n')}\n`);

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    ctx.log.info({ signal }, 'shutting down');
    await app.close();
    await worker.stop();
    await booted.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}

function readConfig(): Config {
  try {
    return loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
}

main().catch((err) => {
  process.stderr.write(`Failed to start: ${scrubSecrets(err instanceof Error ? err.stack ?? err.message : String(err))}\n`);
  process.exit(1);
});

import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import type { Environment } from '../src/context.js';
import { createPool } from '../src/lib/db.js';
import { createLogger } from '../src/lib/logger.js';

/**
 * The OpenAPI documents the service serves at `<base address>/openapi.json`, built in this process without a
 * database: the documents come from the route schemas only, so the app is built (not started) with a pool that is
 * never connected. Base addresses come from LIVE_BASE_URL and TEST_BASE_URL as at boot.
 * @returns the live and the test document (the test one also has the test helpers).
 */
export async function servedDocuments(
  env: Record<string, string | undefined> = process.env,
): Promise<Record<Environment, Record<string, unknown>>> {
  const config = loadConfig({
    ...env,
    DATABASE_URL: 'postgres://unused@127.0.0.1:1/unused',
    OPERATOR_TOKEN: 'x'.repeat(32),
    FILE_URL_SECRET: 'x'.repeat(32),
    DATA_ENCRYPTION_KEY: `${'A'.repeat(43)}=`,
  });
  const pool = createPool(config.databaseUrl!);
  const app = await buildApp(
    {
      config,
      pool,
      log: createLogger('silent'),
      secrets: {
        operatorToken: config.operatorToken!,
        fileUrlSecret: config.fileUrlSecret!,
        dataKeys: { current: config.dataEncryptionKey!, previous: [] },
      },
    },
    { logger: false },
  );
  try {
    await app.ready();
    // Asked at each base address's own host, the only one that serves its document (SEC-7).
    const get = async (baseUrl: string) => {
      const { host, pathname } = new URL(baseUrl);
      const res = await app.inject({ method: 'GET', url: `${pathname}/openapi.json`, headers: { host } });
      return res.json() as Record<string, unknown>;
    };
    return { live: await get(config.liveBaseUrl), test: await get(config.testBaseUrl) };
  } finally {
    await app.close();
    await pool.end();
  }
}

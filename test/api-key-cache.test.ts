import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, OPERATOR_TOKEN, type TestApp } from './harness.js';
import { spawnService, type ServiceProcess } from './service-process.js';

/*
 * AUTH-12: every process keeps the API keys it has seen in memory, and a revoked key is refused by every process of
 * the deployment within a second. Two real server processes on one database, plus the in-process test app.
 */

let t: TestApp;
const started: ServiceProcess[] = [];
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  for (const s of started) s.kill();
  await t?.close();
});

async function startServer(): Promise<number> {
  const service = spawnService('src/server.ts', {
    DATABASE_URL: t.ctx.config.databaseUrl!,
    OPERATOR_TOKEN,
    FILE_URL_SECRET: 'test-file-url-secret-0123456789',
    PORT: '0',
    LOG_LEVEL: 'info',
    START_WORKER: 'false',
    API_KEY_CACHE_SECONDS: '600',
  });
  started.push(service);
  // Start-up on a loaded machine can take a while.
  const line = await service.waitForLog(/^Server listening at http:\/\/127\.0\.0\.1:\d+$/, 180_000);
  return Number(/:(\d+)$/.exec(line.msg)![1]);
}

async function statusOf(port: number, key: string): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${port}/test/v1/organization`, { headers: { 'x-api-key': key } });
  await res.arrayBuffer();
  return res.status;
}

it('a revoked key is refused by every process within a second, although each had it cached', async () => {
  const [a, b] = await Promise.all([startServer(), startServer()]);
  const tenant = await t.newTenant('Cache Org');
  const other = await t.newTenant('Untouched Org');
  // Both processes have seen (and kept) both keys.
  for (const port of [a, b]) {
    expect(await statusOf(port, tenant.keys.test)).toBe(200);
    expect(await statusOf(port, other.keys.test)).toBe(200);
  }
  const revoked = await t.admin('DELETE', `/organizations/${tenant.organizationId}/api-keys/${tenant.keyIds.test}`);
  expect(revoked.statusCode, revoked.body).toBe(200);
  // The revocation has committed. The rule gives every process a second; the test waits that second (a lower bound,
  // which a loaded machine only makes longer) and then asks each process once, so the time the test itself takes to
  // send and read requests never counts against the service.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const [statusA, statusB] = await Promise.all([statusOf(a, tenant.keys.test), statusOf(b, tenant.keys.test)]);
  expect({ statusA, statusB }).toEqual({ statusA: 401, statusB: 401 });
  // The other tenant's key is unaffected, and the revoked key stays refused.
  for (const port of [a, b]) {
    expect(await statusOf(port, other.keys.test)).toBe(200);
    expect(await statusOf(port, tenant.keys.test)).toBe(401);
  }
  expect((await tenant.api('GET', '/organization')).statusCode).toBe(401);
}, 300_000);

import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, OPERATOR_TOKEN, type TestApp } from './harness.js';
import { exitOf, spawnService, type ServiceProcess } from './service-process.js';
import { refusedPort } from './webhook-receiver.js';

// Every start-up failure ends in one plain message naming the cause and the fix, never a stack trace.
let t: TestApp;
const started: ServiceProcess[] = [];
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  for (const s of started) s.kill();
  await t?.close();
});

/**
 * Starts `npm start`'s entry point with `env`, waits for it to give up, and returns its exit code and stderr. `loader`
 * 'tsx' starts it as `npm start` does; the compiled sources (the default) print the same and start in a fraction of
 * the CPU.
 */
async function failedStart(
  env: Record<string, string>,
  entry = 'src/server.ts',
  loader: 'compiled' | 'tsx' = 'compiled',
): Promise<{ code: number | null; stderr: string }> {
  const service = spawnService(
    entry,
    {
      OPERATOR_TOKEN,
      FILE_URL_SECRET: 'test-file-url-secret-0123456789',
      LOG_LEVEL: 'warn',
      ...env,
    },
    loader,
  );
  started.push(service);
  const { code } = await exitOf(service, 170_000);
  return { code, stderr: service.stderr() };
}

function expectPlainMessage(stderr: string, what: string, ...mentions: RegExp[]): void {
  expect(stderr).toMatch(new RegExp(`^Cannot start ${what}: `));
  expect(stderr).toMatch(/Fix: /);
  for (const m of mentions) expect(stderr).toMatch(m);
  expect(stderr).not.toMatch(/^\s+at /m); // no stack frames
}

// Five services start at once: on a loaded two-core machine a start takes far longer than alone.
describe.concurrent('start-up failures', { timeout: 180_000 }, () => {
  it('names every invalid variable (started through tsx, as `npm start` runs it)', async () => {
    const { code, stderr } = await failedStart({ PORT: 'eighty', SHUTDOWN_TIMEOUT_MS: 'soon' }, 'src/server.ts', 'tsx');
    expect(code).toBe(1);
    expectPlainMessage(stderr, 'the service', /PORT/, /SHUTDOWN_TIMEOUT_MS/);
  });

  it('says the database cannot be reached, and where, without its password', async () => {
    // A port nothing listens on for certain (a just-closed one may be taken again by the time the service starts).
    const port = await refusedPort();
    const { code, stderr } = await failedStart({ DATABASE_URL: `postgres://app:s3cret-pw@127.0.0.1:${port}/fcs` });
    expect(code).toBe(1);
    expectPlainMessage(
      stderr,
      'the service',
      new RegExp(`Cannot reach the database at 127\\.0\\.0\\.1:${port}/fcs`),
      /DATABASE_URL/,
    );
    expect(stderr).not.toContain('s3cret-pw');
  });

  it('says so when the HTTP port is taken by another program', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as net.AddressInfo;
    try {
      const { code, stderr } = await failedStart({ DATABASE_URL: t.ctx.config.databaseUrl!, PORT: String(port) });
      expect(code).toBe(1);
      expectPlainMessage(
        stderr,
        'the service',
        new RegExp(`Port 127\\.0\\.0\\.1:${port} is already in use`),
        /set PORT/,
      );
    } finally {
      blocker.close();
    }
  });

  it('refuses a database migrated by another version of the service', async () => {
    const other = await createTestApp();
    try {
      await other.ctx.pool.query(
        `INSERT INTO schema_migrations (version, name, md5, run_at) VALUES (999, 'from-another-branch', 'x', now())`,
      );
      const { code, stderr } = await failedStart({ DATABASE_URL: other.ctx.config.databaseUrl! }, 'src/worker-main.ts');
      expect(code).toBe(1);
      expectPlainMessage(stderr, 'the worker', /migration\(s\) 999/, /another version/);
    } finally {
      await other.close();
    }
  });

  it('says which data directory it cannot create', async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'fcs-startup-')), 'a-file');
    fs.writeFileSync(file, 'not a directory');
    const { code, stderr } = await failedStart({
      DATABASE_URL: t.ctx.config.databaseUrl!,
      DATA_DIR: path.join(file, 'data'),
    });
    expect(code).toBe(1);
    expectPlainMessage(stderr, 'the service', new RegExp(`Cannot create the directory ${file}`), /DATA_DIR/);
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
  });
});

import { createHash } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import chromium from '@sparticuz/chromium';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { prepareDatabase, seed } from '../src/boot.js';
import { createPool } from '../src/lib/db.js';
import { removeEmbeddedCluster, startEmbeddedDb, type EmbeddedDb } from '../src/lib/embedded-db.js';
import { LOGIN_ROLE } from '../src/lib/login-role.js';
import { SERVICE_ROLE } from '../src/lib/service-role.js';
import { explainStartupError } from '../src/lib/startup-error.js';
import { compileSources } from './compiled-src.js';

let embedded: EmbeddedDb | null = null;
let embeddedDir: string | null = null;
let compiledDir: string | null = null;

/**
 * Starts PostgreSQL for the suite (DATABASE_URL when set, else an embedded server in .data/test-pg) and
 * builds a migrated, seeded template database named after a hash of the migrations and seed data. Each
 * test file clones it (CREATE DATABASE … TEMPLATE), which is fast and isolates files from each other.
 */
export async function setup(project: TestProject): Promise<void> {
  try {
    await prepare(project);
  } catch (err) {
    // Vitest may end the run without showing why its global setup failed: say it here, once, plainly.
    process.stderr.write(
      `\nTest setup failed: ${explainStartupError(err, { databaseUrl: process.env.DATABASE_URL })}\n\n`,
    );
    await teardown().catch(() => undefined);
    throw err;
  }
}

async function prepare(project: TestProject): Promise<void> {
  // The sources compiled once for the processes tests start (test/compiled-src.ts), private to this run, and again
  // before each rerun in watch mode.
  compiledDir = path.join(os.tmpdir(), `fcs-test-src-${process.pid}`);
  removeStaleCompiledSources();
  await compileSources(process.cwd(), compiledDir);
  project.provide('compiledRoot', compiledDir);
  project.onTestsRerun(async () => {
    if (compiledDir) await compileSources(process.cwd(), compiledDir);
  });
  let serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) {
    // A private cluster per run: concurrent runs never stop each other's server.
    embeddedDir = path.join(os.tmpdir(), `fcs-test-pg-${process.pid}`);
    await removeStaleClusters();
    embedded = await startEmbeddedDb(embeddedDir, await freePort(), 'postgres_main', {
      onNotice: (message) => process.stderr.write(`${message}\n`),
    });
    serverUrl = embedded.url;
    await withoutDurability(withDatabase(serverUrl, 'postgres'));
  }
  const template = `fcs_tpl_${schemaHash()}`;
  const admin = withDatabase(serverUrl, 'postgres');
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  try {
    const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [template]);
    if (!exists.rowCount) {
      const building = `${template}_build_${process.pid}`;
      await client.query(`DROP DATABASE IF EXISTS ${building}`);
      await client.query(`CREATE DATABASE ${building}`);
      const url = withDatabase(serverUrl, building);
      // The service's login role with the password every test process is given (vitest.config.ts).
      await prepareDatabase(url, {
        name: LOGIN_ROLE,
        serviceRole: SERVICE_ROLE,
        password: process.env.DATABASE_APP_PASSWORD || 'test-app-role-password-0123456789',
      });
      const pool = createPool(url);
      await seed(pool);
      await pool.end();
      await client.query(`ALTER DATABASE ${building} RENAME TO ${template}`).catch(async (err) => {
        if ((err as { code?: string }).code !== '42P04') throw err; // another run built it meanwhile
        await client.query(`DROP DATABASE ${building}`);
      });
    }
    await dropStaleTestDatabases(client);
  } finally {
    await client.end();
  }
  project.provide('pgAdminUrl', admin);
  project.provide('pgTemplate', template);
  // Unpacked once here so parallel browser test files never race on the extraction. A browser that cannot be had
  // fails the browser tests, with this reason (test/browser.ts), and nothing else.
  try {
    project.provide('chromiumPath', process.env.CHROMIUM_PATH || (await unpackChromium()));
    project.provide('chromiumError', '');
  } catch (err) {
    project.provide('chromiumPath', '');
    project.provide('chromiumError', `unpacking @sparticuz/chromium failed: ${(err as Error).message}`);
  }
}

export async function teardown(): Promise<void> {
  if (compiledDir) fs.rmSync(compiledDir, { recursive: true, force: true });
  compiledDir = null;
  if (!embeddedDir) return;
  await embedded?.stop();
  await removeEmbeddedCluster(embeddedDir);
  embedded = null;
  embeddedDir = null;
}

// @sparticuz/chromium unpacks into os.tmpdir()/chromium and reuses whatever is there: a copy unpacked by another
// user (root, mode 0700) would not start for us. Each OS user gets a directory of its own.
async function unpackChromium(): Promise<string> {
  const own = path.join(os.tmpdir(), `fcs-chromium-${os.userInfo().uid}`);
  fs.mkdirSync(own, { recursive: true, mode: 0o700 });
  const saved = process.env.TMPDIR;
  process.env.TMPDIR = own; // os.tmpdir() reads it on every call
  try {
    return await chromium.executablePath();
  } finally {
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

// Clusters of runs that were killed before teardown (their server may still run: it has a session of its own).
async function removeStaleClusters(): Promise<void> {
  for (const name of fs.readdirSync(os.tmpdir())) {
    const m = /^fcs-test-pg-(\d+)$/.exec(name);
    if (m && !isAlive(Number(m[1]))) await removeEmbeddedCluster(path.join(os.tmpdir(), name)).catch(() => undefined);
  }
}

// Compiled sources of runs that were killed before teardown.
function removeStaleCompiledSources(): void {
  for (const name of fs.readdirSync(os.tmpdir())) {
    const m = /^fcs-test-src-(\d+)$/.exec(name);
    if (m && !isAlive(Number(m[1]))) fs.rmSync(path.join(os.tmpdir(), name), { recursive: true, force: true });
  }
}

/** The same server URL with another database name. */
export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

function schemaHash(): string {
  const h = createHash('sha256');
  for (const dir of ['migrations', 'data', 'src']) hashDir(h, path.resolve(dir));
  return h.digest('hex').slice(0, 12);
}

function hashDir(h: ReturnType<typeof createHash>, dir: string): void {
  if (!fs.existsSync(dir)) return;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) hashDir(h, p);
    // service-role, login-role: their grants, policies and roles are part of the template, as the migrations are.
    else if (/\.(sql|json)$/.test(entry.name) || /seed|service-role|login-role/.test(entry.name))
      h.update(entry.name).update(fs.readFileSync(p));
  }
}

// Test databases (fcs_t_<pid>_…) left by crashed runs are dropped once their process is gone.
async function dropStaleTestDatabases(client: pg.Client): Promise<void> {
  const { rows } = await client.query<{ datname: string }>(
    `SELECT datname FROM pg_database WHERE datname LIKE 'fcs_t\\_%'`,
  );
  for (const { datname } of rows) {
    const pid = Number(datname.split('_')[2]);
    if (pid && isAlive(pid)) continue;
    await client.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`).catch(() => undefined);
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

declare module 'vitest' {
  export interface ProvidedContext {
    pgAdminUrl: string;
    pgTemplate: string;
    /** Headless Chromium for the browser tests (test/browser.ts); empty when it could not be unpacked. */
    chromiumPath: string;
    /** Why there is no Chromium (empty when there is). */
    chromiumError: string;
    /** This checkout's sources compiled to JavaScript, `<compiledRoot>/src/cli.js` and so on (test/compiled-src.ts). */
    compiledRoot: string;
  }
}

/**
 * The suite's private cluster is thrown away at the end of the run, so nothing in it needs to survive a crash of
 * the server: without flushes to disk at each commit, the suite waits on the disk far less (no test crashes
 * PostgreSQL itself; the fault tests kill the service's processes).
 */
async function withoutDurability(adminUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    for (const setting of ['fsync', 'synchronous_commit', 'full_page_writes'])
      await client.query(`ALTER SYSTEM SET ${setting} = off`);
    await client.query('SELECT pg_reload_conf()');
  } finally {
    await client.end();
  }
}

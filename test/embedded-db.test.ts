import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { EmbeddedDbError, removeEmbeddedCluster, SHARED_DIR, startEmbeddedDb } from '../src/lib/embedded-db.js';

// The embedded PostgreSQL of `npm start` when DATABASE_URL is unset (the suite's own server may be external).
const made: string[] = [];
afterAll(async () => {
  for (const dir of made) {
    await removeEmbeddedCluster(dir).catch(() => undefined);
    fs.rmSync(path.dirname(dir), { recursive: true, force: true });
  }
});

function tempDir(mode = 0o755): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fcs-embedded-'));
  fs.chmodSync(dir, mode);
  made.push(path.join(dir, 'pg'));
  return dir;
}

async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

async function answers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

describe('embedded PostgreSQL', () => {
  it('is shared by a second process on the port it runs on, and stopped only by the process that started it', async () => {
    const dir = path.join(tempDir(), 'pg');
    const port = await freePort();
    const creating: string[] = [];
    const first = await startEmbeddedDb(dir, port, 'app', { onCreating: (d) => creating.push(d) });
    expect(first.owner).toBe(true);
    // OPS-26: the first start says it is creating the database (where), a later one does not.
    expect(creating).toEqual([first.clusterDir]);
    const second = await startEmbeddedDb(dir, port + 1, 'app', { onCreating: (d) => creating.push(d) }); // e.g. the CLI without EMBEDDED_PG_PORT
    expect(creating).toHaveLength(1);
    expect(second).toMatchObject({ owner: false, url: first.url });
    await second.stop();
    expect(await answers(first.url)).toBe(true);
    await first.stop();
    expect(await answers(first.url)).toBe(false);
  });

  it('names a taken port and the variable that moves it', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as net.AddressInfo;
    try {
      const start = startEmbeddedDb(path.join(tempDir(), 'pg'), port);
      await expect(start).rejects.toBeInstanceOf(EmbeddedDbError);
      await expect(start).rejects.toThrow(new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port}.*EMBEDDED_PG_PORT`));
    } finally {
      blocker.close();
    }
  });

  // Root runs the server as the postgres user, which cannot enter a 0700 directory (a checkout under /root).
  it.runIf(process.getuid?.() === 0)(
    'as root, keeps data the postgres user cannot reach under SHARED_DIR and links it',
    async () => {
      const dir = path.join(tempDir(0o700), 'pg');
      const notices: string[] = [];
      const db = await startEmbeddedDb(dir, await freePort(), 'app', { onNotice: (m) => notices.push(m) });
      try {
        expect(fs.lstatSync(dir).isSymbolicLink()).toBe(true);
        expect(db.clusterDir.startsWith(path.join(SHARED_DIR, 'clusters'))).toBe(true);
        expect(fs.realpathSync(dir)).toBe(db.clusterDir);
        expect(notices.join('\n')).toContain(db.clusterDir);
        expect(await answers(db.url)).toBe(true);
      } finally {
        await db.stop();
      }
      const again = await startEmbeddedDb(dir, await freePort(), 'app');
      expect(again.clusterDir).toBe(db.clusterDir); // the same data on the next start
      await again.stop();
    },
  );
});

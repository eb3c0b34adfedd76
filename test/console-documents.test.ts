import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { type Readable, Transform } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { documentStore } from '../src/modules/documents/document-store.js';
import { signedFileUrl } from '../src/modules/documents/file-urls.js';
import { consoleClient, newOperator, signIn, type ConsoleClient, type InjectResult } from './console-helpers.js';
import { createOrderRow, tenantOf } from './factories.js';
import { createTestApp, type TestApp } from './harness.js';
import { generatedFile, MULTIPART_TYPE, multipartStream } from './multipart-body.js';
import { startTestS3, type TestS3 } from './s3-server.js';

// DOC-8, DOC-10: the console's upload form streams its file into the document store, on the local disk and in an
// S3-compatible bucket (s3rver), never holding it whole; a refused or failed upload leaves no document and no file.

const MB = 1024 * 1024;

let s3: TestS3;
const apps: Record<'disk' | 'bucket', TestApp> = {} as never;
beforeAll(async () => {
  s3 = await startTestS3();
  apps.disk = await createTestApp();
  apps.bucket = await createTestApp(s3.env('console'));
});
afterAll(async () => {
  await Promise.all(Object.values(apps).map((a) => a?.close()));
  await s3?.close();
});

/** A signed-in operator of `app` and a fresh order, with the order page's CSRF token read. */
async function setUp(app: TestApp): Promise<{ c: ConsoleClient; orderId: string }> {
  const operator = await newOperator(app.ctx.pool);
  const c = consoleClient(app.app);
  await signIn(c, operator.email, operator.password);
  const { orderId } = await createOrderRow(app.ctx, tenantOf(await app.newTenant(), 'live'));
  await c.get(`/console/orders/${orderId}`);
  return { c, orderId };
}

const uploadTo = (c: ConsoleClient, orderId: string, body: Readable) =>
  c.postBody(`/console/orders/${orderId}/documents`, body, MULTIPART_TYPE);

const fieldsOf = (c: ConsoleClient): Array<[string, string]> => [
  ['_csrf', c.csrf()],
  ['documentType', 'articles_of_organization'],
];

const documentsOf = async (app: TestApp, orderId: string) =>
  (await app.ctx.pool.query<{ id: string }>('SELECT id FROM documents WHERE order_id = $1', [orderId])).rows;

/** Every file the store of `app` holds: the bucket's keys, or the files under STORAGE_DIR. */
async function storedFiles(app: TestApp): Promise<string[]> {
  if (app === apps.bucket) return s3.keys();
  const dir = app.ctx.config.storageDir;
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => fs.statSync(path.join(dir, f)).isFile())
    .sort();
}

const flashOf = (res: InjectResult) => {
  const cookie = ([] as string[])
    .concat(res.headers['set-cookie'] ?? [])
    .find((s) => s.startsWith('fcs_console_flash='));
  return cookie ? JSON.parse(Buffer.from(cookie.split(';')[0]!.split('=')[1]!, 'base64url').toString()) : null;
};

/**
 * Watches what the store of `app` is given to write: the bytes it has read of each file so far, and (with `failAfter`)
 * a store that fails once it has read that many bytes of a file. Restore with `vi.restoreAllMocks()`.
 */
function watchStore(app: TestApp, failAfter?: number) {
  const store = documentStore(app.ctx.config);
  const write = store.write.bind(store);
  let started = () => {};
  const seen = { calls: 0, bytes: 0, started: new Promise<void>((resolve) => (started = resolve)) };
  vi.spyOn(store, 'write').mockImplementation((key, content, type) => {
    seen.calls++;
    const counted = new Transform({
      transform(chunk: Buffer, _enc, done) {
        seen.bytes += chunk.length;
        if (seen.bytes > MB) started();
        if (failAfter !== undefined && seen.bytes > failAfter) done(new Error('disk full'));
        else done(null, chunk);
      },
    });
    content.once('error', (err) => counted.destroy(err));
    return write(key, content.pipe(counted), type);
  });
  return seen;
}

describe.each(['disk', 'bucket'] as const)('console upload to the %s store', (where) => {
  it('streams a 12 MB file into the store while the form is still arriving, and serves it back byte for byte', async () => {
    const app = apps[where];
    const { c, orderId } = await setUp(app);
    const file = generatedFile(12 * MB);
    const seen = watchStore(app);
    // The form stops halfway through its file until the store has read more than 1 MB of it: a handler that held the
    // whole file before storing it would have stored nothing by then. (After a generous wait it goes on regardless, so
    // such a handler fails the expectation below rather than hanging the suite.)
    let storedBeforeFormEnded = false;
    async function* halted() {
      let sent = 0;
      for (const chunk of file.chunks()) {
        if (sent === 6 * MB) {
          await Promise.race([seen.started, new Promise((r) => setTimeout(r, 20_000))]);
          storedBeforeFormEnded = seen.bytes > MB;
        }
        yield chunk;
        sent += chunk.length;
      }
    }
    try {
      const res = await uploadTo(
        c,
        orderId,
        multipartStream(fieldsOf(c), 'Articles.pdf', halted(), [['confirm', 'yes']]),
      );
      expect(res.statusCode, res.body).toBe(303);
      expect(flashOf(res)).toMatchObject({ kind: 'ok', text: expect.stringContaining('Uploaded Articles.pdf') });
    } finally {
      vi.restoreAllMocks();
    }
    expect(storedBeforeFormEnded).toBe(true);
    expect(seen.calls).toBe(1);

    const [doc] = await documentsOf(app, orderId);
    const link = new URL(signedFileUrl(app.ctx, doc!.id));
    const got = await app.app.inject({ method: 'GET', url: `${link.pathname}${link.search}` });
    expect(got.statusCode).toBe(200);
    expect(got.rawPayload.length).toBe(12 * MB);
    expect(createHash('sha256').update(got.rawPayload).digest('hex')).toBe(file.sha256);
    if (where === 'bucket') expect(await s3.keys()).toContain(`console/live/${doc!.id}`);
  }, 90_000);

  it('refuses a file over 25 MB on the order page naming the file, keeping no document and no file', async () => {
    const app = apps[where];
    const { c, orderId } = await setUp(app);
    const before = await storedFiles(app);
    const big = generatedFile(26 * MB);
    const res = await uploadTo(c, orderId, multipartStream(fieldsOf(c), 'big.pdf', big.chunks(), [['confirm', 'yes']]));
    expect(res.statusCode).toBe(303);
    expect(flashOf(res)).toEqual({ kind: 'error', text: expect.stringMatching(/^file: must be at most 25 MB/) });
    expect(await documentsOf(app, orderId)).toEqual([]);
    expect(await storedFiles(app)).toEqual(before);
  }, 90_000);

  it('keeps no document and no file when the store fails halfway through the file', async () => {
    const app = apps[where];
    const { c, orderId } = await setUp(app);
    const before = await storedFiles(app);
    watchStore(app, 3 * MB);
    try {
      const file = generatedFile(8 * MB);
      const res = await uploadTo(
        c,
        orderId,
        multipartStream(fieldsOf(c), 'a.pdf', file.chunks(), [['confirm', 'yes']]),
      );
      expect(res.statusCode).toBe(503);
      expect(res.body).toContain('The document could not be stored just now');
    } finally {
      vi.restoreAllMocks();
    }
    expect(await documentsOf(app, orderId)).toEqual([]);
    expect(await storedFiles(app)).toEqual(before);
  }, 90_000);
});

describe('the CSRF token of a console upload', () => {
  it('is read before the file: a form whose token comes after its file is refused with 403 before anything is stored', async () => {
    const app = apps.disk;
    const { c, orderId } = await setUp(app);
    const seen = watchStore(app);
    try {
      const file = generatedFile(MB);
      const late = await uploadTo(
        c,
        orderId,
        multipartStream([['documentType', 'company']], 'a.pdf', file.chunks(), [
          ['_csrf', c.csrf()],
          ['confirm', 'yes'],
        ]),
      );
      expect(late.statusCode).toBe(403);
      expect(late.body).toContain('Form expired');
      // Without a file, the token is checked once the form is read.
      const noFile = await c.postBody(
        `/console/orders/${orderId}/documents`,
        Buffer.from('--x\r\nContent-Disposition: form-data; name="documentType"\r\n\r\ncompany\r\n--x--\r\n'),
        'multipart/form-data; boundary=x',
      );
      expect(noFile.statusCode).toBe(403);
    } finally {
      vi.restoreAllMocks();
    }
    expect(seen.calls).toBe(0);
    expect(await documentsOf(app, orderId)).toEqual([]);
  });

  it('is still required of a multipart POST to any other console form', async () => {
    const app = apps.disk;
    const { c, orderId } = await setUp(app);
    const res = await c.postBody(
      `/console/orders/${orderId}/review`,
      Buffer.from(
        `--x\r\nContent-Disposition: form-data; name="_csrf"\r\n\r\n${c.csrf()}\r\n--x\r\nContent-Disposition: form-data; name="action"\r\n\r\ncancel\r\n--x--\r\n`,
      ),
      'multipart/form-data; boundary=x',
    );
    expect(res.statusCode).toBe(403);
  });
});

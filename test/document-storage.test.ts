import fs from 'node:fs';
import { Readable } from 'node:stream';
import { PDFDocument } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { s3Store } from '../src/modules/documents/document-store.js';
import { storeDocument } from '../src/modules/documents/documents.service.js';
import { runCli } from './cli-runner.js';
import { createOrderRow, tenantOf } from './factories.js';
import { createTestApp, type TestApp } from './harness.js';
import {
  END,
  fieldPart as part,
  fileHead as filePart,
  generatedFile,
  MULTIPART_TYPE,
  multipartStream,
} from './multipart-body.js';
import { startTestS3, type TestS3 } from './s3-server.js';

// Documents in S3-compatible object storage (DOC-7, DOC-8, DOC-9, OPS-25), against s3rver started by this file.

let s3: TestS3;
let t: TestApp;
beforeAll(async () => {
  s3 = await startTestS3();
  t = await createTestApp(s3.env('files'));
});
afterAll(async () => {
  await t?.close();
  await s3?.close();
});

const pdfBytes = async (pages = 1) => {
  const pdf = await PDFDocument.create();
  for (let i = 0; i < pages; i++) pdf.addPage();
  return Buffer.from(await pdf.save());
};

/** The admin upload with the file part FIRST and documentType after it, as a form may order them. */
function upload(app: TestApp, orderId: string, body: Buffer | Readable) {
  return app.app.inject({
    method: 'POST',
    url: `/admin/v1/orders/${orderId}/documents`,
    payload: body,
    headers: {
      'content-type': MULTIPART_TYPE,
      authorization: `Bearer ${app.ctx.secrets.operatorToken}`,
    },
  });
}

const rowsOf = async (app: TestApp, orderId: string) =>
  (await app.ctx.pool.query('SELECT id FROM documents WHERE order_id = $1', [orderId])).rowCount;

describe('documents in an S3-compatible bucket', () => {
  it('stores an upload in the bucket under the prefix and serves it by the same signed link', async () => {
    const tenant = await t.newTenant();
    const { orderId } = await createOrderRow(t.ctx, tenantOf(tenant, 'live'));
    const bytes = await pdfBytes(3);
    const res = await upload(
      t,
      orderId,
      Buffer.concat([filePart('Articles.pdf'), bytes, Buffer.from('\r\n'), part('documentType', 'company'), END]),
    );
    expect(res.statusCode, res.body).toBe(201);
    const doc = res.json();
    expect(await s3.keys()).toContain(`files/live/${doc.documentId}`);
    expect(fs.existsSync(t.ctx.config.storageDir)).toBe(false);

    const got = await tenant.api('GET', `/documents/${doc.documentId}`, undefined, { env: 'live' });
    const link = new URL(got.json().fileUrl);
    expect(link.pathname).toBe(`/files/${doc.documentId}`);
    const expires = Number(link.searchParams.get('expires'));
    expect(expires - Date.now() / 1000).toBeGreaterThan(3500);
    expect(expires - Date.now() / 1000).toBeLessThanOrEqual(3600);
    const file = await t.app.inject({ method: 'GET', url: `${link.pathname}${link.search}` });
    expect(file.statusCode).toBe(200);
    expect(file.headers['content-type']).toBe('application/pdf');
    expect(Buffer.compare(file.rawPayload, bytes)).toBe(0);
  });

  it('keeps neither a document nor an object of a refused or failed upload', async () => {
    const tenant = await t.newTenant();
    const { orderId } = await createOrderRow(t.ctx, tenantOf(tenant));
    const before = await s3.keys();

    // Above 25 MB, sent as a stream: refused with 413 once the limit is passed.
    const big = generatedFile(26 * 1024 * 1024).chunks();
    const tooLarge = await upload(t, orderId, multipartStream([], 'big.pdf', big, [['documentType', 'company']]));
    expect(tooLarge.statusCode).toBe(413);
    expect(tooLarge.json().code).toBe('payload_too_large');

    // Not a document: refused from its first bytes.
    const html = await upload(
      t,
      orderId,
      Buffer.concat([filePart('x.pdf'), Buffer.from('<html></html>\r\n'), part('documentType', 'company'), END]),
    );
    expect(html.statusCode).toBe(415);

    // A documentType refused after the file was already stored: the object goes again.
    const badType = await upload(
      t,
      orderId,
      Buffer.concat([
        filePart('a.pdf'),
        await pdfBytes(),
        Buffer.from('\r\n'),
        part('documentType', 'Not A Type'),
        END,
      ]),
    );
    expect(badType.statusCode).toBe(400);

    // The transaction fails after the upload: the object is removed.
    await t.ctx.pool.query(
      `ALTER TABLE documents ADD CONSTRAINT test_no_dba CHECK (document_type <> 'dba_certificate') NOT VALID`,
    );
    try {
      await expect(
        storeDocument(
          t.ctx,
          null,
          { orderId, documentType: 'dba_certificate', fileName: 'a.pdf', content: Readable.from([await pdfBytes()]) },
          'cli',
        ),
      ).rejects.toThrow();
    } finally {
      await t.ctx.pool.query('ALTER TABLE documents DROP CONSTRAINT test_no_dba');
    }
    expect(await rowsOf(t, orderId)).toBe(0);
    expect(await s3.keys()).toEqual(before);
  }, 60_000);

  it('answers 503 and keeps no document when the store refuses the file', async () => {
    const broken = await createTestApp({ ...s3.env('files'), STORAGE_URL: 's3://no-such-bucket/files' });
    try {
      const tenant = await broken.newTenant();
      const { orderId } = await createOrderRow(broken.ctx, tenantOf(tenant));
      const res = await upload(
        broken,
        orderId,
        Buffer.concat([part('documentType', 'company'), filePart('a.pdf'), await pdfBytes(), Buffer.from('\r\n'), END]),
      );
      expect(res.statusCode).toBe(503);
      expect(res.json()).toMatchObject({ code: 'service_unavailable' });
      expect(await rowsOf(broken, orderId)).toBe(0);
      const events = await broken.ctx.pool.query(`SELECT 1 FROM events WHERE type = 'document.uploaded'`);
      expect(events.rowCount).toBe(0);
    } finally {
      await broken.close();
    }
  });
});

describe('documents migrate-storage', () => {
  it('copies the files of the local disk into the bucket, and copies nothing twice when run again', async () => {
    const disk = await createTestApp();
    try {
      const tenant = await disk.newTenant();
      const { orderId } = await createOrderRow(disk.ctx, tenantOf(tenant));
      const ids: string[] = [];
      for (const documentType of ['articles_of_organization', 'ein_confirmation']) {
        const res = await tenant.api('POST', `/test_helpers/orders/${orderId}/documents`, { documentType });
        ids.push(res.json().documentId);
      }
      const env = s3.env('migrated');

      const noBucket = await runCli(disk, ['documents', 'migrate-storage']);
      expect(noBucket.code).toBe(1);
      expect(noBucket.stderr).toContain('STORAGE_URL');

      const first = await runCli(disk, ['documents', 'migrate-storage', '--json'], env);
      expect(first.code, first.stderr).toBe(0);
      expect(JSON.parse(first.stdout)).toMatchObject({ copied: 2, alreadyThere: 0, missing: [] });
      const again = await runCli(disk, ['documents', 'migrate-storage'], env);
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).toContain('Copied 0 file(s)');
      expect(again.stdout).toContain('2 already there');

      // The bucket holds the same bytes as the disk.
      const bucket = s3Store(loadConfig({ ...env, DATA_DIR: disk.ctx.config.dataDir }).objectStorage!);
      for (const id of ids) {
        const key = `test/${id}`;
        const copied = await bucket.open(key);
        const chunks: Buffer[] = [];
        for await (const c of copied!.stream) chunks.push(Buffer.from(c));
        expect(Buffer.concat(chunks).equals(fs.readFileSync(`${disk.ctx.config.storageDir}/${key}`))).toBe(true);
      }
    } finally {
      await disk.close();
    }
  }, 120_000);
});

describe('object storage settings (OPS-25)', () => {
  const base = { DATA_DIR: '.data/unused' };
  const problems = (env: Record<string, string>) => {
    try {
      loadConfig({ ...base, ...env });
      return '';
    } catch (err) {
      return String(err);
    }
  };

  it('reads the bucket, prefix, endpoint and path style; the disk when STORAGE_URL is unset', () => {
    expect(loadConfig(base).objectStorage).toBeNull();
    expect(
      loadConfig({ ...base, STORAGE_URL: 's3://my-bucket/docs/prod/', AWS_REGION: 'eu-west-1' }).objectStorage,
    ).toEqual({
      bucket: 'my-bucket',
      prefix: 'docs/prod/',
      endpoint: null,
      region: 'eu-west-1',
      forcePathStyle: false,
      credentials: null,
    });
    expect(
      loadConfig({ ...base, STORAGE_URL: 's3://bk1', S3_ENDPOINT: 'http://127.0.0.1:9000/' }).objectStorage,
    ).toMatchObject({ bucket: 'bk1', prefix: '', endpoint: 'http://127.0.0.1:9000', forcePathStyle: true });
  });

  it('refuses at boot what would fail later, naming the variable', () => {
    expect(problems({ STORAGE_URL: '/var/files' })).toContain('STORAGE_URL');
    expect(problems({ STORAGE_URL: 's3://Bad_Bucket/x', AWS_REGION: 'us-east-1' })).toContain('STORAGE_URL');
    expect(problems({ S3_ENDPOINT: 'http://127.0.0.1:9000' })).toContain('S3_ENDPOINT: only used with STORAGE_URL');
    expect(problems({ STORAGE_URL: 's3://bucket' })).toContain('AWS_REGION: required');
    const half = problems({
      STORAGE_URL: 's3://bucket',
      AWS_REGION: 'us-east-1',
      AWS_SECRET_ACCESS_KEY: 'abc123secret',
    });
    expect(half).toContain('AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY');
    expect(half).not.toContain('abc123secret');
  });
});

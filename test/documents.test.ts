import { PDFDocument } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signedFileUrl } from '../src/modules/documents/file-urls.js';
import { storeDocument } from '../src/modules/documents/documents.service.js';
import { createOrderRow, tenantOf } from './factories.js';
import { createTestApp, type TestApp } from './harness.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const pathOf = (url: string) => {
  const u = new URL(url);
  return `${u.pathname}${u.search}`;
};
const fetchFile = (url: string) => t.app.inject({ method: 'GET', url: pathOf(url) });

function multipart(fields: Record<string, string>, file?: { name: string; type: string; bytes: Buffer }) {
  const boundary = '----fcs-test-boundary';
  const chunks: Buffer[] = [];
  for (const [k, v] of Object.entries(fields))
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`));
  if (file) {
    chunks.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${file.name}"\r\nContent-Type: ${file.type}\r\n\r\n`,
      ),
      file.bytes,
      Buffer.from('\r\n'),
    );
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(chunks), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

async function adminUpload(
  orderId: string,
  fields: Record<string, string>,
  file?: { name: string; type: string; bytes: Buffer },
) {
  const body = multipart(fields, file);
  return t.app.inject({
    method: 'POST',
    url: `/admin/v1/orders/${orderId}/documents`,
    payload: body.payload,
    headers: { ...body.headers, authorization: `Bearer ${t.ctx.secrets.operatorToken}` },
  });
}

describe('test helper documents', () => {
  it('makes a real PDF for the order, emits document.uploaded and serves it by a signed link', async () => {
    const tenant = await t.newTenant();
    const { orderId, companyId } = await createOrderRow(t.ctx, tenantOf(tenant), {
      legalName: 'Blue Heron Ventures LLC',
    });
    const res = await tenant.api('POST', `/test_helpers/orders/${orderId}/documents`, {
      documentType: 'articles_of_organization',
    });
    expect(res.statusCode).toBe(201);
    const doc = res.json();
    expect(doc).toMatchObject({
      documentId: expect.stringMatching(/^doc_/),
      documentType: 'articles_of_organization',
      fileType: 'application/pdf',
      fileName: 'articles_of_organization.pdf',
      orderId,
      companyId,
    });

    const file = await fetchFile(doc.fileUrl);
    expect(file.statusCode).toBe(200);
    expect(file.headers['content-type']).toBe('application/pdf');
    expect(file.rawPayload.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    const pdf = await PDFDocument.load(file.rawPayload);
    expect(pdf.getPageCount()).toBe(1);
    expect(pdf.getTitle()).toContain('Blue Heron Ventures LLC');

    const events = (await tenant.api('GET', '/events?type=document.uploaded')).json().data;
    expect(events).toHaveLength(1);
    expect(events[0].data).toEqual({
      orderId,
      companyId,
      documentId: doc.documentId,
      documentType: 'articles_of_organization',
      fileName: doc.fileName,
      fileType: 'application/pdf',
      fileUrl: expect.stringContaining(`/files/${doc.documentId}?`),
      createdAt: doc.createdAt,
    });
    expect((await fetchFile(events[0].data.fileUrl)).statusCode).toBe(200);
  });

  it('stores a well-formed document type it does not list as given, and refuses a malformed one with 400 naming the field', async () => {
    const tenant = await t.newTenant();
    const { orderId } = await createOrderRow(t.ctx, tenantOf(tenant));
    // DOC-2: the list is open (the public API shows only company and registered_agent): an integrator's own word for
    // the articles works.
    const articles = await tenant.api('POST', `/test_helpers/orders/${orderId}/documents`, {
      documentType: 'articles',
    });
    expect(articles.statusCode, articles.body).toBe(201);
    expect(articles.json()).toMatchObject({
      documentType: 'articles',
      fileType: 'application/pdf',
      fileName: 'articles.pdf',
    });
    for (const documentType of ['Not A Type!', '', 'x'.repeat(65)]) {
      const res = await tenant.api('POST', `/test_helpers/orders/${orderId}/documents`, { documentType });
      expect(res.statusCode).toBe(400);
      expect(res.json().errors[0].field).toBe('documentType');
    }
  });
});

describe('GET /documents/{documentId} and the signed file link', () => {
  it('returns the document with a fresh link that expires after an hour', async () => {
    const tenant = await t.newTenant();
    const { orderId } = await createOrderRow(t.ctx, tenantOf(tenant));
    const created = (
      await tenant.api('POST', `/test_helpers/orders/${orderId}/documents`, { documentType: 'ein_confirmation' })
    ).json();
    const res = await tenant.api('GET', `/documents/${created.documentId}`);
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(Object.keys(doc).sort()).toEqual([
      'companyId',
      'createdAt',
      'documentId',
      'documentType',
      'fileName',
      'fileType',
      'fileUrl',
      'orderId',
    ]);
    const expires = Number(new URL(doc.fileUrl).searchParams.get('expires'));
    const inSeconds = expires - Date.now() / 1000;
    expect(inSeconds).toBeGreaterThan(3500);
    expect(inSeconds).toBeLessThanOrEqual(3600);
    expect((await fetchFile(doc.fileUrl)).statusCode).toBe(200);
  });

  it('refuses an expired link and a tampered one with 403, in the error shape', async () => {
    const tenant = await t.newTenant();
    const { orderId } = await createOrderRow(t.ctx, tenantOf(tenant));
    const doc = (
      await tenant.api('POST', `/test_helpers/orders/${orderId}/documents`, { documentType: 'company' })
    ).json();

    const expired = await fetchFile(signedFileUrl(t.ctx, doc.documentId, { ttlSeconds: -5 }));
    expect(expired.statusCode).toBe(403);
    expect(expired.json()).toMatchObject({
      code: 'forbidden',
      message: expect.stringMatching(/expired/),
      requestId: expect.any(String),
    });

    const url = new URL(doc.fileUrl);
    url.searchParams.set('expires', String(Number(url.searchParams.get('expires')) + 86400));
    expect((await fetchFile(url.toString())).statusCode).toBe(403);

    const otherDoc = new URL(doc.fileUrl);
    otherDoc.pathname = '/files/doc_01hzzzzzzzzzzzzzzzzzzzzzzz';
    expect((await fetchFile(otherDoc.toString())).statusCode).toBe(403);

    expect((await fetchFile(signedFileUrl(t.ctx, 'doc_01hzzzzzzzzzzzzzzzzzzzzzzz'))).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'GET', url: `/files/${doc.documentId}` })).statusCode).toBe(400);
  });

  it("answers 404 for another tenant's document and for the other environment", async () => {
    const owner = await t.newTenant();
    const { orderId } = await createOrderRow(t.ctx, tenantOf(owner));
    const doc = (
      await owner.api('POST', `/test_helpers/orders/${orderId}/documents`, { documentType: 'company' })
    ).json();
    const stranger = await t.newTenant();
    expect((await stranger.api('GET', `/documents/${doc.documentId}`)).statusCode).toBe(404);
    expect((await owner.api('GET', `/documents/${doc.documentId}`, undefined, { env: 'live' })).statusCode).toBe(404);
  });

  it('lists documents of a company, newest first', async () => {
    const tenant = await t.newTenant();
    const a = await createOrderRow(t.ctx, tenantOf(tenant));
    const b = await createOrderRow(t.ctx, tenantOf(tenant));
    const first = (
      await tenant.api('POST', `/test_helpers/orders/${a.orderId}/documents`, {
        documentType: 'articles_of_organization',
      })
    ).json();
    const second = (
      await tenant.api('POST', `/test_helpers/orders/${a.orderId}/documents`, { documentType: 'registered_agent' })
    ).json();
    await tenant.api('POST', `/test_helpers/orders/${b.orderId}/documents`, { documentType: 'company' });
    const list = await tenant.api('GET', `/documents?companyId=${a.companyId}`);
    expect(list.statusCode).toBe(200);
    expect(list.json()).toMatchObject({ object: 'list', hasMore: false });
    expect(list.json().data.map((d: { documentId: string }) => d.documentId)).toEqual([
      second.documentId,
      first.documentId,
    ]);
    const page = (await tenant.api('GET', `/documents?companyId=${a.companyId}&limit=1`)).json();
    expect(page).toMatchObject({ hasMore: true, data: [{ documentId: second.documentId }] });
  });
});

describe('operator upload (multipart)', () => {
  const pdfBytes = async () => {
    const pdf = await PDFDocument.create();
    pdf.addPage();
    return Buffer.from(await pdf.save());
  };

  it('stores an uploaded PDF for the order and emits document.uploaded', async () => {
    const tenant = await t.newTenant();
    const { orderId, companyId } = await createOrderRow(t.ctx, tenantOf(tenant, 'live'));
    const bytes = await pdfBytes();
    const res = await adminUpload(
      orderId,
      { documentType: 'articles_of_organization' },
      { name: '../../etc/Articles – Acme.pdf', type: 'application/octet-stream', bytes },
    );
    expect(res.statusCode).toBe(201);
    const doc = res.json();
    expect(doc).toMatchObject({
      orderId,
      companyId,
      documentType: 'articles_of_organization',
      fileType: 'application/pdf',
      fileName: 'Articles – Acme.pdf',
    });
    const file = await fetchFile(doc.fileUrl);
    expect(Buffer.compare(file.rawPayload, bytes)).toBe(0);
    expect(file.headers['content-disposition']).toContain("filename*=UTF-8''Articles%20%E2%80%93%20Acme.pdf");
    // Bytes that are what they claim open in the browser.
    expect(file.headers['content-type']).toBe('application/pdf');
    expect(file.headers['content-disposition']).toMatch(/^inline;/);
    const events = (await tenant.api('GET', '/events?type=document.uploaded', undefined, { env: 'live' })).json().data;
    expect(events.map((e: { data: { documentId: string } }) => e.data.documentId)).toEqual([doc.documentId]);
    const detail = (await t.admin('GET', `/orders/${orderId}`)).json();
    expect(detail.documents.map((d: { documentId: string }) => d.documentId)).toEqual([doc.documentId]);
  });

  it("takes the uploader's word for the type of a file without a known signature, by content type or extension", async () => {
    const tenant = await t.newTenant();
    const { orderId } = await createOrderRow(t.ctx, tenantOf(tenant));
    const fake = Buffer.from('stand-in for a scanned certificate');
    const byType = await adminUpload(
      orderId,
      { documentType: 'company' },
      { name: 'certificate', type: 'application/pdf', bytes: fake },
    );
    expect(byType.statusCode, byType.body).toBe(201);
    expect(byType.json()).toMatchObject({ fileType: 'application/pdf', fileName: 'certificate' });
    const byName = await adminUpload(
      orderId,
      { documentType: 'company' },
      { name: 'articles.pdf', type: 'application/octet-stream', bytes: fake },
    );
    expect(byName.json()).toMatchObject({ fileType: 'application/pdf', fileName: 'articles.pdf' });
    // Served as a download of opaque bytes: bytes matching no known type are never rendered by a browser.
    const file = await fetchFile(byName.json().fileUrl);
    expect(file.headers['content-type']).toBe('application/octet-stream');
    expect(file.headers['content-disposition']).toMatch(/^attachment; filename="articles.pdf"/);
    expect(file.headers['x-content-type-options']).toBe('nosniff');
    expect(file.body).toBe(fake.toString());
    const unnamed = await adminUpload(
      orderId,
      { documentType: 'company' },
      { name: 'notes', type: 'application/octet-stream', bytes: fake },
    );
    expect(unnamed.statusCode).toBe(415);
  });

  it('refuses files that are not documents, missing fields, and unknown orders', async () => {
    const tenant = await t.newTenant();
    const { orderId } = await createOrderRow(t.ctx, tenantOf(tenant));
    const html = await adminUpload(
      orderId,
      { documentType: 'company' },
      { name: 'x.pdf', type: 'application/pdf', bytes: Buffer.from('<html><script>alert(1)</script></html>') },
    );
    expect(html.statusCode).toBe(415);
    const svg = await adminUpload(
      orderId,
      { documentType: 'company' },
      { name: 'x.png', type: 'image/png', bytes: Buffer.from('\uFEFF  <svg onload="alert(1)"/>') },
    );
    expect(svg.statusCode).toBe(415);
    const missing = await adminUpload(orderId, {});
    expect(missing.statusCode).toBe(400);
    expect(
      missing
        .json()
        .errors.map((e: { field: string }) => e.field)
        .sort(),
    ).toEqual(['documentType', 'file']);
    const unknown = await adminUpload(
      'order_nope',
      { documentType: 'company' },
      { name: 'a.pdf', type: 'application/pdf', bytes: await pdfBytes() },
    );
    expect(unknown.statusCode).toBe(404);
    const json = await t.admin('POST', `/orders/${orderId}/documents`, { documentType: 'company' });
    expect(json.statusCode).toBeGreaterThanOrEqual(400);
    expect(json.statusCode).toBeLessThan(500);
    expect(
      await t.ctx.pool
        .query(`SELECT 1 FROM events WHERE organization_id = $1 AND type = 'document.uploaded'`, [
          tenant.organizationId,
        ])
        .then((r) => r.rowCount),
    ).toBe(0);
  });

  it('answers 400 bad_request in the error body to a form it cannot read, and 413 beyond its field limit (OPS-7)', async () => {
    const tenant = await t.newTenant();
    const { orderId } = await createOrderRow(t.ctx, tenantOf(tenant));
    const { payload, headers } = multipart(
      { documentType: 'company' },
      { name: 'a.pdf', type: 'application/pdf', bytes: await pdfBytes() },
    );
    const boundary = headers['content-type'].split('boundary=')[1]!;
    const send = (body: Buffer | string, contentType: string) =>
      t.app.inject({
        method: 'POST',
        url: `/admin/v1/orders/${orderId}/documents`,
        payload: body,
        headers: { 'content-type': contentType, authorization: `Bearer ${t.ctx.secrets.operatorToken}` },
      });
    const unreadable: Array<[string, Buffer | string, string]> = [
      ['no boundary', payload, 'multipart/form-data'],
      ['another boundary', payload, 'multipart/form-data; boundary=other'],
      ['a body cut short', payload.subarray(0, payload.length - 30), headers['content-type']],
      [
        'a JSON field that is not JSON',
        `--${boundary}\r\nContent-Disposition: form-data; name="meta"\r\nContent-Type: application/json\r\n\r\n{x\r\n--${boundary}--\r\n`,
        headers['content-type'],
      ],
    ];
    for (const [what, body, contentType] of unreadable) {
      const res = await send(body, contentType);
      expect(res.statusCode, what).toBe(400);
      expect(res.json(), what).toEqual({
        code: 'bad_request',
        message: expect.stringContaining('multipart/form-data'),
        requestId: expect.stringMatching(/^req_/),
      });
    }
    const fields = Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`field${i}`, 'x']));
    const tooMany = await send(multipart(fields).payload, headers['content-type']);
    expect(tooMany.statusCode).toBe(413);
    expect(tooMany.json().code).toBe('payload_too_large');
  });

  it('removes the stored file when the transaction fails', async () => {
    const tenant = await t.newTenant();
    const { orderId } = await createOrderRow(t.ctx, tenantOf(tenant));
    const fs = await import('node:fs');
    const dir = `${t.ctx.config.storageDir}/test`;
    const before = fs.existsSync(dir) ? fs.readdirSync(dir).length : 0;
    await expect(
      storeDocument(
        t.ctx,
        null,
        { orderId, companyId: 'comp_other', documentType: 'company', fileName: 'a.pdf', content: await pdfBytes() },
        'cli',
      ),
    ).rejects.toMatchObject({ status: 400 });
    await t.ctx.pool.query(
      `ALTER TABLE documents ADD CONSTRAINT test_no_docs CHECK (document_type <> 'dba_certificate') NOT VALID`,
    );
    try {
      await expect(
        storeDocument(
          t.ctx,
          null,
          { orderId, documentType: 'dba_certificate', fileName: 'a.pdf', content: await pdfBytes() },
          'cli',
        ),
      ).rejects.toThrow();
    } finally {
      await t.ctx.pool.query('ALTER TABLE documents DROP CONSTRAINT test_no_docs');
    }
    expect(fs.existsSync(dir) ? fs.readdirSync(dir).length : 0).toBe(before);
  });
});

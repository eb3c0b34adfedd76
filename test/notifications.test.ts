import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BackgroundWorker, startWorker } from '../src/worker.js';
import { outboxDir } from '../src/modules/notifications/mailer.js';
import { queueDocumentEmail } from '../src/modules/notifications/notifications.service.js';
import { createCompany, createOrderRow } from './factories.js';
import { createTestApp, type TestApp } from './harness.js';

interface Received {
  from: string;
  to: string[];
  raw: string;
}

let smtp: SMTPServer;
let port: number;
const inbox: Received[] = [];
const waiters: Array<() => void> = [];
const refusedOnce = new Set<string>();

/** Resolves when the inbox holds `n` messages (the test timeout bounds the wait). */
const inboxHas = (n: number) =>
  new Promise<void>((resolve) => {
    const check = () => (inbox.length >= n ? resolve() : waiters.push(check));
    check();
  });

beforeAll(async () => {
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    // Addresses starting with "flaky" are refused once with a temporary error, to exercise the retry.
    onRcptTo(address, _session, callback) {
      if (address.address.startsWith('flaky') && !refusedOnce.has(address.address)) {
        refusedOnce.add(address.address);
        return callback(Object.assign(new Error('Mailbox busy, try again later'), { responseCode: 451 }));
      }
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        inbox.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        for (const w of waiters.splice(0)) w();
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  port = (smtp.server.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise<void>((resolve) => smtp.close(() => resolve()));
});

describe('document emails through SMTP', () => {
  let t: TestApp;
  let worker: BackgroundWorker;
  beforeAll(async () => {
    t = await createTestApp({
      SMTP_URL: `smtp://127.0.0.1:${0}`.replace(':0', `:${port}`),
      EMAIL_FROM: 'Filings <no-reply@filings.test>',
    });
    worker = await startWorker(t.ctx);
  });
  afterAll(async () => {
    await worker.stop();
    await t.close();
  });

  it('emails every admin of the company when a document arrives, from a background job', async () => {
    const tenant = await t.newTenant('Harbor Legal');
    const { user, company } = await createCompany(tenant, 'test', { legalName: 'Seaside Bakery LLC' });
    const order = await createOrderRow(
      t.ctx,
      { organizationId: tenant.organizationId, environment: 'test' },
      { companyId: company.id, userId: user.id },
    );
    const before = inbox.length;
    const res = await tenant.api('POST', `/test_helpers/orders/${order.orderId}/documents`, {
      documentType: 'company',
    });
    expect(res.statusCode, res.body).toBe(201);

    await inboxHas(before + 1);
    const mail = inbox[before];
    expect(mail.to).toEqual([user.email]);
    expect(mail.from).toBe('no-reply@filings.test');
    expect(mail.raw).toMatch(/^From: Harbor Legal <no-reply@filings\.test>/m);
    expect(mail.raw).toMatch(/^Subject: New document for Seaside Bakery LLC/m);
    expect(mail.raw).toContain('Seaside Bakery LLC');
    expect(mail.raw).toContain(res.json().fileName);
  });

  it('retries a send the mail server refused for now', async () => {
    const tenant = await t.newTenant('Retry Co');
    const user = (
      await tenant.api('POST', '/users', { fullName: 'Flaky Inbox', email: `flaky.${Date.now()}@example.com` })
    ).json();
    const { company } = await createCompany(tenant);
    await t.ctx.pool.query(
      'INSERT INTO company_admins (company_id, user_id, organization_id, environment) VALUES ($1, $2, $3, $4)',
      [company.id, user.id, tenant.organizationId, 'test'],
    );
    const order = await createOrderRow(
      t.ctx,
      { organizationId: tenant.organizationId, environment: 'test' },
      { companyId: company.id, userId: user.id },
    );
    expect(
      (await tenant.api('POST', `/test_helpers/orders/${order.orderId}/documents`, { documentType: 'company' }))
        .statusCode,
    ).toBe(201);
    await new Promise<void>((resolve) => {
      const check = () => (inbox.some((m) => m.to.includes(user.email)) ? resolve() : waiters.push(check));
      check();
    });
    expect(refusedOnce.has(user.email)).toBe(true);
  });

  it('sends nothing when the organization turned email notifications off', async () => {
    const tenant = await t.newTenant('Quiet Co');
    expect(
      (await tenant.api('PATCH', '/organization', { emailNotifications: false }, { env: 'live' })).statusCode,
    ).toBe(200);
    const { user, company } = await createCompany(tenant);
    const order = await createOrderRow(
      t.ctx,
      { organizationId: tenant.organizationId, environment: 'test' },
      { companyId: company.id, userId: user.id },
    );
    const quiet = await tenant.api('POST', `/test_helpers/orders/${order.orderId}/documents`, {
      documentType: 'company',
    });
    expect(quiet.statusCode).toBe(201);
    expect(
      await queueDocumentEmail(
        t.ctx.pool,
        { organizationId: tenant.organizationId, environment: 'test' },
        quiet.json().documentId,
      ),
    ).toBe(0);

    // A later document of an organization with notifications on arrives; the quiet one never does.
    const loud = await t.newTenant('Loud Co');
    const other = await createCompany(loud);
    const loudOrder = await createOrderRow(
      t.ctx,
      { organizationId: loud.organizationId, environment: 'test' },
      { companyId: other.company.id, userId: other.user.id },
    );
    const before = inbox.length;
    expect(
      (await loud.api('POST', `/test_helpers/orders/${loudOrder.orderId}/documents`, { documentType: 'company' }))
        .statusCode,
    ).toBe(201);
    await inboxHas(before + 1);
    expect(inbox.flatMap((m) => m.to)).not.toContain(user.email);
  });
});

describe('document emails without SMTP', () => {
  it('writes .eml files to the outbox', async () => {
    const t = await createTestApp();
    const worker = await startWorker(t.ctx);
    try {
      const tenant = await t.newTenant('Outbox Co');
      const { user, company } = await createCompany(tenant, 'test', { legalName: 'Outbox Test LLC' });
      const order = await createOrderRow(
        t.ctx,
        { organizationId: tenant.organizationId, environment: 'test' },
        { companyId: company.id, userId: user.id },
      );
      expect(
        (await tenant.api('POST', `/test_helpers/orders/${order.orderId}/documents`, { documentType: 'company' }))
          .statusCode,
      ).toBe(201);
      const dir = outboxDir(t.ctx.config);
      const files = await new Promise<string[]>((resolve) => {
        const poll = () => {
          const found = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.eml')) : [];
          if (found.length) resolve(found);
          else setTimeout(poll, 50);
        };
        poll();
      });
      const eml = fs.readFileSync(`${dir}/${files[0]}`, 'utf8');
      expect(eml).toContain(`To: Ada Lovelace <${user.email}>`);
      expect(eml).toContain('Outbox Test LLC');
    } finally {
      await worker.stop();
      await t.close();
    }
  });
});

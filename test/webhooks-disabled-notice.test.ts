import fs from 'node:fs/promises';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTransaction } from '../src/lib/db.js';
import { loggerOptions } from '../src/lib/logger.js';
import { emitEvent } from '../src/modules/events/events.service.js';
import { outboxDir } from '../src/modules/notifications/mailer.js';
import { sendEndpointDisabledEmailTask } from '../src/modules/notifications/endpoint-disabled-email.task.js';
import { type BackgroundWorker, startWorker } from '../src/worker.js';
import { createTestApp, type TestApp, type TestTenant } from './harness.js';
import { startReceiver, waitFor, type Receiver } from './webhook-receiver.js';

// WH-6, WH-7: an endpoint that keeps failing is disabled and the organization is told.
// No SMTP_URL: the mailer writes each message as a .eml file to DATA_DIR/outbox, read back here.
let t: TestApp;
let worker: BackgroundWorker;
const workerLogs: Array<Record<string, any>> = [];
const receivers: Receiver[] = [];

beforeAll(async () => {
  t = await createTestApp({ WEBHOOK_RETRY_SCHEDULE: '1,1,1', WEBHOOK_TIMEOUT_MS: '15000' });
  const stream = new Writable({
    write(chunk, _enc, cb) {
      workerLogs.push(JSON.parse(String(chunk)));
      cb();
    },
  });
  worker = await startWorker({ ...t.ctx, log: pino(loggerOptions('info'), stream) });
});
afterAll(async () => {
  await worker?.stop();
  await Promise.all(receivers.map((r) => r.close()));
  await t?.close();
});

async function receiver(status: number): Promise<Receiver> {
  const r = await startReceiver(() => ({ status, body: 'nope' }));
  receivers.push(r);
  return r;
}

async function endpointFor(tenant: TestTenant, url: string): Promise<string> {
  const res = await tenant.api('POST', '/webhook-endpoints', { url, eventTypes: ['document.uploaded'] });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id;
}

function emit(tenant: TestTenant) {
  return withTransaction(t.ctx.pool, (tx) =>
    emitEvent(tx, { organizationId: tenant.organizationId, environment: 'test' }, 'document.uploaded', {
      documentType: 'company',
      fileName: 'articles.pdf',
    }),
  );
}

/** Waits until every delivery to the endpoint has settled and it is disabled; returns the endpoint as the API shows it. */
async function disabledEndpoint(tenant: TestTenant, endpointId: string) {
  return waitFor(`endpoint ${endpointId} disabled with its deliveries settled`, async () => {
    const deliveries = (await tenant.api('GET', `/webhook-deliveries?endpointId=${endpointId}`)).json().data as Array<{
      status: string;
    }>;
    const ep = (await tenant.api('GET', `/webhook-endpoints/${endpointId}`)).json();
    return ep.disabled && deliveries.length && deliveries.every((d) => d.status !== 'pending') ? ep : null;
  });
}

/** Email jobs for the endpoint still queued or failed (a sent email's job is deleted). */
async function emailJobsOf(endpointId: string): Promise<number> {
  const { rows } = await t.ctx.pool.query(
    `SELECT count(*)::int AS n FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks k ON k.id = j.task_id
      WHERE k.identifier = $1 AND j.payload->>'endpointId' = $2`,
    [sendEndpointDisabledEmailTask.name, endpointId],
  );
  return rows[0].n;
}

interface Mail {
  headers: Record<string, string>;
  /** The whole message with quoted-printable soft breaks and escapes undone. */
  decoded: string;
}

/** The outbox messages about an endpoint (its id is in the X-Webhook-Endpoint-Id header). */
async function mailsAbout(endpointId: string): Promise<Mail[]> {
  const dir = outboxDir(t.ctx.config);
  const files = await fs.readdir(dir).catch(() => [] as string[]);
  const mails = await Promise.all(
    files.filter((f) => f.endsWith('.eml')).map(async (f) => parseMail(await fs.readFile(path.join(dir, f), 'utf8'))),
  );
  return mails.filter((m) => m.headers['x-webhook-endpoint-id'] === endpointId);
}

function parseMail(raw: string): Mail {
  const [head] = raw.split(/\r?\n\r?\n/, 1);
  const headers: Record<string, string> = {};
  for (const line of head.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
  }
  const decoded = raw
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
  return { headers, decoded };
}

const logOf = (endpointId: string) =>
  workerLogs.find((l) => l.endpointId === endpointId && /webhook endpoint disabled/.test(l.msg));

describe('telling the organization about a disabled webhook endpoint', () => {
  it('emails the technical contact exactly once when a receiver answers 410 Gone, with the facts and how to re-enable', async () => {
    const tenant = await t.newTenant('Gone Platform');
    const contact = `dev-alerts.${Date.now()}@gone-platform.example`;
    expect((await tenant.api('PATCH', '/organization', { contactEmail: contact }, { env: 'live' })).statusCode).toBe(
      200,
    );
    const r = await receiver(410);
    const endpointId = await endpointFor(tenant, r.url);
    // Two events at once: two deliveries may race on the endpoint; it is disabled, and the contact told, once.
    await Promise.all([emit(tenant), emit(tenant)]);
    const ep = await disabledEndpoint(tenant, endpointId);
    expect(ep.disabledReason).toContain('410');
    await waitFor('the email job to finish', async () => (await emailJobsOf(endpointId)) === 0);

    const mails = await mailsAbout(endpointId);
    expect(mails).toHaveLength(1);
    const [mail] = mails;
    expect(mail.headers.to).toBe(contact);
    expect(mail.headers.subject).toContain('Webhook endpoint disabled');
    expect(mail.headers.subject).toContain(r.url);
    expect(mail.decoded).toContain(endpointId);
    expect(mail.decoded).toContain(r.url);
    expect(mail.decoded).toContain('The endpoint answered 410 Gone');
    expect(mail.decoded).toMatch(/HTTP 410\s+document\.uploaded/);
    expect(mail.decoded).toContain(`PATCH ${t.ctx.config.testBaseUrl}/webhook-endpoints/${endpointId}`);
    expect(mail.decoded).toContain('{"disabled": false}');
    expect(mail.decoded).not.toMatch(/whsec_|sk_(live|test)_[A-Za-z0-9]/);
    expect(await waitFor('the log line', () => logOf(endpointId))).toMatchObject({
      level: 30,
      organizationId: tenant.organizationId,
    });

    // The instructions work: re-enabled (the receiver is fixed meanwhile), it receives events again.
    r.respond = () => ({ status: 200, body: 'ok' });
    const before = r.requests.length;
    expect((await tenant.api('PATCH', `/webhook-endpoints/${endpointId}`, { disabled: false })).json()).toMatchObject({
      disabled: false,
      disabledReason: null,
    });
    const again = await emit(tenant);
    const delivered = await waitFor('the event sent after re-enabling to be delivered', async () => {
      const [d] = (await tenant.api('GET', `/webhook-deliveries?eventId=${again.id}`)).json().data as Array<{
        status: string;
      }>;
      return d && d.status !== 'pending' ? d : null;
    });
    expect(delivered).toMatchObject({ status: 'succeeded', endpointId });
    expect(r.requests.slice(before).map((q) => q.event.id)).toEqual([again.id]);
    expect((await tenant.api('GET', `/webhook-endpoints/${endpointId}`)).json()).toMatchObject({ disabled: false });
  });

  it('says since when every delivery failed when the endpoint is disabled after WEBHOOK_DISABLE_AFTER_HOURS', async () => {
    const tenant = await t.newTenant('Failing Platform');
    const contact = `oncall.${Date.now()}@failing-platform.example`;
    expect((await tenant.api('PATCH', '/organization', { contactEmail: contact }, { env: 'live' })).statusCode).toBe(
      200,
    );
    const r = await receiver(503);
    const endpointId = await endpointFor(tenant, r.url);
    await t.ctx.pool.query(`UPDATE webhook_endpoints SET failing_since = now() - interval '121 hours' WHERE id = $1`, [
      endpointId,
    ]);
    await emit(tenant);
    const ep = await disabledEndpoint(tenant, endpointId);
    await waitFor('the email job to finish', async () => (await emailJobsOf(endpointId)) === 0);
    const mails = await mailsAbout(endpointId);
    expect(mails).toHaveLength(1);
    expect(mails[0].headers.to).toBe(contact);
    expect(mails[0].decoded).toContain(ep.disabledReason);
    expect(mails[0].decoded).toMatch(/Every delivery has failed since \d{4}-\d\d-\d\dT/);
    expect(mails[0].decoded).toContain(`Failing since: ${ep.failingSince}`);
    expect(mails[0].decoded).toMatch(/HTTP 503\s+document\.uploaded/);
  });

  it('emails nobody and logs a warning when the organization has no contact email', async () => {
    const tenant = await t.newTenant('Silent Platform');
    expect((await tenant.api('GET', '/organization')).json().contactEmail).toBeNull();
    const r = await receiver(410);
    const endpointId = await endpointFor(tenant, r.url);
    await emit(tenant);
    await disabledEndpoint(tenant, endpointId);
    // The line is written after the disabling transaction committed; any email job would have been queued in it.
    const line = await waitFor('the warning', () => logOf(endpointId));
    expect(line).toMatchObject({
      level: 40,
      organizationId: tenant.organizationId,
      reason: expect.stringContaining('410'),
    });
    expect(await emailJobsOf(endpointId)).toBe(0);
    expect(await mailsAbout(endpointId)).toEqual([]);
  });
});

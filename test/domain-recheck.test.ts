import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliActor } from '../src/modules/audit/audit.service.js';
import { recheckWhiteLabelDomains } from '../src/modules/maintenance/domain-recheck.js';
import { recheckWhiteLabelDomainsTask } from '../src/modules/maintenance/recheck-domains.task.js';
import { sendDomainLapsedEmailTask } from '../src/modules/notifications/domain-lapsed-email.task.js';
import { outboxDir } from '../src/modules/notifications/mailer.js';
import { organizationDetail, setWhiteLabelDomain } from '../src/modules/console/organizations.console.js';
import { listDomainsToRecheck, markDomainLapsed } from '../src/modules/organizations/organizations.repo.js';
import { cronItems, taskDefinitions } from '../src/tasks.js';
import { consoleClient, newOperator, signIn } from './console-helpers.js';
import { injectTarget, mintLink, openLink, sessionCookie } from './dashboard-helpers.js';
import { fakeDns, holdDomainNotifications, requestDomain, setVerifiedDomain, verifyDomain } from './domain-helpers.js';
import { createUser } from './factories.js';
import { createTestApp, type TestApp, type TestTenant } from './harness.js';

// ORG-6: verified white-label domains are re-checked daily; one whose TXT record is gone is taken out of use (links,
// emails and the dashboard go back to DASHBOARD_BASE_URL, the domain stops answering, its sessions end) and the
// organization's technical contact is emailed.

const DOMAIN = 'portal.recheck-co.test';
const CONTACT = 'tech@recheck-co.test';
const helpers = { logger: { info: () => undefined } } as never;

let t: TestApp;
let dns: ReturnType<typeof fakeDns>;
let tenant: TestTenant;
let record: { recordName: string; recordValue: string };
beforeAll(async () => {
  t = await createTestApp();
  dns = fakeDns(t);
  tenant = await t.newTenant('Recheck Co');
  const contact = await tenant.api('PATCH', '/organization', { contactEmail: CONTACT }, { env: 'live' });
  expect(contact.statusCode).toBe(200);
  const { recordName, recordValue } = (await setVerifiedDomain(t, tenant, DOMAIN, dns)).whiteLabelDomainVerification;
  record = { recordName, recordValue };
});
afterAll(() => t.close());

const verification = async () =>
  (await tenant.api('GET', '/organization', undefined, { env: 'live' })).json().whiteLabelDomainVerification;
const onDomain = (url: string, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'GET', url, headers: { host: DOMAIN, ...headers } });

async function queuedLapseEmails(): Promise<Array<{ organizationId: string; domain: string }>> {
  const { rows } = await t.ctx.pool.query(
    `SELECT j.payload FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks k ON k.id = j.task_id
      WHERE k.identifier = 'send_domain_lapsed_email' ORDER BY j.id`,
  );
  return rows.map((r) => r.payload);
}

function outbox(): string[] {
  const dir = outboxDir(t.ctx.config);
  return fs.existsSync(dir) ? fs.readdirSync(dir).map((f) => fs.readFileSync(`${dir}/${f}`, 'utf8')) : [];
}

it('runs daily as a cron task of the worker', () => {
  expect(taskDefinitions[recheckWhiteLabelDomainsTask.name]).toBe(recheckWhiteLabelDomainsTask);
  expect(cronItems).toContainEqual(
    expect.objectContaining({
      task: recheckWhiteLabelDomainsTask.name,
      match: expect.stringMatching(/^\d+ \d+ \* \* \*$/),
    }),
  );
});

describe('a domain whose record is still published', () => {
  it('stays in use, and so does one DNS gives no answer for', async () => {
    expect(await recheckWhiteLabelDomains(t.ctx)).toMatchObject({ held: 1, lapsed: 0, unanswered: 0 });
    dns.fail(record.recordName, 'ETIMEOUT');
    try {
      expect(await recheckWhiteLabelDomains(t.ctx)).toMatchObject({ held: 0, lapsed: 0, unanswered: 1 });
    } finally {
      dns.fail(record.recordName, null);
    }
    expect((await verification()).status).toBe('verified');
    expect((await onDomain('/')).statusCode).toBe(401);
    expect(await queuedLapseEmails()).toEqual([]);
  });
});

describe('a domain whose record is gone', () => {
  it('is taken out of use: links go to DASHBOARD_BASE_URL, the domain stops answering, its sessions end', async () => {
    const user = await createUser(tenant, 'live');
    const link = await mintLink(tenant, { userId: user.id }, 'live');
    expect(link.startsWith(`https://${DOMAIN}/auth/`)).toBe(true);
    const opened = await openLink(t, link);
    expect(opened.statusCode).toBe(303);
    const { pair } = sessionCookie(opened.headers['set-cookie']);
    expect((await onDomain('/', { cookie: pair })).statusCode).toBe(200);
    const unspent = await mintLink(tenant, { userId: user.id }, 'live');

    dns.withdraw(record.recordName);
    // The worker runs in this process (START_WORKER): the domain stops answering at once, before any notification.
    const release = holdDomainNotifications(t);
    try {
      await recheckWhiteLabelDomainsTask.handler(t.ctx)({}, helpers);
      expect((await onDomain('/')).statusCode).toBe(404);
    } finally {
      release();
    }

    // Pending again, with the same record to publish.
    expect(await verification()).toMatchObject({ status: 'pending', ...record });
    expect(await mintLink(tenant, { userId: user.id }, 'live')).toMatch(/^http:\/\/localhost:3000\/dashboard\/auth\//);
    expect((await onDomain('/')).statusCode).toBe(404);
    const { url, headers } = injectTarget(unspent);
    expect((await t.app.inject({ method: 'GET', url, headers })).statusCode).toBe(404);
    // The session started there is over wherever its cookie is sent (the domain's next owner would receive it).
    const replayed = await t.app.inject({ method: 'GET', url: '/dashboard/', headers: { cookie: pair } });
    expect(replayed.statusCode).toBe(401);
  });

  it('tells the technical contact by email what happened and how to put the domain back', async () => {
    const queued = await queuedLapseEmails();
    expect(queued).toEqual([{ organizationId: tenant.organizationId, domain: DOMAIN }]);
    const before = outbox().length;
    await sendDomainLapsedEmailTask.handler(t.ctx)(queued[0], helpers);
    const sent = outbox().slice(before);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toContain(`To: ${CONTACT}`);
    expect(sent[0]).toContain(`Subject: White-label domain taken out of use: ${DOMAIN}`);
    // Quoted-printable: soft line breaks joined, =XX decoded.
    const body = sent[0]
      .replace(/=\r?\n/g, '')
      .replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
    expect(body).toContain(record.recordName);
    expect(body).toContain(record.recordValue);
    expect(body).toContain('http://localhost:3000/dashboard');
    expect(body).toContain('/organization/white-label-domain/verify');
  });

  it('shows on the console’s organization page until the domain is verified again', async () => {
    const op = await newOperator(t.ctx.pool);
    const client = consoleClient(t.app);
    expect((await signIn(client, op.email, op.password)).statusCode).toBe(303);
    const page = async () => (await client.get(`/console/organizations/${tenant.organizationId}`)).body;
    expect(await page()).toContain('id="domain-lapsed"');
    // The CLI's `org show --json` says when too.
    expect((await organizationDetail(t.ctx, tenant.organizationId)).whiteLabelDomainLapsedAt).toEqual(
      expect.any(String),
    );
    dns.publish(record.recordName, record.recordValue);
    const verified = await tenant.api('POST', '/organization/white-label-domain/verify', undefined, { env: 'live' });
    expect(verified.statusCode).toBe(200);
    expect(await page()).not.toContain('id="domain-lapsed"');
    expect((await organizationDetail(t.ctx, tenant.organizationId)).whiteLabelDomainLapsedAt).toBeNull();
    // An email still queued for the lapse is not sent once the organization has put its domain back.
    const sentBefore = outbox().length;
    await sendDomainLapsedEmailTask.handler(t.ctx)({ organizationId: tenant.organizationId, domain: DOMAIN }, helpers);
    expect(outbox()).toHaveLength(sentBefore);
    expect((await onDomain('/')).statusCode).toBe(401);
  }, 60_000);
});

describe('a domain an operator vouched for', () => {
  it('is not re-checked: it stays in use without a record, and its name is not even looked up', async () => {
    const vouched = await t.newTenant('Vouched Co');
    await setWhiteLabelDomain(t.ctx, vouched.organizationId, 'portal.vouched-co.test', {
      verified: true,
      audit: cliActor(),
    });
    dns.lookups.length = 0;
    const counts = await recheckWhiteLabelDomains(t.ctx);
    expect(counts.lapsed).toBe(0);
    expect(dns.lookups.filter((name) => name.endsWith('portal.vouched-co.test'))).toEqual([]);
    const org = await vouched.api('GET', '/organization', undefined, { env: 'live' });
    expect(org.json().whiteLabelDomainVerification.status).toBe('verified');
    expect(
      (await t.app.inject({ method: 'GET', url: '/', headers: { host: 'portal.vouched-co.test' } })).statusCode,
    ).toBe(401);
  });

  it('is not taken out of use when an operator vouched for it after the check listed it', async () => {
    const late = await t.newTenant('Late Vouch Co');
    const { recordName } = await requestDomain(late, 'portal.late-vouch.test', dns);
    await verifyDomain(late);
    const listed = (await listDomainsToRecheck(t.ctx.pool)).find((d) => d.id === late.organizationId)!;
    await setWhiteLabelDomain(t.ctx, late.organizationId, 'portal.late-vouch.test', {
      verified: true,
      audit: cliActor(),
    });
    dns.withdraw(recordName);
    // The DNS check of the listed domain found the record gone; the operator's vouching meanwhile wins.
    expect(await markDomainLapsed(t.ctx.pool, listed)).toBe(false);
    const org = await late.api('GET', '/organization', undefined, { env: 'live' });
    expect(org.json().whiteLabelDomainVerification.status).toBe('verified');
  });
});

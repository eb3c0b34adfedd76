import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Environment } from '../src/context.js';
import { sha256 } from '../src/lib/secrets.js';
import { webhookEndpointSnapshot } from '../src/modules/audit/audit-redaction.js';
import { type AuditActor, cliActor, recordAudit } from '../src/modules/audit/audit.service.js';
import {
  createEndpoint,
  deleteEndpoint,
  rotateSecret,
  updateEndpoint,
} from '../src/modules/webhooks/webhooks.service.js';
import { rollKey } from '../src/modules/organizations/organizations.service.js';
import { runCli } from './cli-runner.js';
import { consoleClient, newOperator, signIn as consoleSignIn } from './console-helpers.js';
import { fakeDns } from './domain-helpers.js';
import { createTestApp, type TestApp } from './harness.js';
import { wholesale } from './orders-fixtures.js';
import {
  acceptInvitation,
  followSecret,
  memberSession,
  newEmail,
  type PortalClient,
  portalClient,
  setProofAge,
} from './portal-helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

interface Entry {
  id: string;
  organization_id: string;
  environment: Environment | null;
  actor_kind: string;
  actor_id: string | null;
  actor_label: string | null;
  client_address: string | null;
  action: string;
  target_id: string | null;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
}

/** Every audit entry of an organization, oldest first (read straight from the table). */
async function entriesOf(organizationId: string, action?: string): Promise<Entry[]> {
  const { rows } = await t.ctx.pool.query<Entry>(
    `SELECT * FROM audit_log WHERE organization_id = $1 AND ($2::text IS NULL OR action = $2) ORDER BY created_at, id`,
    [organizationId, action ?? null],
  );
  return rows;
}

/** The one entry of an action, asserting there is exactly one, and that none of `secrets` appears anywhere in it. */
async function onlyEntry(organizationId: string, action: string, secrets: string[]): Promise<Entry> {
  const found = await entriesOf(organizationId, action);
  expect(found).toHaveLength(1);
  const text = JSON.stringify(found[0]);
  for (const secret of secrets) {
    expect(secret.length).toBeGreaterThan(5);
    expect(text).not.toContain(secret);
  }
  return found[0]!;
}

async function switchTo(client: PortalClient, environment: Environment) {
  await client.get('/portal/');
  await client.post('/portal/environment', { _csrf: client.csrf(), environment });
}

const ADDRESS = '203.0.113.7';

describe('changes made in the portal', () => {
  it('records an invitation, the newcomer joining and a removal, with actor and address and no secret', async () => {
    const tenant = await t.newTenant('Audit Members Co');
    const owner = await memberSession(t, tenant.organizationId, 'owner', { remoteAddress: ADDRESS });
    await owner.client.get('/portal/members');
    const email = newEmail('invitee');
    const invited = await owner.client.post('/portal/members/invite', {
      _csrf: owner.client.csrf(),
      email,
      role: 'developer',
    });
    expect(invited.statusCode).toBe(201);
    const link = /(\/portal\/invitation\?token=[^"&<]+)/.exec(invited.body.replaceAll('&amp;', '&'))![1]!;
    const token = decodeURIComponent(new URL(link, 'http://x').searchParams.get('token')!);
    const invitation = await onlyEntry(tenant.organizationId, 'invitation.created', [token, sha256(token)]);
    expect(invitation).toMatchObject({
      actor_kind: 'member',
      actor_id: owner.memberId,
      actor_label: owner.email,
      client_address: ADDRESS,
      environment: null,
      before: null,
      after: { email, role: 'developer' },
    });

    const newcomer = portalClient(t, '198.51.100.9');
    expect((await acceptInvitation(newcomer, link, 'Nia Newcomer')).statusCode).toBe(303);
    const joined = await onlyEntry(tenant.organizationId, 'member.added', [token]);
    expect(joined).toMatchObject({
      actor_kind: 'member',
      actor_label: email,
      client_address: '198.51.100.9',
      after: { email, name: 'Nia Newcomer', role: 'developer' },
    });
    const { rows } = await t.ctx.pool.query<{ password_hash: string }>(
      'SELECT password_hash FROM members WHERE id = $1',
      [joined.target_id],
    );
    expect(JSON.stringify(joined)).not.toContain(rows[0]!.password_hash);

    const leaving = await memberSession(t, tenant.organizationId, 'viewer');
    await owner.client.get('/portal/members');
    const removed = await owner.client.post(`/portal/members/${leaving.memberId}/remove`, {
      _csrf: owner.client.csrf(),
    });
    expect(removed.statusCode).toBe(303);
    const removal = await onlyEntry(tenant.organizationId, 'member.removed', ['scrypt$unused']);
    expect(removal).toMatchObject({
      actor_id: owner.memberId,
      client_address: ADDRESS,
      target_id: leaving.memberId,
      before: { memberId: leaving.memberId, email: leaving.email, role: 'viewer' },
      after: null,
    });
  });

  it('records retail price changes in the environment shown, and nothing for a refused one', async () => {
    const tenant = await t.newTenant('Audit Prices Co');
    const admin = await memberSession(t, tenant.organizationId, 'admin', { remoteAddress: ADDRESS });
    await admin.client.get('/portal/prices');
    const retail = wholesale('registered_agent') / 100 + 25;
    const below = await admin.client.post('/portal/prices/registered_agent', {
      _csrf: admin.client.csrf(),
      retailAmount: String(wholesale('registered_agent') / 100 - 1),
    });
    expect(below.statusCode).toBe(400);
    expect(await entriesOf(tenant.organizationId)).toEqual([]);

    await admin.client.post('/portal/prices/registered_agent', {
      _csrf: admin.client.csrf(),
      retailAmount: `${retail}`,
    });
    const updated = await onlyEntry(tenant.organizationId, 'price.updated', []);
    expect(updated).toMatchObject({
      actor_kind: 'member',
      actor_id: admin.memberId,
      client_address: ADDRESS,
      environment: 'test',
      target_id: 'registered_agent',
      before: { type: 'registered_agent', retailCents: null, environment: 'test' },
      after: { type: 'registered_agent', retailCents: retail * 100, environment: 'test' },
    });
    await admin.client.post('/portal/prices/registered_agent/revert', { _csrf: admin.client.csrf() });
    const reverted = await onlyEntry(tenant.organizationId, 'price.reverted', []);
    expect(reverted.before).toMatchObject({ retailCents: retail * 100 });
    expect(reverted.after).toMatchObject({ retailCents: null });
  });

  it('records branding, the domain and its verification, never the domain challenge, and no unchanged save', async () => {
    const tenant = await t.newTenant('Audit Brand Co');
    const dns = fakeDns(t);
    const owner = await memberSession(t, tenant.organizationId, 'owner', { remoteAddress: ADDRESS });
    await switchTo(owner.client, 'live');
    await setProofAge(t, owner.memberId, 0);
    await owner.client.get('/portal/branding');
    const branding = { logoUrl: 'https://brand.example.com/l.png', primaryColor: '#112233', accentColor: '' };
    await owner.client.post('/portal/branding', { _csrf: owner.client.csrf(), ...branding });
    await owner.client.post('/portal/branding', { _csrf: owner.client.csrf(), ...branding });
    const brandingEntry = await onlyEntry(tenant.organizationId, 'branding.updated', []);
    expect(brandingEntry).toMatchObject({
      actor_id: owner.memberId,
      client_address: ADDRESS,
      environment: null,
      before: { logoUrl: null, primaryColor: null },
      after: { logoUrl: branding.logoUrl, primaryColor: '#112233', accentColor: null },
    });

    const domain = `portal-${Date.now().toString(36)}.audit.example.com`;
    await owner.client.post('/portal/branding/domain', { _csrf: owner.client.csrf(), whiteLabelDomain: domain });
    const { rows } = await t.ctx.pool.query<{ white_label_domain_token: string }>(
      'SELECT white_label_domain_token FROM organizations WHERE id = $1',
      [tenant.organizationId],
    );
    const challenge = rows[0]!.white_label_domain_token;
    const requested = await onlyEntry(tenant.organizationId, 'domain.updated', [challenge]);
    expect(requested.after).toEqual({ whiteLabelDomain: domain, status: 'pending', verifiedAt: null, vouched: false });
    dns.publish(`_fcs-domain-verification.${domain}`, `fcs-domain-verification=${challenge}`);
    expect((await owner.client.post('/portal/branding/domain/verify', { _csrf: owner.client.csrf() })).statusCode).toBe(
      303,
    );
    const verified = await onlyEntry(tenant.organizationId, 'domain.verified', [challenge]);
    expect(verified).toMatchObject({ actor_id: owner.memberId, before: { status: 'pending' } });
    expect(verified.after).toMatchObject({ whiteLabelDomain: domain, status: 'verified' });
  });
});

describe('the portal pages of keys and webhook endpoints', () => {
  it('record a key created and revoked, and an endpoint created, as the member at its address, without a secret', async () => {
    const tenant = await t.newTenant('Audit Portal Keys Co');
    const dev = await memberSession(t, tenant.organizationId, 'developer', { remoteAddress: ADDRESS });
    // Test mode: no step-up, and what a developer may do there (PORTAL-10).
    await switchTo(dev.client, 'test');
    await dev.client.get('/portal/keys');
    const created = await followSecret(
      dev.client,
      await dev.client.post('/portal/keys', { _csrf: dev.client.csrf(), name: 'CI deploys' }),
    );
    const secret = /sk_test_[A-Za-z0-9_-]{20,}/.exec(created.body)?.[0] ?? '';
    expect(secret).not.toBe('');
    const made = await onlyEntry(tenant.organizationId, 'api_key.created', [secret]);
    expect(made).toMatchObject({ actor_kind: 'member', actor_id: dev.memberId, client_address: ADDRESS });
    expect(made.environment).toBe('test');

    await dev.client.get('/portal/keys');
    expect(
      (await dev.client.post(`/portal/keys/${made.target_id}/revoke`, { _csrf: dev.client.csrf() })).statusCode,
    ).toBe(303);
    expect((await onlyEntry(tenant.organizationId, 'api_key.revoked', [secret])).actor_id).toBe(dev.memberId);

    await dev.client.get('/portal/webhooks');
    const endpoint = await followSecret(
      dev.client,
      await dev.client.post('/portal/webhooks', {
        _csrf: dev.client.csrf(),
        url: 'https://hooks.example.com/audit',
        eventTypes: 'filing.status_changed',
      }),
    );
    const signing = /whsec_[A-Za-z0-9_-]{20,}/.exec(endpoint.body)?.[0] ?? '';
    expect(signing).not.toBe('');
    expect((await onlyEntry(tenant.organizationId, 'webhook_endpoint.created', [signing])).actor_id).toBe(dev.memberId);
  });
});

describe('changes made through the admin API, the console and the CLI', () => {
  it('records API keys, invitations and wholesale prices of the admin API as the operator token', async () => {
    const tenant = await t.newTenant('Audit Admin Co');
    const created = await t.admin('POST', `/organizations/${tenant.organizationId}/api-keys`, { environment: 'live' });
    expect(created.statusCode).toBe(201);
    const { id, key } = created.json<{ id: string; key: string }>();
    const entry = await onlyEntry(tenant.organizationId, 'api_key.created', [key, sha256(key)]);
    expect(entry).toMatchObject({
      actor_kind: 'operator-token',
      actor_id: null,
      client_address: '127.0.0.1',
      environment: 'live',
      target_id: id,
      before: null,
      after: { id, environment: 'live', revokedAt: null },
    });
    expect((await t.admin('DELETE', `/organizations/${tenant.organizationId}/api-keys/${id}`)).statusCode).toBe(200);
    const revoked = await onlyEntry(tenant.organizationId, 'api_key.revoked', [key, sha256(key)]);
    expect(revoked.before).toMatchObject({ revokedAt: null });
    expect(revoked.after!.revokedAt).toEqual(expect.any(String));
    // Revoking again changes nothing and records nothing.
    await t.admin('DELETE', `/organizations/${tenant.organizationId}/api-keys/${id}`);
    expect(await entriesOf(tenant.organizationId, 'api_key.revoked')).toHaveLength(1);

    const invited = await t.admin('POST', `/organizations/${tenant.organizationId}/invitations`, {
      email: newEmail('ops-invite'),
      role: 'owner',
    });
    const token = new URL(invited.json().invitationUrl).searchParams.get('token')!;
    expect((await onlyEntry(tenant.organizationId, 'invitation.created', [token])).actor_kind).toBe('operator-token');

    const floor = wholesale('registered_agent') / 100 + 5;
    await t.admin('PUT', `/organizations/${tenant.organizationId}/wholesale-prices/registered_agent`, {
      wholesaleAmount: floor,
    });
    const priced = await onlyEntry(tenant.organizationId, 'wholesale_price.updated', []);
    expect(priced.before).toMatchObject({ wholesaleCents: wholesale('registered_agent'), overridden: false });
    expect(priced.after).toMatchObject({ wholesaleCents: floor * 100, overridden: true });
  });

  it('records the console operator with id, e-mail address and address', async () => {
    const tenant = await t.newTenant('Audit Console Co');
    const operator = await newOperator(t.ctx.pool, 'Audit Operator');
    const client = consoleClient(t.app, {}, ADDRESS);
    await consoleSignIn(client, operator.email, operator.password);
    await client.get(`/console/organizations/${tenant.organizationId}`);
    const made = await client.post(`/console/organizations/${tenant.organizationId}/keys`, {
      _csrf: client.csrf(),
      environment: 'test',
    });
    expect(made.statusCode).toBe(201);
    const key = /(sk_test_[A-Za-z0-9_-]+)/.exec(made.body)![1]!;
    const entry = await onlyEntry(tenant.organizationId, 'api_key.created', [key, sha256(key)]);
    expect(entry).toMatchObject({
      actor_kind: 'operator',
      actor_id: operator.id,
      actor_label: operator.email,
      client_address: ADDRESS,
      environment: 'test',
    });
    await client.post(`/console/organizations/${tenant.organizationId}/domain`, {
      _csrf: client.csrf(),
      whiteLabelDomain: `c-${Date.now().toString(36)}.audit.example.com`,
      verified: 'yes',
    });
    const domain = await onlyEntry(tenant.organizationId, 'domain.updated', []);
    expect(domain).toMatchObject({ actor_id: operator.id, after: { status: 'verified', vouched: true } });
  });

  it('records CLI commands as the CLI, without an address and without the key', async () => {
    const tenant = await t.newTenant('Audit CLI Co');
    const made = await runCli(t, ['keys', 'create', tenant.organizationId, '--environment', 'test', '--json']);
    expect(made.code).toBe(0);
    const { id, key } = JSON.parse(made.stdout) as { id: string; key: string };
    const entry = await onlyEntry(tenant.organizationId, 'api_key.created', [key, sha256(key)]);
    expect(entry).toMatchObject({ actor_kind: 'cli', actor_id: null, client_address: null, target_id: id });
    expect(entry.actor_label).toBe(cliActor().label);
  });
});

describe('what the pages of keys and webhook endpoints call', () => {
  it('records webhook endpoint changes given an actor, never a signing secret, and nothing without one', async () => {
    const tenant = await t.newTenant('Audit Hooks Co');
    const tenantOf = { organizationId: tenant.organizationId, environment: 'live' as const };
    const member: AuditActor = {
      kind: 'member',
      id: 'mem_01jaudit0000000000000000000',
      label: 'm@example.com',
      address: ADDRESS,
    };
    const input = { url: 'https://hooks.example.com/in', eventTypes: ['filing.status_changed'] };
    await createEndpoint(t.ctx, tenantOf, input);
    expect(await entriesOf(tenant.organizationId)).toEqual([]);
    const made = await createEndpoint(t.ctx, tenantOf, input, member);
    await updateEndpoint(t.ctx, tenantOf, made.id, { description: 'Filings' }, member);
    const rotated = await rotateSecret(t.ctx, tenantOf, made.id, member);
    await deleteEndpoint(t.ctx, tenantOf, made.id, member);
    const { rows } = await t.ctx.pool.query<{ secret: string; previous_secret: string }>(
      'SELECT secret, previous_secret FROM webhook_endpoints WHERE id = $1',
      [made.id],
    );
    const secrets = [made.secret, rotated.secret, rows[0]!.secret, rows[0]!.previous_secret];
    for (const action of ['created', 'updated', 'secret_rotated', 'deleted'])
      expect(await onlyEntry(tenant.organizationId, `webhook_endpoint.${action}`, secrets)).toMatchObject({
        actor_id: member.id,
        client_address: ADDRESS,
        environment: 'live',
        target_id: made.id,
      });
    const updated = (await entriesOf(tenant.organizationId, 'webhook_endpoint.updated'))[0]!;
    expect(updated.before).toMatchObject({ description: null, url: input.url });
    expect(updated.after).toMatchObject({ description: 'Filings', eventTypes: input.eventTypes });
  });
});

describe('rolling a key', () => {
  it('records the ended key and the new one given an actor, never either secret', async () => {
    const tenant = await t.newTenant('Audit Roll Co');
    const member: AuditActor = {
      kind: 'member',
      id: 'mem_01jaudit0000000000000000001',
      label: 'r@example.com',
      address: ADDRESS,
    };
    const tenantOf = { organizationId: tenant.organizationId, environment: 'test' as const };
    const { key, replacedEndsAt } = await rollKey(t.ctx.pool, tenantOf, tenant.keyIds.test, 2, member);
    const secrets = [key.key, tenant.keys.test, sha256(key.key), sha256(tenant.keys.test)];
    const rolled = await onlyEntry(tenant.organizationId, 'api_key.rolled', secrets);
    expect(rolled).toMatchObject({ target_id: tenant.keyIds.test, before: { expiresAt: null } });
    expect(new Date(rolled.after!.expiresAt as string).toISOString()).toBe(replacedEndsAt);
    expect((await onlyEntry(tenant.organizationId, 'api_key.created', secrets)).target_id).toBe(key.id);
  });
});

describe('the audit_log table', () => {
  it('refuses UPDATE and DELETE', async () => {
    const tenant = await t.newTenant('Audit Table Co');
    await t.admin('POST', `/organizations/${tenant.organizationId}/api-keys`, { environment: 'test' });
    const [entry] = await entriesOf(tenant.organizationId);
    await expect(
      t.ctx.pool.query(`UPDATE audit_log SET action = 'api_key.revoked' WHERE id = $1`, [entry!.id]),
    ).rejects.toThrow(/append-only|permission denied/);
    await expect(t.ctx.pool.query('DELETE FROM audit_log WHERE id = $1', [entry!.id])).rejects.toThrow(
      /append-only|permission denied/,
    );
    expect(await entriesOf(tenant.organizationId)).toHaveLength(1);
    const { rows } = await t.ctx.pool.query(
      `SELECT has_table_privilege('fcs_service', 'audit_log', 'INSERT') AS i,
              has_table_privilege('fcs_service', 'audit_log', 'UPDATE') AS u,
              has_table_privilege('fcs_service', 'audit_log', 'DELETE') AS d`,
    );
    expect(rows[0]).toEqual({ i: true, u: false, d: false });
  });

  it('keeps only the allow-listed fields of a target, whatever the caller passes', async () => {
    const tenant = await t.newTenant('Audit Redaction Co');
    const row = {
      id: 'we_01jabcdefghjkmnpqrstvwxyz0',
      organization_id: tenant.organizationId,
      environment: 'live' as const,
      url: 'https://hooks.example.com/in',
      description: null,
      event_types: ['filing.status_changed'],
      secret: 'sealed:v1:signing-secret-sealed',
      previous_secret: 'whsec_previous_secret_value',
      disabled: false,
      disabled_reason: null,
    };
    await recordAudit(t.ctx.pool, {
      actor: cliActor(),
      organizationId: tenant.organizationId,
      environment: 'live',
      action: 'webhook_endpoint.updated',
      targetId: row.id,
      before: row,
      after: { ...webhookEndpointSnapshot(row), secret: 'whsec_new_secret_value', signingSecret: 'whsec_x_value' },
    });
    const entry = await onlyEntry(tenant.organizationId, 'webhook_endpoint.updated', [
      'signing-secret-sealed',
      'whsec_previous_secret_value',
      'whsec_new_secret_value',
      'whsec_x_value',
    ]);
    expect(entry.after).toEqual({
      id: row.id,
      environment: 'live',
      url: row.url,
      description: null,
      eventTypes: ['filing.status_changed'],
      disabled: false,
      disabledReason: null,
    });
    // A whole row keeps only the allow-listed names it happens to share; its secrets are dropped.
    expect(Object.keys(entry.before!).sort()).toEqual(['description', 'disabled', 'environment', 'id', 'url']);
  });
});

describe('who sees the audit log', () => {
  it('shows owners and admins their organization only, refuses developers and viewers, and exports the filter', async () => {
    const mine = await t.newTenant('Audit Mine Co');
    const theirs = await t.newTenant('Audit Theirs Co');
    await t.admin('POST', `/organizations/${mine.organizationId}/api-keys`, { environment: 'test' });
    await t.admin('POST', `/organizations/${theirs.organizationId}/api-keys`, { environment: 'test' });
    const admin = await memberSession(t, mine.organizationId, 'admin');
    await admin.client.get('/portal/prices');
    await admin.client.post('/portal/prices/registered_agent', {
      _csrf: admin.client.csrf(),
      retailAmount: String(wholesale('registered_agent') / 100 + 3),
    });
    const [myKey, myPrice] = await entriesOf(mine.organizationId);
    const [theirKey] = await entriesOf(theirs.organizationId);

    for (const role of ['owner', 'admin'] as const) {
      const { client } = await memberSession(t, mine.organizationId, role);
      const page = await client.get('/portal/audit-log');
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain(`data-audit="${myKey!.id}"`);
      expect(page.body).toContain(`data-audit="${myPrice!.id}"`);
      expect(page.body).not.toContain(theirKey!.id);
      expect(page.body).toContain('href="/portal/audit-log" aria-current="page"');
    }
    // Another organization's entry as the cursor, or its id as a filter, shows nothing of it.
    const cursorPage = await admin.client.get(`/portal/audit-log?after=${theirKey!.id}`);
    expect(cursorPage.body).not.toContain(theirKey!.id);
    expect(cursorPage.body).not.toContain(`data-audit="${myKey!.id}"`);
    const other = await admin.client.get(`/portal/audit-log?organizationId=${theirs.organizationId}`);
    expect(other.body).not.toContain(theirKey!.id);

    const filtered = await admin.client.get(`/portal/audit-log?action=price.updated&actor=${admin.email}`);
    expect(filtered.body).toContain(`data-audit="${myPrice!.id}"`);
    expect(filtered.body).not.toContain(`data-audit="${myKey!.id}"`);
    // By the member's name, in any case, as well as by e-mail address (AUDIT-6).
    const name = `admin ${admin.memberId.slice(-4)}`.toUpperCase();
    const byName = await admin.client.get(`/portal/audit-log?action=price.updated&actor=${encodeURIComponent(name)}`);
    expect(byName.body).toContain(`data-audit="${myPrice!.id}"`);
    expect(byName.body).not.toContain(`data-audit="${myKey!.id}"`);

    const csv = await admin.client.get(`/portal/audit-log.csv?action=price.updated`);
    expect(csv.statusCode).toBe(200);
    expect(csv.headers['content-type']).toContain('text/csv');
    const lines = csv.body.trimEnd().split('\r\n');
    expect(lines[0]).toBe(
      'id,createdAt,organizationId,environment,actorKind,actorId,actor,clientAddress,action,targetId,before,after',
    );
    expect(lines.slice(1).map((l) => l.split(',')[0])).toEqual([myPrice!.id]);
    const all = await admin.client.get('/portal/audit-log.csv');
    expect(all.body).toContain(myKey!.id);
    expect(all.body).not.toContain(theirKey!.id);
    expect((await admin.client.get('/portal/audit-log.csv?from=not-a-day')).statusCode).toBe(400);

    for (const role of ['developer', 'viewer'] as const) {
      const { client } = await memberSession(t, mine.organizationId, role);
      expect((await client.get('/portal/audit-log')).statusCode).toBe(403);
      expect((await client.get('/portal/audit-log.csv')).statusCode).toBe(403);
      expect((await client.get('/portal/')).body).not.toContain('/portal/audit-log');
    }
  });

  it('shows operators the entries of every organization, filtered by organization, with the CSV', async () => {
    const first = await t.newTenant('Audit First Co');
    const second = await t.newTenant('Audit Second Co');
    await t.admin('POST', `/organizations/${first.organizationId}/api-keys`, { environment: 'test' });
    await t.admin('POST', `/organizations/${second.organizationId}/api-keys`, { environment: 'live' });
    const [a] = await entriesOf(first.organizationId);
    const [b] = await entriesOf(second.organizationId);
    const operator = await newOperator(t.ctx.pool);
    const client = consoleClient(t.app);
    await consoleSignIn(client, operator.email, operator.password);
    const page = await client.get('/console/audit-log');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(`data-audit="${a!.id}"`);
    expect(page.body).toContain(`data-audit="${b!.id}"`);
    const one = await client.get(`/console/audit-log?organizationId=${second.organizationId}`);
    expect(one.body).toContain(`data-audit="${b!.id}"`);
    expect(one.body).not.toContain(`data-audit="${a!.id}"`);
    const csv = await client.get(`/console/audit-log.csv?organizationId=${first.organizationId}`);
    expect(csv.statusCode).toBe(200);
    expect(csv.body).toContain(a!.id);
    expect(csv.body).not.toContain(b!.id);
    expect((await consoleClient(t.app).get('/console/audit-log')).statusCode).toBe(303);
  });
});

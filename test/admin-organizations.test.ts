import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, OPERATOR_TOKEN, type TestApp } from './harness.js';
import { compiledEntry } from './service-process.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe('admin API: organizations and keys', () => {
  it('refuses requests without the operator token', async () => {
    const none = await t.app.inject({ method: 'POST', url: '/admin/v1/organizations', payload: { name: 'X' } });
    expect(none.statusCode).toBe(401);
    expect(none.json()).toMatchObject({ code: 'unauthorized', requestId: expect.any(String) });
    const wrong = await t.app.inject({
      method: 'GET',
      url: '/admin/v1/organizations',
      headers: { authorization: 'Bearer nope' },
    });
    expect(wrong.statusCode).toBe(401);
  });

  it('creates an organization with a live and a test key shown once', async () => {
    const res = await t.admin('POST', '/organizations', { name: 'Acme Payroll' });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body.id).toMatch(/^org_/);
    expect(body.name).toBe('Acme Payroll');
    // ORG-1: `{id, name, apiKeys: {live, test}}`: the keys themselves, usable as they are.
    expect(body.apiKeys.live).toMatch(/^sk_live_[A-Za-z0-9_-]{43}[0-9A-Za-z]{6}$/);
    expect(body.apiKeys.test).toMatch(/^sk_test_[A-Za-z0-9_-]{43}[0-9A-Za-z]{6}$/);
    expect(body.apiKeyIds).toEqual({ live: expect.stringMatching(/^key_/), test: expect.stringMatching(/^key_/) });
    const org = await t.app.inject({
      method: 'GET',
      url: '/test/v1/organization',
      headers: { 'x-api-key': body.apiKeys.test },
    });
    expect(org.statusCode).toBe(200);
    expect(org.json()).toMatchObject({ id: body.id, name: 'Acme Payroll', environment: 'test' });

    const got = await t.admin('GET', `/organizations/${body.id}`);
    expect(got.statusCode).toBe(200);
    expect(got.body).not.toContain(body.apiKeys.live);
    expect(got.json().apiKeys).toHaveLength(2);
    expect(
      got
        .json()
        .apiKeys.map((k: { id: string }) => k.id)
        .sort(),
    ).toEqual([body.apiKeyIds.live, body.apiKeyIds.test].sort());
    expect(got.json().balances).toEqual({ live: 0, test: 0 });
  });

  it('takes an optional technical contact email at creation and shows it to the operator and the organization', async () => {
    const res = await t.admin('POST', '/organizations', {
      name: 'Contact Co',
      contactEmail: 'webhooks@contact-co.example',
    });
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json();
    expect(body.contactEmail).toBe('webhooks@contact-co.example');
    expect((await t.admin('GET', `/organizations/${body.id}`)).json().contactEmail).toBe('webhooks@contact-co.example');
    const org = await t.app.inject({
      method: 'GET',
      url: '/test/v1/organization',
      headers: { 'x-api-key': body.apiKeys.test },
    });
    expect(org.json().contactEmail).toBe('webhooks@contact-co.example');

    const none = (await t.admin('POST', '/organizations', { name: 'No Contact Co' })).json();
    expect(none.contactEmail).toBeNull();
    expect((await t.admin('GET', `/organizations/${none.id}`)).json().contactEmail).toBeNull();

    const bad = await t.admin('POST', '/organizations', {
      name: 'Bad Contact Co',
      contactEmail: 'webhooks-at-example',
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors.map((e: { field: string }) => e.field)).toContain('contactEmail');
  });

  it('validates the name', async () => {
    const res = await t.admin('POST', '/organizations', { name: '' });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors).toEqual([{ field: 'name', message: expect.stringContaining('1') }]);
  });

  it('creates and revokes keys; a revoked key is refused at once', async () => {
    const org = (await t.admin('POST', '/organizations', { name: 'Keys Co' })).json();
    const created = await t.admin('POST', `/organizations/${org.id}/api-keys`, { environment: 'test' });
    expect(created.statusCode).toBe(201);
    const key = created.json();
    const ok = await t.app.inject({ method: 'GET', url: '/test/v1/nothing-here', headers: { 'x-api-key': key.key } });
    expect(ok.statusCode).toBe(404);
    const revoked = await t.admin('DELETE', `/organizations/${org.id}/api-keys/${key.id}`);
    expect(revoked.statusCode).toBe(200);
    expect(revoked.json().revokedAt).not.toBeNull();
    const again = await t.admin('DELETE', `/organizations/${org.id}/api-keys/key_missing`);
    expect(again.statusCode).toBe(404);
    expect((await t.admin('POST', `/organizations/org_missing/api-keys`, { environment: 'live' })).statusCode).toBe(
      404,
    );
    expect((await t.admin('POST', `/organizations/${org.id}/api-keys`, { environment: 'staging' })).statusCode).toBe(
      400,
    );
  });
});

describe('errors', () => {
  it('unknown routes answer 404 in the error shape', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/nowhere' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ code: 'not_found', message: expect.any(String), requestId: expect.any(String) });
  });

  it('malformed JSON is a 400 and a non-JSON body a 415, never a 500', async () => {
    const headers = { authorization: 'Bearer test-operator-token-0123456789abcdef' };
    const bad = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/organizations',
      headers: { ...headers, 'content-type': 'application/json' },
      payload: '{"name": ',
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe('bad_request');
    const text = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/organizations',
      headers: { ...headers, 'content-type': 'text/plain' },
      payload: 'name=x',
    });
    expect(text.statusCode).toBe(415);
    expect(text.json().code).toBe('unsupported_media_type');
  });
});

describe('CLI: org create, keys create, keys revoke', () => {
  // The first run goes the way `npm run cli` goes (tsx); the others run the suite's compiled CLI (test/cli-runner.ts).
  const cliWith =
    (command: string, ...first: string[]) =>
    async (...args: string[]) => {
      const env = {
        ...process.env,
        DATABASE_URL: t.ctx.config.databaseUrl!,
        OPERATOR_TOKEN,
        FILE_URL_SECRET: 'cli-test-file-url-secret-0123',
        DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'fcs-cli-')),
        LOG_LEVEL: 'silent',
      };
      const { stdout } = await promisify(execFile)(command, [...first, ...args], { env });
      return stdout;
    };
  const tsxCli = cliWith(path.resolve('node_modules/.bin/tsx'), 'src/cli.ts');
  const cli = cliWith(process.execPath, compiledEntry('src/cli.ts'));
  const orgOf = (key: string) =>
    t.app.inject({
      method: 'GET',
      url: key.startsWith('sk_live_') ? '/v1/organization' : '/test/v1/organization',
      headers: { 'x-api-key': key },
    });

  it('org create --json answers like the admin API; keys create and revoke (by --key or as the argument) act at once', async () => {
    const created = JSON.parse(await tsxCli('org', 'create', '--name', 'Acme', '--json'));
    expect(created).toEqual({
      id: expect.stringMatching(/^org_/),
      name: 'Acme',
      contactEmail: null,
      apiKeys: { live: expect.stringMatching(/^sk_live_/), test: expect.stringMatching(/^sk_test_/) },
      apiKeyIds: { live: expect.stringMatching(/^key_/), test: expect.stringMatching(/^key_/) },
    });
    expect((await orgOf(created.apiKeys.live)).json()).toMatchObject({ id: created.id, environment: 'live' });
    const withContact = JSON.parse(
      await cli('org', 'create', '--name', 'Acme Alerts', '--contact-email', 'alerts@acme.example', '--json'),
    );
    expect(withContact).toMatchObject({ name: 'Acme Alerts', contactEmail: 'alerts@acme.example' });
    expect((await t.admin('GET', `/organizations/${withContact.id}`)).json().contactEmail).toBe('alerts@acme.example');
    await expect(
      cli('org', 'create', '--name', 'Acme Typo', '--contact-email', 'alerts.acme.example'),
    ).rejects.toMatchObject({ stderr: expect.stringContaining('contactEmail') });
    // ORG-1, LIM-2: the admin API's name bounds hold without its schema too.
    await expect(cli('org', 'create', '--name', 'N'.repeat(201))).rejects.toMatchObject({
      stderr: expect.stringContaining('name: must be at most 200 characters'),
    });
    await expect(cli('org', 'create', '--name', '   ')).rejects.toMatchObject({
      stderr: expect.stringContaining('name: must not be blank'),
    });
    const text = await cli('org', 'create', '--name', 'Acme Text');
    expect(text).toMatch(/sk_live_\S+/);
    expect(text).toMatch(/sk_test_\S+/);

    const key = JSON.parse(await cli('keys', 'create', '--org', created.id, '--environment', 'test', '--json'));
    expect(key).toMatchObject({
      id: expect.stringMatching(/^key_/),
      environment: 'test',
      key: expect.stringMatching(/^sk_test_/),
    });
    expect((await orgOf(key.key)).statusCode).toBe(200);
    const revoked = JSON.parse(await cli('keys', 'revoke', '--org', created.id, '--key', key.id, '--json'));
    expect(revoked).toMatchObject({ id: key.id, revokedAt: expect.any(String) });
    expect((await orgOf(key.key)).statusCode).toBe(401);

    // The key id alone is enough: it names its organization.
    JSON.parse(await cli('keys', 'revoke', created.apiKeyIds.test, '--json'));
    expect((await orgOf(created.apiKeys.test)).statusCode).toBe(401);
    expect((await orgOf(created.apiKeys.live)).statusCode).toBe(200);
  }, 120_000);
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './harness.js';

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
    const wrong = await t.app.inject({ method: 'GET', url: '/admin/v1/organizations', headers: { authorization: 'Bearer nope' } });
    expect(wrong.statusCode).toBe(401);
  });

  it('creates an organization with a live and a test key shown once', async () => {
    const res = await t.admin('POST', '/organizations', { name: 'Acme Payroll' });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body.id).toMatch(/^org_/);
    expect(body.name).toBe('Acme Payroll');
    expect(body.apiKeys.live.key).toMatch(/^sk_live_[A-Za-z0-9_-]{43}$/);
    expect(body.apiKeys.test.key).toMatch(/^sk_test_[A-Za-z0-9_-]{43}$/);

    const got = await t.admin('GET', `/organizations/${body.id}`);
    expect(got.statusCode).toBe(200);
    expect(got.body).not.toContain(body.apiKeys.live.key);
    expect(got.json().apiKeys).toHaveLength(2);
    expect(got.json().balances).toEqual({ live: 0, test: 0 });
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
    expect((await t.admin('POST', `/organizations/org_missing/api-keys`, { environment: 'live' })).statusCode).toBe(404);
    expect((await t.admin('POST', `/organizations/${org.id}/api-keys`, { environment: 'staging' })).statusCode).toBe(400);
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
    const bad = await t.app.inject({ method: 'POST', url: '/admin/v1/organizations', headers: { ...headers, 'content-type': 'application/json' }, payload: '{"name": ' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe('bad_request');
    const text = await t.app.inject({ method: 'POST', url: '/admin/v1/organizations', headers: { ...headers, 'content-type': 'text/plain' }, payload: 'name=x' });
    expect(text.statusCode).toBe(415);
    expect(text.json().code).toBe('unsupported_media_type');
  });
});

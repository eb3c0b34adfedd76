import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loggerOptions } from '../src/lib/logger.js';
import { createTestApp, type TestApp } from './harness.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe('API-key authentication', () => {
  it('answers GET /organization with the balance of the key environment', async () => {
    const tenant = await t.newTenant('Auth Co');
    const res = await tenant.api('GET', '/organization');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: tenant.organizationId, name: 'Auth Co', environment: 'test', balance: 0 });
    expect((await tenant.api('GET', '/organization', undefined, { env: 'live' })).json().environment).toBe('live');
  });

  it('refuses a missing, malformed or unknown key with 401', async () => {
    for (const headers of [{}, { 'x-api-key': 'nope' }, { 'x-api-key': `sk_test_${'a'.repeat(43)}` }]) {
      const res = await t.app.inject({ method: 'GET', url: '/test/v1/organization', headers });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toMatchObject({
        code: 'unauthorized',
        message: expect.any(String),
        requestId: expect.any(String),
      });
    }
  });

  it('refuses a key at the other environment base address, naming the right one', async () => {
    const tenant = await t.newTenant();
    const liveAtTest = await t.app.inject({
      method: 'GET',
      url: '/test/v1/organization',
      headers: { 'x-api-key': tenant.keys.live },
    });
    expect(liveAtTest.statusCode).toBe(401);
    expect(liveAtTest.json().message).toContain(t.ctx.config.liveBaseUrl);
    const testAtLive = await t.app.inject({
      method: 'GET',
      url: '/v1/organization',
      headers: { 'x-api-key': tenant.keys.test },
    });
    expect(testAtLive.statusCode).toBe(401);
    expect(testAtLive.json().message).toContain(t.ctx.config.testBaseUrl);
  });

  it('never writes an API key to the logs', async () => {
    const tenant = await t.newTenant();
    await tenant.api('GET', '/organization');
    await t.app.inject({ method: 'GET', url: '/v1/organization', headers: { 'x-api-key': tenant.keys.test } });
    const all = t.logs.join('');
    expect(all.length).toBeGreaterThan(0);
    expect(all).not.toContain(tenant.keys.test);
    expect(all).not.toContain(tenant.keys.live);
  });

  it('answers an id slot holding a pasted key or webhook secret without echoing it (AUTH-11)', async () => {
    const tenant = await t.newTenant();
    const secret = `whsec_${'s'.repeat(43)}`;
    for (const pasted of [tenant.keys.live, secret]) {
      const res = await tenant.api('GET', `/users/${pasted}`);
      expect(res.statusCode).toBe(404);
      expect(res.body).not.toContain(pasted);
      expect(res.json().message).toContain('[redacted]');
    }
  });

  it("scrubs secrets from a logged error's stack as well as its message", async () => {
    const tenant = await t.newTenant();
    const lines: string[] = [];
    const log = pino(
      loggerOptions('info'),
      new Writable({
        write: (chunk, _enc, cb) => {
          lines.push(String(chunk));
          cb();
        },
      }),
    );
    // What the error handler logs for a 5xx: an unexpected error whose text happens to carry a credential.
    log.error(
      { err: new Error(`upstream refused key ${tenant.keys.test} and secret whsec_${'s'.repeat(43)}`) },
      'request failed',
    );
    const logged = JSON.parse(lines.join(''));
    expect(logged.err.stack).toContain('sk_test_[redacted]');
    expect(lines.join('')).not.toContain(tenant.keys.test);
    expect(lines.join('')).not.toContain('s'.repeat(43));
  });
});

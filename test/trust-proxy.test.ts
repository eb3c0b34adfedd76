import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleClient, newOperator, signIn } from './console-helpers.js';
import { setVerifiedDomain } from './domain-helpers.js';
import { createTestApp, type TestApp } from './harness.js';

// SEC-8, LIM-8: behind proxies, the client address is the first untrusted hop from the right of X-Forwarded-For,
// and X-Forwarded-Host/-Proto count only when the socket's peer is a trusted proxy.

// Small per-address limits in a window of an hour, so no test straddles two windows.
const LIMITS = {
  RATE_LIMIT_WINDOW_SECONDS: '3600',
  RATE_LIMIT_ADMIN_AUTH_FAILURES: '2',
  RATE_LIMIT_SIGN_IN_ATTEMPTS: '2',
  RATE_LIMIT_SYNC_MS: '600000',
};

/** A wrong operator token sent from `remoteAddress` with `forwardedFor` as X-Forwarded-For. */
function wrongToken(t: TestApp, remoteAddress: string, forwardedFor?: string) {
  return t.app.inject({
    method: 'GET',
    url: '/admin/v1/organizations',
    remoteAddress,
    headers: {
      authorization: 'Bearer not-the-operator-token-0123456789abcdef',
      ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}),
    },
  });
}

describe('TRUST_PROXY as the proxies’ addresses', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ ...LIMITS, TRUST_PROXY: '10.0.0.0/8' });
  });
  afterAll(() => t.close());

  it('throttles failed operator tokens under the address the proxy saw, whatever the client wrote before it', async () => {
    // The client writes any X-Forwarded-For it likes; the proxy appends the address it saw.
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++)
      statuses.push((await wrongToken(t, '10.1.2.3', `198.51.100.${i}, 203.0.113.7`)).statusCode);
    expect(statuses).toEqual([401, 401, 429, 429, 429]);
    // Another client behind the same proxy is not affected.
    expect((await wrongToken(t, '10.1.2.3', '203.0.113.8')).statusCode).toBe(401);
  });

  it('ignores X-Forwarded-For from a peer that is not a trusted proxy: it is counted under its own address', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await wrongToken(t, '192.0.2.50', `198.51.100.${i}`)).statusCode);
    expect(statuses).toEqual([401, 401, 429, 429]);
  });

  it('throttles console sign-ins under the address the proxy saw, whatever the client wrote before it', async () => {
    const op = await newOperator(t.ctx.pool);
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      const client = consoleClient(t.app, { 'x-forwarded-for': `198.51.100.${i + 10}, 203.0.113.20` }, '10.9.9.9');
      statuses.push((await signIn(client, op.email, 'wrong password guess')).statusCode);
    }
    expect(statuses).toEqual([401, 401, 429]);
    // The right password from the throttled address is refused too; from another client it works.
    const throttled = consoleClient(t.app, { 'x-forwarded-for': '198.51.100.99, 203.0.113.20' }, '10.9.9.9');
    expect((await signIn(throttled, op.email, op.password)).statusCode).toBe(429);
    const elsewhere = consoleClient(t.app, { 'x-forwarded-for': '203.0.113.21' }, '10.9.9.9');
    expect((await signIn(elsewhere, op.email, op.password)).statusCode).toBe(303);
  }, 120_000);

  it('takes X-Forwarded-Host and X-Forwarded-Proto only from a trusted proxy', async () => {
    const tenant = await t.newTenant('Proxied Co');
    await setVerifiedDomain(t, tenant, 'portal.proxied-co.test');
    const forwarded = {
      host: 'internal-lb:3000',
      'x-forwarded-host': 'portal.proxied-co.test',
      'x-forwarded-proto': 'https',
    };
    const viaProxy = await t.app.inject({ method: 'GET', url: '/', remoteAddress: '10.0.0.5', headers: forwarded });
    expect(viaProxy.statusCode).toBe(401); // the white-label dashboard asks to sign in
    expect(viaProxy.body).toContain('Proxied Co');
    const direct = await t.app.inject({ method: 'GET', url: '/', remoteAddress: '192.0.2.9', headers: forwarded });
    expect(direct.statusCode).toBe(404);
    expect(direct.headers['strict-transport-security']).toBeUndefined();
    // Nor can a direct client reach the console through a white-label host by naming ours in the header.
    const consolePage = await t.app.inject({
      method: 'GET',
      url: '/console/login',
      remoteAddress: '192.0.2.9',
      headers: { host: 'portal.proxied-co.test', 'x-forwarded-host': 'localhost' },
    });
    expect(consolePage.statusCode).toBe(404);
  });
});

describe('TRUST_PROXY as a hop count', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ ...LIMITS, TRUST_PROXY: '1' });
  });
  afterAll(() => t.close());

  it('takes the entry the nearest proxy appended, not the ones the client wrote before it', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++)
      statuses.push((await wrongToken(t, '10.1.2.3', `198.51.100.${i}, 203.0.113.7`)).statusCode);
    expect(statuses).toEqual([401, 401, 429, 429]);
    expect((await wrongToken(t, '10.1.2.3', '198.51.100.0, 203.0.113.8')).statusCode).toBe(401);
  });
});

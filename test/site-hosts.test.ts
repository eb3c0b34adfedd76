import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleClient, newOperator, signIn } from './console-helpers.js';
import { setVerifiedDomain } from './domain-helpers.js';
import { createTestApp, OPERATOR_TOKEN, type TestApp } from './harness.js';

// SEC-7, DASH-1: each part of the service answers only on the hosts of its configured base address; the dashboard
// also on verified white-label domains; anywhere else the same 404 as an unknown path.

const LIVE = 'api.filings.test';
const SANDBOX = 'sandbox.filings.test';
const CONSOLE = 'ops.filings.test';
const DASHBOARD = 'app.filings.test';
const PORTAL = 'portal.customer-co.test';
const PARTNERS = 'partners.filings.test';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({
    LIVE_BASE_URL: `https://${LIVE}/v1`,
    TEST_BASE_URL: `https://${SANDBOX}/test/v1`,
    CONSOLE_BASE_URL: `https://${CONSOLE}/console`,
    DASHBOARD_BASE_URL: `https://${DASHBOARD}/dashboard`,
    PORTAL_BASE_URL: `https://${PARTNERS}/portal`,
  });
  await setVerifiedDomain(t, await t.newTenant('Customer Co'), PORTAL);
});
afterAll(() => t.close());

const get = (host: string, url: string, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'GET', url, headers: { host, ...headers } });

/** The app's 404 for a path no route serves: the one error body, no cookie. */
function expectPlainNotFound(
  res: { statusCode: number; body: string; headers: Record<string, unknown> },
  what: string,
) {
  expect(res.statusCode, what).toBe(404);
  expect(JSON.parse(res.body), what).toMatchObject({ code: 'not_found' });
  expect(res.headers['set-cookie'], what).toBeUndefined();
}

describe('the console', () => {
  it('answers only on the host of CONSOLE_BASE_URL, with any port', async () => {
    expect((await get(CONSOLE, '/console/login')).statusCode).toBe(200);
    expect((await get(`${CONSOLE}:8443`, '/console/login')).statusCode).toBe(200);
    for (const host of [PORTAL, LIVE, DASHBOARD, 'localhost', 'unknown.example']) {
      expectPlainNotFound(await get(host, '/console/login'), host);
      expectPlainNotFound(await get(host, '/console/queue'), `${host} queue`);
      // An unknown console path is no console page either.
      expectPlainNotFound(await get(host, '/console/no-such-page'), `${host} unknown page`);
    }
  });

  it('gives an operator signing in on a white-label domain no cookie for that domain', async () => {
    const op = await newOperator(t.ctx.pool);
    const onPortal = consoleClient(t.app, { host: PORTAL });
    const res = await onPortal.post('/console/login', {
      email: op.email,
      password: op.password,
      next: '/console/queue',
    });
    expectPlainNotFound(res, 'POST /console/login');
    // The same operator signs in on the console's own host.
    const own = consoleClient(t.app, { host: CONSOLE });
    expect((await signIn(own, op.email, op.password)).statusCode).toBe(303);
    expect(own.cookies.has('fcs_console')).toBe(true);
  }, 60_000);
});

describe('the partner portal', () => {
  it('answers only on the host of PORTAL_BASE_URL, with Secure cookies there (PORTAL-1)', async () => {
    const own = await get(PARTNERS, '/portal/sign-in');
    expect(own.statusCode).toBe(200);
    expect(String(own.headers['set-cookie'])).toMatch(/fcs_portal_form=.*Secure/i);
    expect((await get(PARTNERS, '/portal/')).headers.location).toBe('/portal/sign-in');
    for (const host of [PORTAL, CONSOLE, LIVE, DASHBOARD, 'localhost', 'unknown.example']) {
      expectPlainNotFound(await get(host, '/portal/sign-in'), host);
      expectPlainNotFound(await get(host, '/portal/'), `${host} home`);
      expectPlainNotFound(await get(host, '/portal/no-such-page'), `${host} unknown page`);
    }
    expectPlainNotFound(await get(PARTNERS, '/console/login'), 'the console on the portal host');
  });
});

describe('the admin API, /metrics, /docs and the OpenAPI documents', () => {
  const auth = { authorization: `Bearer ${OPERATOR_TOKEN}` };

  it('answer on the API hosts only', async () => {
    for (const host of [LIVE, SANDBOX]) {
      expect((await get(host, '/admin/v1/organizations', auth)).statusCode, host).toBe(200);
      expect((await get(host, '/metrics', auth)).statusCode, host).toBe(200);
      expect((await get(host, '/docs/json')).statusCode, host).toBe(200);
      expect((await get(host, '/docs/')).statusCode, host).toBe(200);
    }
    for (const host of [PORTAL, CONSOLE, DASHBOARD, 'unknown.example']) {
      expectPlainNotFound(await get(host, '/admin/v1/organizations', auth), `${host} admin`);
      expectPlainNotFound(await get(host, '/metrics', auth), `${host} metrics`);
      expectPlainNotFound(await get(host, '/docs/json'), `${host} docs`);
      expectPlainNotFound(await get(host, '/docs/'), `${host} docs page`);
    }
  });

  it('serve each environment’s document on its own base address’s host', async () => {
    expect((await get(LIVE, '/v1/openapi.json')).statusCode).toBe(200);
    expect((await get(SANDBOX, '/test/v1/openapi.json')).statusCode).toBe(200);
    expectPlainNotFound(await get(SANDBOX, '/v1/openapi.json'), 'live document on the sandbox host');
    expectPlainNotFound(await get(LIVE, '/test/v1/openapi.json'), 'test document on the live host');
    expectPlainNotFound(await get(PORTAL, '/v1/openapi.json'), 'live document on a white-label host');
  });

  it('check no operator token on another host, so failures there are not counted either', async () => {
    const wrong = { authorization: 'Bearer wrong-token-0123456789abcdef0123456789' };
    const res = await get(PORTAL, '/admin/v1/organizations', wrong);
    expectPlainNotFound(res, 'wrong token on a white-label host');
    expect(res.headers['ratelimit-limit']).toBeUndefined();
  });
});

describe('the dashboard', () => {
  it('answers at its path on the host of DASHBOARD_BASE_URL and at the root of verified white-label hosts only', async () => {
    expect((await get(DASHBOARD, '/dashboard/')).statusCode).toBe(401); // "please sign in again"
    expect((await get(PORTAL, '/')).statusCode).toBe(401);
    for (const host of [PORTAL, LIVE, CONSOLE, 'unknown.example']) {
      expectPlainNotFound(await get(host, '/dashboard/'), `${host} /dashboard/`);
    }
    for (const host of [LIVE, CONSOLE, DASHBOARD, 'unknown.example']) {
      expectPlainNotFound(await get(host, '/'), `${host} /`);
    }
  });
});

describe('with the default base addresses (all on localhost)', () => {
  let local: TestApp;
  beforeAll(async () => {
    local = await createTestApp();
  });
  afterAll(() => local.close());

  it('serves everything on the loopback names with any port, and nothing of ours on other hosts', async () => {
    const auth = { authorization: `Bearer ${OPERATOR_TOKEN}` };
    for (const host of ['localhost', 'localhost:3000', '127.0.0.1:8080', '[::1]:3000']) {
      const at = (url: string, headers: Record<string, string> = {}) =>
        local.app.inject({ method: 'GET', url, headers: { host, ...headers } });
      expect((await at('/console/login')).statusCode, host).toBe(200);
      expect((await at('/admin/v1/organizations', auth)).statusCode, host).toBe(200);
      expect((await at('/metrics', auth)).statusCode, host).toBe(200);
      expect((await at('/test/v1/openapi.json')).statusCode, host).toBe(200);
      expect((await at('/dashboard/')).statusCode, host).toBe(401);
    }
    for (const url of ['/console/login', '/admin/v1/organizations', '/metrics', '/docs/json', '/dashboard/']) {
      const res = await local.app.inject({ method: 'GET', url, headers: { host: 'example.com', ...auth } });
      expect(res.statusCode, url).toBe(404);
    }
  });
});

import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  fakeDns,
  holdDomainNotifications,
  requestDomain,
  setVerifiedDomain,
  settleDomainNotifications,
  verifyDomain,
} from './domain-helpers.js';
import { createTestApp, type TestApp } from './harness.js';

// ORG-6, DASH-1: the verified white-label domains are kept in process memory, so a host that is neither ours nor a
// verified domain is answered without a database round trip; any change reaches every process through NOTIFY.

const PORTAL = 'portal.memory-co.test';

let t: TestApp;
let dns: ReturnType<typeof fakeDns>;
let organizationId: string;
beforeAll(async () => {
  t = await createTestApp();
  dns = fakeDns(t);
  const tenant = await t.newTenant('Memory Co');
  organizationId = tenant.organizationId;
  await setVerifiedDomain(t, tenant, PORTAL, dns);
});
afterAll(() => t.close());

const onHost = (host: string, url = '/') => t.app.inject({ method: 'GET', url, headers: { host } });

/**
 * Runs `fn` and returns the database statements and connections the app's pool served meanwhile. The rate limiter's
 * timer syncs its counters now and then, whatever the requests: that statement, and the connection the pool takes
 * for it, are left out.
 */
async function databaseUse(fn: () => Promise<unknown>): Promise<{ queries: number; connections: number }> {
  const pool = t.ctx.pool as any;
  const { query, connect } = pool;
  const use = { queries: 0, connections: 0 };
  let syncing = false;
  pool.query = (...args: unknown[]) => {
    const q = args[0] as string | { text: string };
    syncing = /rate_limit_counters/.test(typeof q === 'string' ? q : q.text);
    if (!syncing) use.queries += 1;
    try {
      // pg-pool asks this.connect for the statement's connection before query returns.
      return query.apply(pool, args);
    } finally {
      syncing = false;
    }
  };
  pool.connect = (...args: unknown[]) => {
    if (!syncing) use.connections += 1;
    return connect.apply(pool, args);
  };
  try {
    await fn();
  } finally {
    pool.query = query;
    pool.connect = connect;
  }
  return use;
}

/** Asks `host` until it answers `status` or `withinMs` pass; returns the ms it took, or Infinity. */
async function msUntil(host: string, status: number, withinMs: number): Promise<number> {
  const start = Date.now();
  while (Date.now() - start <= withinMs) {
    if ((await onHost(host)).statusCode === status) return Date.now() - start;
    await new Promise((r) => setTimeout(r, 20));
  }
  return Infinity;
}

it('answers a host that is neither ours nor a verified domain without a database round trip', async () => {
  // The verified domain is served (the list is read once, then kept); the verification's own notification is heard
  // first, or it could drop the list inside the measured window and the next request would read it again.
  await settleDomainNotifications(t);
  expect((await onHost(PORTAL)).statusCode).toBe(401);
  const strangers = await databaseUse(async () => {
    for (const host of ['stranger.example', 'portal.memory-co.test.evil.example', 'another-stranger.example']) {
      for (const url of [
        '/',
        '/auth/some-token-0123456789012345678901234567890',
        '/companies',
        '/assets/dashboard.css',
      ]) {
        expect((await onHost(host, url)).statusCode, `${host}${url}`).toBe(404);
      }
    }
  });
  expect(strangers).toEqual({ queries: 0, connections: 0 });
  // The verified domain's own requests still read its organization.
  const portal = await databaseUse(() => onHost(PORTAL));
  expect(portal.queries).toBeGreaterThan(0);
});

it('hears a change made by any writer (another process, a statement by hand) within a second', async () => {
  expect((await onHost(PORTAL)).statusCode).toBe(401);
  await t.ctx.pool.query('UPDATE organizations SET white_label_domain_verified_at = NULL WHERE id = $1', [
    organizationId,
  ]);
  expect(await msUntil(PORTAL, 404, 1000)).toBeLessThanOrEqual(1000);
  await t.ctx.pool.query('UPDATE organizations SET white_label_domain_verified_at = now() WHERE id = $1', [
    organizationId,
  ]);
  expect(await msUntil(PORTAL, 401, 1000)).toBeLessThanOrEqual(1000);
});

it('sees a domain verified or removed through the API at its very next request, before any notification', async () => {
  const tenant = await t.newTenant('Leaving Co');
  const release = holdDomainNotifications(t);
  try {
    await requestDomain(tenant, 'portal.leaving-co.test', dns);
    // Pending: not served (and the list of verified domains is read again).
    expect((await onHost('portal.leaving-co.test')).statusCode).toBe(404);
    await verifyDomain(tenant);
    expect((await onHost('portal.leaving-co.test')).statusCode).toBe(401);
    const res = await tenant.api('PATCH', '/organization', { whiteLabelDomain: null }, { env: 'live' });
    expect(res.statusCode).toBe(200);
    expect((await onHost('portal.leaving-co.test')).statusCode).toBe(404);
  } finally {
    release();
  }
});

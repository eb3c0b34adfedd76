import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { createPool } from '../src/lib/db.js';
import { createTestApp, OPERATOR_TOKEN, type TestApp, type TestTenant } from './harness.js';

// Small limits, and a window of an hour so that no test straddles two windows.
const LIMITS = {
  RATE_LIMIT_WINDOW_SECONDS: '3600',
  RATE_LIMIT_API_REQUESTS: '3',
  RATE_LIMIT_ADMIN_REQUESTS: '4',
  RATE_LIMIT_ADMIN_AUTH_FAILURES: '2',
  RATE_LIMIT_SIGN_IN_ATTEMPTS: '2',
  RATE_LIMIT_MAGIC_LINK_OPENS: '2',
  RATE_LIMIT_SYNC_MS: '600000',
  TRUST_PROXY: 'loopback',
};

let t: TestApp;
let tenant: TestTenant;
beforeAll(async () => {
  t = await createTestApp(LIMITS);
  tenant = await t.newTenant('Busy Co');
});
afterAll(() => t.close());

const fromAddress = (ip: string) => ({ 'x-forwarded-for': ip });
const get = (app: FastifyInstance, key: string) =>
  app.inject({ method: 'GET', url: '/test/v1/organization', headers: { 'x-api-key': key } });

describe('per API key on the integrator API', () => {
  it('answers with RateLimit headers, then 429 with Retry-After and the error body once the key used its requests', async () => {
    const key = (await t.newTenant('Counted Co')).keys.test;
    const remaining: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await get(t.app, key);
      expect(res.statusCode).toBe(200);
      expect(res.headers['ratelimit-limit']).toBe('3');
      expect(Number(res.headers['ratelimit-reset'])).toBeGreaterThan(0);
      expect(Number(res.headers['ratelimit-reset'])).toBeLessThanOrEqual(3600);
      remaining.push(String(res.headers['ratelimit-remaining']));
    }
    expect(remaining).toEqual(['2', '1', '0']);
    const refused = await get(t.app, key);
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toMatchObject({
      code: 'rate_limited',
      requestId: expect.any(String),
      message: expect.stringContaining('API key'),
    });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.headers['ratelimit-remaining']).toBe('0');
  });

  it('counts each key on its own: another key of the same organization is not affected', async () => {
    const busy = await t.newTenant('Two Keys Co');
    for (let i = 0; i < 4; i++) await get(t.app, busy.keys.test);
    expect((await get(t.app, busy.keys.test)).statusCode).toBe(429);
    const other = await t.admin('POST', `/organizations/${busy.organizationId}/api-keys`, { environment: 'test' });
    expect((await get(t.app, other.json().key)).statusCode).toBe(200);
    expect((await busy.api('GET', '/organization', undefined, { env: 'live' })).statusCode).toBe(200);
  });

  it('counts in process memory: requests run no statement on the counters; one statement shares every key at the next sync', async () => {
    const statements: string[] = [];
    const query = t.ctx.pool.query.bind(t.ctx.pool);
    (t.ctx.pool as any).query = (...args: any[]) => {
      statements.push(String(typeof args[0] === 'string' ? args[0] : args[0]?.text));
      return (query as any)(...args);
    };
    try {
      const a = await t.newTenant('Sync A');
      const b = await t.newTenant('Sync B');
      statements.length = 0;
      await get(t.app, a.keys.test);
      await get(t.app, b.keys.test);
      expect(statements.filter((s) => s.includes('rate_limit_counters'))).toEqual([]);
      await t.app.rateLimitCounters.sync();
      expect(statements.filter((s) => s.includes('INSERT INTO rate_limit_counters'))).toHaveLength(1);
    } finally {
      (t.ctx.pool as any).query = query;
    }
    const { rows } = await t.ctx.pool.query(`SELECT bucket, hits FROM rate_limit_counters WHERE bucket LIKE 'api:%'`);
    expect(rows.length).toBeGreaterThanOrEqual(2);
    // Only the key's id is stored, never the key.
    expect(JSON.stringify(rows)).not.toContain(tenant.keys.test.slice(8, 20));
  });

  it('is shared by every process of a deployment through PostgreSQL', async () => {
    // A second process of the same deployment: its own app and pool on the same database.
    const pool = createPool(t.ctx.config.databaseUrl!);
    const second = await buildApp({ ...t.ctx, pool }, { logger: false });
    await second.ready();
    try {
      const shared = await t.newTenant('Shared Co');
      expect((await get(t.app, shared.keys.test)).statusCode).toBe(200);
      expect((await get(t.app, shared.keys.test)).statusCode).toBe(200);
      await t.app.rateLimitCounters.sync();
      // The second process has not heard of the key yet: it admits one request and learns the total at its sync.
      expect((await get(second, shared.keys.test)).statusCode).toBe(200);
      await second.rateLimitCounters.sync();
      const refused = await get(second, shared.keys.test);
      expect(refused.statusCode).toBe(429);
      // The first process has not synced since the second's request: within the documented tolerance it admits one
      // more, and it learns the total at its next sync.
      expect((await get(t.app, shared.keys.test)).statusCode).toBe(200);
      await t.app.rateLimitCounters.sync();
      expect((await get(t.app, shared.keys.test)).statusCode).toBe(429);
    } finally {
      await second.close();
      await pool.end();
    }
  });
});

describe('per client address on unauthenticated routes', () => {
  it('limits console sign-in attempts per address (429 page with Retry-After), other addresses unaffected', async () => {
    const attempt = (ip: string) =>
      t.app.inject({
        method: 'POST',
        url: '/console/login',
        headers: { ...fromAddress(ip), 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'email=a%40b.example&password=x',
      });
    expect((await attempt('198.51.100.7')).statusCode).not.toBe(429);
    expect((await attempt('198.51.100.7')).statusCode).not.toBe(429);
    const refused = await attempt('198.51.100.7');
    expect(refused.statusCode).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.headers['ratelimit-limit']).toBe('2');
    expect(refused.headers['content-type']).toContain('text/html');
    expect(refused.body).toContain('Too many');
    expect((await attempt('198.51.100.8')).statusCode).not.toBe(429);
  });

  it('limits magic-link opening per address', async () => {
    const open = (ip: string) =>
      t.app.inject({
        method: 'GET',
        url: `/dashboard/auth/${randomBytes(32).toString('base64url')}`,
        headers: { host: 'localhost', ...fromAddress(ip) },
      });
    expect((await open('203.0.113.5')).statusCode).toBe(410);
    expect((await open('203.0.113.5')).statusCode).toBe(410);
    const refused = await open('203.0.113.5');
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBeDefined();
    expect((await open('203.0.113.6')).statusCode).toBe(410);
  });

  it('limits the admin API per address, and throttles failed operator-token checks before checking', async () => {
    const admin = (ip: string, token = OPERATOR_TOKEN) =>
      t.app.inject({
        method: 'GET',
        url: '/admin/v1/organizations',
        headers: { authorization: `Bearer ${token}`, ...fromAddress(ip) },
      });
    expect((await admin('192.0.2.10', 'wrong-token')).statusCode).toBe(401);
    expect((await admin('192.0.2.10', 'wrong-token-again')).statusCode).toBe(401);
    // Throttled now: even the right token gets 429 from this address until the window ends.
    const throttled = await admin('192.0.2.10');
    expect(throttled.statusCode).toBe(429);
    expect(throttled.json()).toMatchObject({ code: 'rate_limited' });
    expect(Number(throttled.headers['retry-after'])).toBeGreaterThan(0);
    expect(
      (
        await t.app.inject({
          method: 'GET',
          url: '/metrics',
          headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, ...fromAddress('192.0.2.10') },
        })
      ).statusCode,
    ).toBe(429);

    for (let i = 0; i < 4; i++) expect((await admin('192.0.2.11')).statusCode).toBe(200);
    const limited = await admin('192.0.2.11');
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['ratelimit-limit']).toBe('4');
  });
});

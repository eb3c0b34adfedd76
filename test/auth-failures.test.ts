import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { createPool } from '../src/lib/db.js';
import { newId } from '../src/lib/ids.js';
import { sha256 } from '../src/lib/secrets.js';
import { sessionCookieValue as consoleCookie } from '../src/modules/console/sessions.js';
import { sessionCookieValue as dashboardCookie } from '../src/modules/dashboard/sessions.js';
import { newApiKey } from '../src/modules/organizations/api-key-format.js';
import { UncheckedKeyHashes } from '../src/modules/organizations/unchecked-keys.js';
import { createTestApp, type TestApp, type TestTenant } from './harness.js';
import { statementsDuring } from './statements.js';

/*
 * AUTH-3, AUTH-14, LIM-8: what a stranger's credential costs. API keys carry a checksum, session cookies a MAC, so a
 * made-up one is refused without a statement; failed authentications are counted per client address (shared by every
 * process) and beyond RATE_LIMIT_AUTH_FAILURES refused with 429 before any look-up.
 */

let t: TestApp;
let tenant: TestTenant;
beforeAll(async () => {
  t = await createTestApp({
    RATE_LIMIT_WINDOW_SECONDS: '3600',
    RATE_LIMIT_AUTH_FAILURES: '3',
    RATE_LIMIT_SYNC_MS: '600000',
  });
  tenant = await t.newTenant('Checksum Co');
});
afterAll(() => t.close());

const getOrganization = (key: string | null, remoteAddress: string, app = t.app) =>
  app.inject({
    method: 'GET',
    url: '/test/v1/organization',
    remoteAddress,
    headers: key ? { 'x-api-key': key } : {},
  });
/** An address of its own for each test (failures are counted per address). */
let addresses = 0;
const newAddress = () => `198.18.${Math.floor(++addresses / 250)}.${addresses % 250}`;
const oldShapeKey = () => `sk_test_${randomBytes(32).toString('base64url')}`;
/** `key` with its last character changed: a typo. */
const mistyped = (key: string) => key.slice(0, -1) + (key.endsWith('A') ? 'B' : 'A');

/** Stores a key the way keys were issued before they carried a checksum (a process of the previous version). */
async function insertOldShapeKey(organizationId: string): Promise<{ id: string; key: string }> {
  const key = oldShapeKey();
  const id = newId('apiKey');
  await t.ctx.pool.query(
    `INSERT INTO api_keys (id, organization_id, environment, key_hash, redacted) VALUES ($1, $2, 'test', $3, 'sk_test_old…')`,
    [id, organizationId, sha256(key)],
  );
  return { id, key };
}

describe('API keys carry a checksum (AUTH-3)', () => {
  it('issues keys of AUTH-1 shape ending in a base62 CRC32, which the API accepts', async () => {
    expect(tenant.keys.test).toMatch(/^sk_test_[A-Za-z0-9_-]{43}[0-9A-Za-z]{6}$/);
    expect(tenant.keys.live).toMatch(/^sk_live_[A-Za-z0-9_-]{43}[0-9A-Za-z]{6}$/);
    expect((await getOrganization(tenant.keys.test, newAddress())).statusCode).toBe(200);
  });

  it('refuses made-up and mistyped keys of the right shape without a database statement', async () => {
    // The first key without a checksum reads the hashes of the keys issued before checksums, once.
    expect((await getOrganization(oldShapeKey(), newAddress())).statusCode).toBe(401);
    const made = [
      ...Array.from({ length: 100 }, oldShapeKey),
      ...Array.from({ length: 100 }, () => mistyped(newApiKey('test'))),
      mistyped(tenant.keys.test),
    ];
    const { result, statements } = await statementsDuring(() =>
      Promise.all(made.map((key) => getOrganization(key, newAddress()))),
    );
    expect(result.map((r) => r.statusCode)).toEqual(made.map(() => 401));
    expect(result[0].json()).toMatchObject({
      code: 'unauthorized',
      message: expect.stringContaining('Invalid API key'),
    });
    expect(statements).toEqual([]);
  });

  it('looks up a key only when its checksum holds', async () => {
    const { result, statements } = await statementsDuring(() => getOrganization(newApiKey('test'), newAddress()));
    expect(result.statusCode).toBe(401);
    expect(statements.filter((s) => /FROM api_keys WHERE key_hash/.test(s))).toHaveLength(1);
  });
});

describe('keys issued before checksums (AUTH-3)', () => {
  it('keep working, also when a process of the previous version issues one, until revoked; made-up ones still cost nothing', async () => {
    const owner = await t.newTenant('Old Keys Co');
    expect((await getOrganization(oldShapeKey(), newAddress())).statusCode).toBe(401);
    // Issued while this process runs: the insert tells every process to read those hashes again.
    const old = await insertOldShapeKey(owner.organizationId);
    const start = Date.now();
    let status = 0;
    while (Date.now() - start < 2000 && status !== 200) {
      status = (await getOrganization(old.key, newAddress())).statusCode;
      if (status !== 200) await new Promise((r) => setTimeout(r, 20));
    }
    expect(status).toBe(200);
    const { result, statements } = await statementsDuring(() => getOrganization(oldShapeKey(), newAddress()));
    expect(result.statusCode).toBe(401);
    expect(statements).toEqual([]);

    const revoked = await t.admin('DELETE', `/organizations/${owner.organizationId}/api-keys/${old.id}`);
    expect(revoked.statusCode, revoked.body).toBe(200);
    expect((await getOrganization(old.key, newAddress())).statusCode).toBe(401);
  });
});

describe('the hashes of keys without a checksum while changes are not heard (AUTH-3)', () => {
  it('are read once for concurrent questions and at most once a second, and see a key issued meanwhile', async () => {
    const owner = await t.newTenant('Unheard Co');
    const hashes = new UncheckedKeyHashes(t.ctx.pool, () => false, 1000);
    const start = Date.now();
    const { result, statements } = await statementsDuring(() =>
      Promise.all(Array.from({ length: 50 }, () => hashes.has(sha256(oldShapeKey()), start))),
    );
    expect(result).toEqual(Array(50).fill(false));
    expect(statements).toHaveLength(1);
    const old = await insertOldShapeKey(owner.organizationId);
    const within = await statementsDuring(() => hashes.has(sha256(old.key), start + 900));
    expect(within).toEqual({ result: false, statements: [] });
    const after = await statementsDuring(() => hashes.has(sha256(old.key), start + 1100));
    expect(after.result).toBe(true);
    expect(after.statements).toHaveLength(1);
  });
});

describe('failed authentications per client address (AUTH-14)', () => {
  it('answers 429 with Retry-After before any look-up once an address failed RATE_LIMIT_AUTH_FAILURES times', async () => {
    const address = newAddress();
    expect((await getOrganization(null, address)).statusCode).toBe(401);
    expect((await getOrganization(oldShapeKey(), address)).statusCode).toBe(401);
    expect((await getOrganization(tenant.keys.live, address)).statusCode).toBe(401);
    const { result, statements } = await statementsDuring(() => getOrganization(newApiKey('test'), address));
    expect(result.statusCode).toBe(429);
    expect(result.json()).toMatchObject({ code: 'rate_limited', message: expect.stringContaining('at most 3') });
    expect(Number(result.headers['retry-after'])).toBeGreaterThan(0);
    expect(statements).toEqual([]);
    // Even a valid key from that address waits; another address is not affected.
    expect((await getOrganization(tenant.keys.test, address)).statusCode).toBe(429);
    expect((await getOrganization(tenant.keys.test, newAddress())).statusCode).toBe(200);
  });

  it('counts failed session cookies of the dashboard and the console in the same budget, refused without a look-up', async () => {
    const address = newAddress();
    const dashboard = (cookie?: string) =>
      t.app.inject({
        method: 'GET',
        url: '/dashboard/',
        remoteAddress: address,
        headers: { host: 'localhost', ...(cookie ? { cookie: `fcs_dashboard=${cookie}` } : {}) },
      });
    const consolePage = (cookie?: string) =>
      t.app.inject({
        method: 'GET',
        url: '/console/queue',
        remoteAddress: address,
        headers: cookie ? { cookie: `fcs_console=${cookie}` } : {},
      });
    const forged = await statementsDuring(() =>
      Promise.all([
        dashboard(randomBytes(32).toString('base64url')),
        consolePage(`${'x'.repeat(43)}.${'y'.repeat(43)}`),
      ]),
    );
    expect(forged.result.map((r) => r.statusCode)).toEqual([401, 303]);
    expect(forged.statements).toEqual([]);
    // A cookie with a genuine MAC is looked up (once), and its failure counts too.
    const secret = t.ctx.secrets.fileUrlSecret;
    const unknown = await statementsDuring(() =>
      dashboard(dashboardCookie(secret, randomBytes(32).toString('base64url'))),
    );
    expect(unknown.result.statusCode).toBe(401);
    expect(unknown.statements).toHaveLength(1);

    const throttled = await statementsDuring(() =>
      Promise.all([
        dashboard(dashboardCookie(secret, 'a'.repeat(43))),
        consolePage(consoleCookie(secret, 'b'.repeat(43))),
      ]),
    );
    expect(throttled.result.map((r) => r.statusCode)).toEqual([429, 429]);
    expect(throttled.statements).toEqual([]);
    for (const page of throttled.result) {
      expect(page.headers['content-type']).toContain('text/html');
      expect(Number(page.headers['retry-after'])).toBeGreaterThan(0);
    }
    // Without a cookie nothing is looked up and nothing throttled: the sign-in pages stay open.
    expect((await dashboard()).statusCode).toBe(401);
    expect((await t.app.inject({ method: 'GET', url: '/console/login', remoteAddress: address })).statusCode).toBe(200);
  });

  it('is seen by every process: another process learns an address failed at its next sync', async () => {
    const pool = createPool(t.ctx.config.databaseUrl!);
    const second = await buildApp({ ...t.ctx, pool }, { logger: false });
    await second.ready();
    try {
      const address = newAddress();
      for (let i = 0; i < 3; i++) expect((await getOrganization(oldShapeKey(), address)).statusCode).toBe(401);
      await t.app.rateLimitCounters.sync();
      // The second process has counted nothing for the address; within the documented tolerance it answers once,
      // and its next sync reads what the first counted.
      expect((await getOrganization(tenant.keys.test, address, second)).statusCode).toBe(200);
      await second.rateLimitCounters.sync();
      const refused = await getOrganization(tenant.keys.test, address, second);
      expect(refused.statusCode).toBe(429);
      expect(refused.headers['retry-after']).toBeDefined();
    } finally {
      await second.close();
      await pool.end();
    }
  });
});

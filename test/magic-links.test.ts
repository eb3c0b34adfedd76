import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256 } from '../src/lib/secrets.js';
import { createCompany, createUser } from './factories.js';
import { createTestApp, type TestApp, type TestTenant } from './harness.js';
import { mintLink, openLink } from './dashboard-helpers.js';
import { setVerifiedDomain } from './domain-helpers.js';

let t: TestApp;
let tenant: TestTenant;
beforeAll(async () => {
  t = await createTestApp({ DASHBOARD_BASE_URL: 'http://localhost:3000/dashboard', TRUST_PROXY: 'loopback' });
  tenant = await t.newTenant('Links Co');
});
afterAll(() => t.close());

const tokenOf = (link: string) => link.split('/auth/')[1];

describe('POST /auth/magic-link', () => {
  it('mints a fresh 7-day link on the default dashboard address, storing only a hash of the token', async () => {
    const user = await createUser(tenant);
    const res = await tenant.api('POST', '/auth/magic-link', { userId: user.id });
    expect(res.statusCode, res.body).toBe(201);
    const { magicLink, expiresAt } = res.json();
    expect(magicLink).toMatch(/^http:\/\/localhost:3000\/dashboard\/auth\/[A-Za-z0-9_-]{43,}$/);
    const days = (Date.parse(expiresAt) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(6.99);
    expect(days).toBeLessThanOrEqual(7.001);

    const token = tokenOf(magicLink);
    expect(Buffer.from(token, 'base64url').length).toBeGreaterThanOrEqual(32);
    const { rows } = await t.ctx.pool.query('SELECT * FROM magic_links WHERE user_id = $1', [user.id]);
    expect(rows).toHaveLength(1);
    expect(rows[0].token_hash).toBe(sha256(token));
    expect(JSON.stringify(rows)).not.toContain(token);

    const again = await mintLink(tenant, { userId: user.id });
    expect(again).not.toBe(magicLink);
  });

  it("points at the organization's white-label domain when one is set", async () => {
    const wl = await t.newTenant('White Label Co');
    await setVerifiedDomain(t, wl, 'portal.links-co.test');
    const user = await createUser(wl);
    expect(await mintLink(wl, { userId: user.id })).toMatch(
      /^https:\/\/portal\.links-co\.test\/auth\/[A-Za-z0-9_-]{43,}$/,
    );
  });

  it('answers 404 for a user of another organization or environment, and 400 without userId', async () => {
    const other = await t.newTenant();
    const foreign = await createUser(other);
    const live = await createUser(tenant, 'live');
    for (const userId of [foreign.id, live.id, 'user_nope']) {
      const res = await tenant.api('POST', '/auth/magic-link', { userId });
      expect(res.statusCode, res.body).toBe(404);
      expect(res.json().message).toContain(userId);
      expect(res.json().errors.map((e: { field: string }) => e.field)).toEqual(['userId']);
    }
    const missing = await tenant.api('POST', '/auth/magic-link', {});
    expect(missing.statusCode).toBe(400);
    expect(missing.json().errors).toContainEqual({ field: 'userId', message: 'is required' });
  });

  it("with companyId: admins only (403 naming companyId), other tenants' companies 404", async () => {
    const { user, company } = await createCompany(tenant);
    const stranger = await createUser(tenant);
    expect((await tenant.api('POST', '/auth/magic-link', { userId: user.id, companyId: company.id })).statusCode).toBe(
      201,
    );

    const refused = await tenant.api('POST', '/auth/magic-link', { userId: stranger.id, companyId: company.id });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ code: 'forbidden', errors: [{ field: 'companyId' }] });
    expect(refused.json().message).toContain(company.id);

    const other = await t.newTenant();
    const { company: foreignCompany } = await createCompany(other);
    const foreign = await tenant.api('POST', '/auth/magic-link', { userId: user.id, companyId: foreignCompany.id });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().errors).toEqual([
      { field: 'companyId', message: expect.stringContaining(foreignCompany.id) },
    ]);
  });

  it('is single-use even when many browsers open it at the same moment: exactly one session', async () => {
    const user = await createUser(tenant);
    const link = await mintLink(tenant, { userId: user.id });
    const results = await Promise.all(Array.from({ length: 12 }, () => openLink(t, link)));
    const statuses = results.map((r) => r.statusCode).sort();
    expect(statuses.filter((s) => s === 303)).toHaveLength(1);
    expect(statuses.filter((s) => s === 410)).toHaveLength(11);
    const { rows } = await t.ctx.pool.query('SELECT count(*)::int AS n FROM dashboard_sessions WHERE user_id = $1', [
      user.id,
    ]);
    expect(rows[0].n).toBe(1);
  });

  it('is not spent by a HEAD request (link checkers, mail scanners): only opening it signs in', async () => {
    const user = await createUser(tenant);
    const link = await mintLink(tenant, { userId: user.id });
    const { pathname } = new URL(link);
    const head = await t.app.inject({ method: 'HEAD', url: pathname, headers: { host: 'localhost:3000' } });
    expect(head.statusCode).toBe(200);
    expect(head.headers['set-cookie']).toBeUndefined();
    expect((await openLink(t, link)).statusCode).toBe(303);
    expect((await openLink(t, link)).statusCode).toBe(410);
  });

  it('refuses an expired link with the friendly page', async () => {
    const user = await createUser(tenant);
    const link = await mintLink(tenant, { userId: user.id });
    await t.ctx.pool.query(`UPDATE magic_links SET expires_at = now() - interval '1 second' WHERE token_hash = $1`, [
      sha256(tokenOf(link)),
    ]);
    const res = await openLink(t, link);
    expect(res.statusCode).toBe(410);
    expect(res.headers['content-type']).toContain('text/html');
    expect(res.body).toContain('This link was used or has expired');
  });

  it('never writes a token to the logs, the events or an error body', async () => {
    const { user, company } = await createCompany(tenant);
    const links = [
      await mintLink(tenant, { userId: user.id }),
      await mintLink(tenant, { userId: user.id, companyId: company.id }),
    ];
    for (const link of links) {
      expect((await openLink(t, link)).statusCode).toBe(303);
      const again = await openLink(t, link);
      expect(again.statusCode).toBe(410);
      expect(again.body).not.toContain(tokenOf(link));
    }
    const notFound = await t.app.inject({ method: 'GET', url: `/v1/auth/${tokenOf(links[0])}` });
    expect(notFound.statusCode).toBe(404);
    expect(notFound.body).not.toContain(tokenOf(links[0]));
    const wrongMethod = await t.app.inject({
      method: 'POST',
      url: new URL(links[1]).pathname,
      headers: { host: 'localhost:3000' },
    });
    expect(wrongMethod.statusCode).toBe(404);
    expect(wrongMethod.body).not.toContain(tokenOf(links[1]));
    const logs = t.logs.join('');
    expect(logs).toContain('/auth/[redacted]');
    const events = await t.ctx.pool.query('SELECT data::text FROM events');
    for (const link of links) {
      expect(logs).not.toContain(tokenOf(link));
      expect(JSON.stringify(events.rows)).not.toContain(tokenOf(link));
    }
  });

  it('replays the same link for a retried Idempotency-Key without keeping the token readable in the database', async () => {
    const user = await createUser(tenant);
    const headers = { 'idempotency-key': `link-${user.id}` };
    const first = await tenant.api('POST', '/auth/magic-link', { userId: user.id }, { headers });
    const retry = await tenant.api('POST', '/auth/magic-link', { userId: user.id }, { headers });
    expect(first.statusCode, first.body).toBe(201);
    expect(retry.statusCode, retry.body).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.json()).toEqual(first.json());
    const token = tokenOf(first.json().magicLink);
    const stored = await t.ctx.pool.query('SELECT * FROM idempotency_keys WHERE key = $1', [
      headers['idempotency-key'],
    ]);
    expect(stored.rows).toHaveLength(1);
    expect(JSON.stringify(stored.rows)).not.toContain(token);
    // The replayed link still signs in, exactly once.
    expect((await openLink(t, retry.json().magicLink)).statusCode).toBe(303);
    expect((await openLink(t, first.json().magicLink)).statusCode).toBe(410);
  });
});

describe('a magic link opens only on the host it was issued for', () => {
  it('records the host, and refuses the link on another host with a page naming where it works, without spending it', async () => {
    const wl = await t.newTenant('Host Bound Co');
    await setVerifiedDomain(t, wl, 'portal.host-bound.test');
    const user = await createUser(wl);
    const link = await mintLink(wl, { userId: user.id });
    const { rows } = await t.ctx.pool.query('SELECT host FROM magic_links WHERE token_hash = $1', [
      sha256(tokenOf(link)),
    ]);
    expect(rows).toEqual([{ host: 'portal.host-bound.test' }]);

    // The white-label link opened at the default dashboard address (the takeover path of a hostile domain).
    const elsewhere = await t.app.inject({
      method: 'GET',
      url: `/dashboard/auth/${tokenOf(link)}`,
      headers: { host: 'localhost:3000' },
    });
    expect(elsewhere.statusCode).toBe(403);
    expect(elsewhere.body).toContain('portal.host-bound.test');
    expect(elsewhere.headers['set-cookie']).toBeUndefined();
    // Still unspent: it works where it was issued for.
    const home = await openLink(t, link);
    expect(home.statusCode).toBe(303);
    expect(home.headers['set-cookie']).toBeDefined();
  });

  it('refuses a default-address link opened on a white-label host or another name of the dashboard host', async () => {
    const wl = await t.newTenant('Other Host Co');
    await setVerifiedDomain(t, wl, 'portal.other-host.test');
    const user = await createUser(tenant);
    const link = await mintLink(tenant, { userId: user.id });
    // On the white-label host (its dashboard is at the root) another organization's link is unknown; the default
    // dashboard also answers on the loopback names, where the link names the host it works on.
    for (const [host, url, status] of [
      ['portal.other-host.test', `/auth/${tokenOf(link)}`, 410],
      ['127.0.0.1:3000', `/dashboard/auth/${tokenOf(link)}`, 403],
    ] as const) {
      const res = await t.app.inject({ method: 'GET', url, headers: { host } });
      expect(res.statusCode, host).toBe(status);
      expect(res.headers['set-cookie'], host).toBeUndefined();
    }
    // Hosts that serve no dashboard at that path do not even look at the link (SEC-7).
    for (const host of ['portal.other-host.test', 'evil.example']) {
      const res = await t.app.inject({ method: 'GET', url: `/dashboard/auth/${tokenOf(link)}`, headers: { host } });
      expect(res.statusCode, host).toBe(404);
      expect(res.headers['set-cookie'], host).toBeUndefined();
    }
    expect((await openLink(t, link)).statusCode).toBe(303);
  });
});

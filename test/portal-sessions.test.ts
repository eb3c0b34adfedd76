import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './harness.js';
import { memberSession } from './portal-helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const sessionsOf = (memberId: string) =>
  t.ctx.pool.query('SELECT id_hash FROM portal_sessions WHERE member_id = $1 AND revoked_at IS NULL', [memberId]);

describe('portal sessions', () => {
  it('end after 12 hours without a request', async () => {
    const tenant = await t.newTenant('Idle Co');
    const m = await memberSession(t, tenant.organizationId, 'developer');
    expect((await m.client.get('/portal/')).statusCode).toBe(200);
    await t.ctx.pool.query(
      `UPDATE portal_sessions SET last_seen_at = now() - interval '11 hours 50 minutes' WHERE member_id = $1`,
      [m.memberId],
    );
    // Used within 12 hours: still open, and its idle timer starts again.
    expect((await m.client.get('/portal/')).statusCode).toBe(200);
    await t.ctx.pool.query(
      `UPDATE portal_sessions SET last_seen_at = now() - interval '12 hours 1 minute' WHERE member_id = $1`,
      [m.memberId],
    );
    const idle = await m.client.get('/portal/');
    expect(idle.statusCode).toBe(303);
    expect(idle.headers.location).toBe('/portal/sign-in');
  });

  it('end 7 days after sign-in however active', async () => {
    const tenant = await t.newTenant('Absolute Co');
    const m = await memberSession(t, tenant.organizationId, 'viewer');
    await t.ctx.pool.query(
      `UPDATE portal_sessions SET created_at = now() - interval '6 days 23 hours', expires_at = now() + interval '1 hour' WHERE member_id = $1`,
      [m.memberId],
    );
    expect((await m.client.get('/portal/')).statusCode).toBe(200);
    await t.ctx.pool.query(
      `UPDATE portal_sessions SET created_at = now() - interval '7 days 1 minute', expires_at = now() - interval '1 minute', last_seen_at = now() - interval '1 minute' WHERE member_id = $1`,
      [m.memberId],
    );
    expect((await m.client.get('/portal/')).headers.location).toBe('/portal/sign-in');
  });

  it('refuse forms without the session CSRF token, and cookies of the console or altered ones', async () => {
    const tenant = await t.newTenant('Csrf Co');
    const m = await memberSession(t, tenant.organizationId, 'owner');
    const [session] = (await sessionsOf(m.memberId)).rows;
    await m.client.get('/portal/sessions');
    const ids = await t.ctx.pool.query('SELECT id FROM portal_sessions WHERE member_id = $1', [m.memberId]);
    const noToken = await m.client.post(`/portal/sessions/${ids.rows[0].id}/revoke`, {});
    expect(noToken.statusCode).toBe(403);
    expect(noToken.body).toContain('did not come from the portal');
    const wrong = await m.client.post('/portal/sign-out', { _csrf: 'x'.repeat(43) });
    expect(wrong.statusCode).toBe(403);
    expect((await sessionsOf(m.memberId)).rows).toEqual([session]);

    // The portal's cookie is its own: a console cookie of the same value, or an altered one, opens nothing.
    const portalCookie = m.client.cookies.get('fcs_portal')!;
    const res = await t.app.inject({
      method: 'GET',
      url: '/portal/',
      headers: { cookie: `fcs_console=${portalCookie}` },
    });
    expect(res.headers.location).toBe('/portal/sign-in');
    const altered = await t.app.inject({
      method: 'GET',
      url: '/portal/',
      headers: { cookie: `fcs_portal=${portalCookie.slice(0, -2)}xx` },
    });
    expect(altered.headers.location).toBe('/portal/sign-in');
    // And the portal's cookie opens nothing in the console.
    const consolePage = await t.app.inject({
      method: 'GET',
      url: '/console/queue',
      headers: { cookie: `fcs_portal=${portalCookie}` },
    });
    expect(consolePage.statusCode).toBe(303);

    const out = await m.client.post('/portal/sign-out', { _csrf: m.client.csrf() });
    expect(out.statusCode).toBe(303);
    expect((await sessionsOf(m.memberId)).rows).toEqual([]);
    expect((await m.client.get('/portal/')).headers.location).toBe('/portal/sign-in');
  });

  it('lists only the live sessions of the member, and a revoked one stops at once', async () => {
    const tenant = await t.newTenant('List Co');
    const m = await memberSession(t, tenant.organizationId, 'developer', { remoteAddress: '192.0.2.10' });
    const other = await memberSession(t, tenant.organizationId, 'developer', { remoteAddress: '192.0.2.99' });
    const page = await m.client.get('/portal/sessions');
    expect(page.statusCode).toBe(200);
    expect(page.body.split('<tr data-session="')).toHaveLength(2);
    expect(page.body).toContain('(this session)');
    const [mine] = (await t.ctx.pool.query('SELECT id FROM portal_sessions WHERE member_id = $1', [m.memberId])).rows;
    const self = await m.client.post(`/portal/sessions/${mine.id}/revoke`, { _csrf: m.client.csrf() });
    expect(self.headers.location).toBe('/portal/sign-in');
    expect((await m.client.get('/portal/sessions')).headers.location).toBe('/portal/sign-in');
    expect((await other.client.get('/portal/sessions')).statusCode).toBe(200);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './cli-runner.js';
import { createTestApp, type TestApp } from './harness.js';
import { invite, memberSession, newEmail, PASSWORD, portalClient } from './portal-helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe('portal invitations', () => {
  it('validate the admin request and name the bad field', async () => {
    const tenant = await t.newTenant('Validation Co');
    const badEmail = await invite(t, tenant.organizationId, 'not-an-address', 'viewer');
    expect(badEmail.res.statusCode).toBe(400);
    expect(badEmail.res.json().errors[0].field).toMatch(/email/);
    const badRole = await invite(t, tenant.organizationId, newEmail(), 'superuser');
    expect(badRole.res.statusCode).toBe(400);
    expect(JSON.stringify(badRole.res.json().errors)).toMatch(/role/);
    const unknown = await invite(t, 'org_doesnotexist', newEmail(), 'viewer');
    expect(unknown.res.statusCode).toBe(404);
    const noToken = await t.app.inject({
      method: 'POST',
      url: `/admin/v1/organizations/${tenant.organizationId}/invitations`,
      payload: { email: newEmail(), role: 'viewer' },
    });
    expect(noToken.statusCode).toBe(401);
  });

  it('work once: a second acceptance, even at the same time, finds the invitation spent', async () => {
    const tenant = await t.newTenant('Once Co');
    const email = newEmail('once');
    const inv = await invite(t, tenant.organizationId, email, 'viewer');
    const [a, b] = [portalClient(t), portalClient(t)];
    await Promise.all([a.get(inv.path), b.get(inv.path)]);
    const form = (c: typeof a) => ({
      _csrf: c.csrf(),
      token: inv.token,
      name: 'Vic Viewer',
      password: PASSWORD,
      confirm: PASSWORD,
    });
    const results = await Promise.all([a.post('/portal/invitation', form(a)), b.post('/portal/invitation', form(b))]);
    expect(results.map((r) => r.statusCode).sort()).toEqual([303, 404]);
    const members = await t.ctx.pool.query('SELECT id FROM members WHERE lower(email) = lower($1)', [email]);
    expect(members.rowCount).toBe(1);
    const again = await portalClient(t).get(inv.path);
    expect(again.statusCode).toBe(404);
    expect(again.body).toContain('Invitation not valid');
  });

  it('expire after 72 hours', async () => {
    const tenant = await t.newTenant('Expiry Co');
    const inv = await invite(t, tenant.organizationId, newEmail(), 'developer');
    await t.ctx.pool.query(
      `UPDATE portal_invitations SET created_at = now() - interval '72 hours 1 minute', expires_at = now() - interval '1 minute' WHERE token_hash = encode(sha256($1::bytea), 'hex')`,
      [inv.token],
    );
    const c = portalClient(t);
    expect((await c.get(inv.path)).statusCode).toBe(404);
    await c.get('/portal/sign-in'); // a valid form token: the page of a spent invitation has no form
    const res = await c.post('/portal/invitation', {
      _csrf: c.csrf(),
      token: inv.token,
      name: 'Late',
      password: PASSWORD,
      confirm: PASSWORD,
    });
    expect(res.statusCode).toBe(404);
    expect(res.body).toContain('Invitation not valid');
    expect(c.cookies.has('fcs_portal')).toBe(false);
  });

  it('refuse a short password, and let an existing member join signed in as the invited address only', async () => {
    const first = await t.newTenant('First Co');
    const second = await t.newTenant('Second Co');
    const m = await memberSession(t, first.organizationId, 'developer');
    const inv = await invite(t, second.organizationId, m.email.toUpperCase(), 'viewer');
    const stranger = portalClient(t);
    const page = await stranger.get(inv.path);
    expect(page.body).toContain('has a portal account already');
    await stranger.get('/portal/sign-in'); // a valid form token: that page offers no form
    const short = await stranger.post('/portal/invitation', {
      _csrf: stranger.csrf(),
      token: inv.token,
      name: 'X',
      password: 'short',
      confirm: 'short',
    });
    expect(short.statusCode).toBe(400);
    expect(short.body).toContain('at least 12 characters');

    const someoneElse = await memberSession(t, first.organizationId, 'viewer');
    await someoneElse.client.get(inv.path);
    const refused = await someoneElse.client.post('/portal/invitation', {
      _csrf: someoneElse.client.csrf(),
      token: inv.token,
    });
    expect(refused.statusCode).toBe(403);
    expect(refused.body).toContain('This invitation is for');

    await m.client.get(inv.path);
    const joined = await m.client.post('/portal/invitation', { _csrf: m.client.csrf(), token: inv.token });
    expect(joined.statusCode).toBe(303);
    const home = await m.client.get('/portal/');
    expect(home.body).toContain('Second Co');
    expect(home.body).toContain('First Co');
  });

  it('are made by the CLI too', async () => {
    const tenant = await t.newTenant('Cli Invite Co');
    const res = await runCli(t, ['org', 'invite', tenant.organizationId, newEmail('cli'), 'admin', '--json']);
    expect(res.code, res.stderr).toBe(0);
    const out = JSON.parse(res.stdout);
    expect(out.invitationUrl).toMatch(/\/portal\/invitation\?token=/);
    const c = portalClient(t);
    const url = new URL(out.invitationUrl);
    expect((await c.get(`${url.pathname}${url.search}`)).body).toContain('Join Cli Invite Co');
    const bad = await runCli(t, ['org', 'invite', tenant.organizationId, newEmail('cli'), 'boss']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/role/);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { can, canManageMember, type PortalAction, ROLES } from '../src/modules/portal/roles.js';
import { createTestApp, type TestApp } from './harness.js';
import { addMembership, memberSession, newEmail } from './portal-helpers.js';

describe('the role policy', () => {
  it('gives owners everything, admins all but owners, developers no billing or members, viewers reads only', () => {
    const writes: PortalAction[] = ['keys.write', 'webhooks.write', 'members.invite', 'billing.write', 'prices.write'];
    expect(writes.every((a) => can('owner', a))).toBe(true);
    expect(writes.every((a) => can('admin', a))).toBe(true);
    expect(writes.some((a) => can('viewer', a))).toBe(false);
    expect(can('viewer', 'secrets.read')).toBe(false);
    expect(can('viewer', 'events.read')).toBe(true);
    expect(can('developer', 'keys.write')).toBe(true);
    expect(can('developer', 'webhooks.write')).toBe(true);
    for (const a of [
      'billing.read',
      'billing.write',
      'prices.read',
      'prices.write',
      'members.read',
      'members.invite',
    ] as const)
      expect(can('developer', a), a).toBe(false);
    for (const a of ['orders.read', 'companies.read', 'users.read', 'settings.read'] as const)
      expect(can('viewer', a), a).toBe(true);
    expect(can('viewer', 'settings.write')).toBe(false);
    expect(can(null, 'overview.read')).toBe(false);
    expect(canManageMember('admin', 'owner')).toBe(false);
    expect(ROLES.filter((r) => canManageMember('admin', r))).toEqual(['admin', 'developer', 'viewer']);
    expect(ROLES.every((r) => canManageMember('owner', r))).toBe(true);
    expect(canManageMember('developer', 'viewer')).toBe(false);
  });
});

describe('roles on the server', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('refuses every members page and form to viewers and developers, whatever they send', async () => {
    const tenant = await t.newTenant('Roles Co');
    const owner = await memberSession(t, tenant.organizationId, 'owner');
    for (const role of ['viewer', 'developer'] as const) {
      const { client } = await memberSession(t, tenant.organizationId, role);
      const home = await client.get('/portal/');
      expect(home.statusCode).toBe(200);
      expect(home.body).not.toContain('href="/portal/members"');
      expect((await client.get('/portal/members')).statusCode).toBe(403);
      const invite = await client.post('/portal/members/invite', {
        _csrf: client.csrf(),
        email: newEmail(),
        role: 'viewer',
      });
      expect(invite.statusCode).toBe(403);
      expect(invite.body).toContain(`Your role (${role})`);
      const remove = await client.post(`/portal/members/${owner.memberId}/remove`, { _csrf: client.csrf() });
      expect(remove.statusCode).toBe(403);
    }
    const { rows } = await t.ctx.pool.query(
      'SELECT count(*)::int AS n FROM portal_invitations WHERE organization_id = $1',
      [tenant.organizationId],
    );
    expect(rows[0].n).toBe(0);
  });

  it('lets admins invite and remove all but owners, owners everyone but the last owner', async () => {
    const tenant = await t.newTenant('Admin Co');
    const owner = await memberSession(t, tenant.organizationId, 'owner');
    const admin = await memberSession(t, tenant.organizationId, 'admin');
    const viewer = await memberSession(t, tenant.organizationId, 'viewer');

    await admin.client.get('/portal/members');
    const asOwner = await admin.client.post('/portal/members/invite', {
      _csrf: admin.client.csrf(),
      email: newEmail(),
      role: 'owner',
    });
    expect(asOwner.statusCode).toBe(403);
    const asAdmin = await admin.client.post('/portal/members/invite', {
      _csrf: admin.client.csrf(),
      email: newEmail(),
      role: 'admin',
    });
    expect(asAdmin.statusCode).toBe(201);
    expect(asAdmin.body).toMatch(/\/portal\/invitation\?token=/);
    // A bad address is named beside its field, with what was typed kept, and nothing is created.
    const bad = await admin.client.post('/portal/members/invite', {
      _csrf: admin.client.csrf(),
      email: 'not-an-address',
      role: 'viewer',
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('id="err-email"');
    expect(bad.body).toContain('value="not-an-address"');
    expect(bad.body).toMatch(/<option value="viewer" selected>/);
    expect(bad.body).not.toMatch(/\/portal\/invitation\?token=/);
    expect(
      (await admin.client.post(`/portal/members/${owner.memberId}/remove`, { _csrf: admin.client.csrf() })).statusCode,
    ).toBe(403);
    expect(
      (await admin.client.post(`/portal/members/${viewer.memberId}/remove`, { _csrf: admin.client.csrf() })).statusCode,
    ).toBe(303);
    // The removed viewer's session shows nothing of the organization any more.
    const after = await viewer.client.get('/portal/');
    expect(after.body).not.toContain('Admin Co');

    await owner.client.get('/portal/members');
    const last = await owner.client.post(`/portal/members/${owner.memberId}/remove`, { _csrf: owner.client.csrf() });
    expect(last.statusCode).toBe(409);
    expect(
      (await owner.client.post(`/portal/members/${admin.memberId}/remove`, { _csrf: owner.client.csrf() })).statusCode,
    ).toBe(303);
  });

  it('shows a member of another organization nothing of this one', async () => {
    const mine = await t.newTenant('Mine Co');
    const theirs = await t.newTenant('Theirs Co');
    const me = await memberSession(t, mine.organizationId, 'owner');
    const them = await memberSession(t, theirs.organizationId, 'owner', { email: newEmail('secret-member') });

    const members = await me.client.get('/portal/members');
    expect(members.statusCode).toBe(200);
    expect(members.body).toContain(me.email);
    expect(members.body).not.toContain(them.email);
    expect(members.body).not.toContain('Theirs Co');
    const sw = await me.client.post('/portal/organization', {
      _csrf: me.client.csrf(),
      organizationId: theirs.organizationId,
    });
    expect(sw.statusCode).toBe(404);
    expect((await me.client.get('/portal/')).body).not.toContain('Theirs Co');
    const remove = await me.client.post(`/portal/members/${them.memberId}/remove`, { _csrf: me.client.csrf() });
    expect(remove.statusCode).toBe(404);
    const still = await t.ctx.pool.query('SELECT 1 FROM organization_memberships WHERE member_id = $1', [
      them.memberId,
    ]);
    expect(still.rowCount).toBe(1);
    // Someone else's session cannot be revoked either.
    const theirSession = await t.ctx.pool.query('SELECT id FROM portal_sessions WHERE member_id = $1', [them.memberId]);
    const revoke = await me.client.post(`/portal/sessions/${theirSession.rows[0].id}/revoke`, {
      _csrf: me.client.csrf(),
    });
    expect(revoke.statusCode).toBe(404);
    expect((await them.client.get('/portal/')).statusCode).toBe(200);
  });

  it('switches organizations and environments, with the role of the organization shown', async () => {
    const first = await t.newTenant('Alpha Switch Co');
    const second = await t.newTenant('Beta Switch Co');
    const m = await memberSession(t, first.organizationId, 'viewer');
    await addMembership(t, second.organizationId, m.memberId, 'admin');
    // Now an admin somewhere: enrolment comes first.
    expect((await m.client.get('/portal/')).headers.location).toBe('/portal/account/two-factor');
    await t.ctx.pool.query(`UPDATE members SET totp_sealed = 'sealed:v1:x', totp_enabled_at = now() WHERE id = $1`, [
      m.memberId,
    ]);
    const home = await m.client.get('/portal/');
    expect(home.body).toContain('Alpha Switch Co');
    expect(home.body).toContain('Test mode');
    expect((await m.client.get('/portal/members')).statusCode).toBe(403);
    await m.client.post('/portal/organization', { _csrf: m.client.csrf(), organizationId: second.organizationId });
    expect((await m.client.get('/portal/members')).statusCode).toBe(200);
    const live = await m.client.post('/portal/environment', { _csrf: m.client.csrf(), environment: 'live' });
    expect(live.statusCode).toBe(303);
    const liveHome = await m.client.get('/portal/');
    expect(liveHome.body).toContain('Beta Switch Co');
    expect(liveHome.body).not.toContain('Test mode');
    expect(liveHome.body).toMatch(/value="live" class="env-btn" aria-pressed="true"/);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './harness.js';
import {
  followSecret,
  acceptInvitation,
  enrolTotp,
  forgetLastTotpStep,
  invite,
  MEMBER_TOTP_SECRET,
  memberSession,
  newEmail,
  portalClient,
  setProofAge,
  signIn,
  switchTo,
  totpCode,
} from './portal-helpers.js';

/** Where a form that made a key sends the browser: the keys page with the key's one-time view (PORTAL-46). */
const SHOWN = /^\/portal\/keys\?shown=psv_/;

/*
 * PORTAL-10: in live, a write that shows a secret or changes a setting asks for the second factor again once the
 * session's last proof is more than 15 minutes old; test mode never asks. The time is moved back in SQL.
 */

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const keyCount = async (organizationId: string, environment: string) =>
  (
    await t.ctx.pool.query('SELECT count(*)::int AS n FROM api_keys WHERE organization_id = $1 AND environment = $2', [
      organizationId,
      environment,
    ])
  ).rows[0].n as number;

describe('step-up before live secrets and settings', () => {
  it('asks again after 15 minutes, goes back to the page after the code, and not again within 15 minutes', async () => {
    const tenant = await t.newTenant('Step Up Co');
    const owner = await memberSession(t, tenant.organizationId, 'owner');
    const c = owner.client;
    await switchTo(c, 'live');
    await setProofAge(t, owner.memberId, 16);
    await c.get('/portal/keys');
    const refused = await c.post('/portal/keys', { _csrf: c.csrf(), name: 'Server' });
    expect(refused.statusCode).toBe(303);
    expect(refused.headers.location).toBe('/portal/step-up?next=%2Fportal%2Fkeys');
    expect(await keyCount(tenant.organizationId, 'live')).toBe(1);

    const page = await c.get(String(refused.headers.location));
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<label for="code">Code</label>');
    expect(page.body).toContain('name="next" value="/portal/keys"');
    const wrong = await c.post('/portal/step-up', { _csrf: c.csrf(), next: '/portal/keys', code: '000000' });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.body).toContain('aria-describedby="code-error"');
    const ok = await c.post('/portal/step-up', {
      _csrf: c.csrf(),
      next: '/portal/keys',
      code: totpCode(MEMBER_TOTP_SECRET),
    });
    expect(ok.statusCode).toBe(303);
    expect(ok.headers.location).toBe('/portal/keys');

    await c.get('/portal/keys');
    const created = await followSecret(c, await c.post('/portal/keys', { _csrf: c.csrf(), name: 'Server' }));
    expect(created.statusCode).toBe(200);
    expect(created.body).toMatch(/sk_live_[A-Za-z0-9_-]{40,}/);

    // 14 minutes after the proof: still good.
    await setProofAge(t, owner.memberId, 14);
    await c.get('/portal/keys');
    expect((await c.post('/portal/keys', { _csrf: c.csrf(), name: 'Second' })).headers.location).toMatch(SHOWN);
    // 16 minutes after: asked again.
    await setProofAge(t, owner.memberId, 16);
    await c.get('/portal/keys');
    expect((await c.post('/portal/keys', { _csrf: c.csrf(), name: 'Third' })).statusCode).toBe(303);
    expect(await keyCount(tenant.organizationId, 'live')).toBe(3);
  });

  it('never asks in test mode, however old the proof or without one', async () => {
    const tenant = await t.newTenant('Step Up Test Co');
    const owner = await memberSession(t, tenant.organizationId, 'owner');
    await setProofAge(t, owner.memberId, null);
    const c = owner.client;
    await c.get('/portal/keys');
    const created = await followSecret(c, await c.post('/portal/keys', { _csrf: c.csrf(), name: 'Test server' }));
    expect(created.statusCode).toBe(200);
    expect(created.body).toMatch(/sk_test_/);
    expect(await keyCount(tenant.organizationId, 'live')).toBe(1);
  });

  it('takes a recovery code, spending it', async () => {
    const email = newEmail('owner');
    const tenant = await t.newTenant('Recovery Co');
    const inv = await invite(t, tenant.organizationId, email, 'owner');
    const c = portalClient(t);
    await acceptInvitation(c, inv.path, 'Rita Recovery');
    const { recoveryCodes } = await enrolTotp(c);
    await switchTo(c, 'live');
    const memberId = (await t.ctx.pool.query('SELECT id FROM members WHERE email = $1', [email])).rows[0].id;
    await setProofAge(t, memberId, 20);
    await c.get('/portal/step-up?next=/portal/webhooks');
    const ok = await c.post('/portal/step-up', { _csrf: c.csrf(), next: '/portal/webhooks', code: recoveryCodes[0]! });
    expect(ok.statusCode).toBe(303);
    expect(ok.headers.location).toBe('/portal/webhooks');
    expect((await c.get('/portal/webhooks')).body).toContain('recovery code, which is now spent');
    await setProofAge(t, memberId, 20);
    await c.get('/portal/step-up?next=/portal/webhooks');
    const again = await c.post('/portal/step-up', {
      _csrf: c.csrf(),
      next: '/portal/webhooks',
      code: recoveryCodes[0]!,
    });
    expect(again.statusCode).toBe(401);
  });

  it("dates the proof at sign-in's second factor, so a fresh sign-in is not asked", async () => {
    const email = newEmail('admin');
    const tenant = await t.newTenant('Fresh Sign In Co');
    const inv = await invite(t, tenant.organizationId, email, 'admin');
    const first = portalClient(t);
    await acceptInvitation(first, inv.path, 'Ada Admin');
    const { secret } = await enrolTotp(first);
    await forgetLastTotpStep(t.ctx.pool, email);
    const c = portalClient(t);
    const signedIn = await signIn(c, email, secret);
    expect(signedIn.headers.location).toBe('/portal/');
    await switchTo(c, 'live');
    await c.get('/portal/keys');
    expect((await c.post('/portal/keys', { _csrf: c.csrf(), name: 'After sign-in' })).headers.location).toMatch(SHOWN);
  });

  it('goes back only to a portal path', async () => {
    const tenant = await t.newTenant('Next Co');
    const owner = await memberSession(t, tenant.organizationId, 'owner');
    const c = owner.client;
    for (const [next, expected] of [
      ['https://evil.example/portal/keys', '/portal/'],
      ['//evil.example/portal/keys', '/portal/'],
      ['/portal/../admin/v1/organizations', '/portal/'],
      ['/portalx', '/portal/'],
      ['/portal/webhooks?x=1', '/portal/webhooks?x=1'],
    ]) {
      const page = await c.get(`/portal/step-up?next=${encodeURIComponent(next!)}`);
      expect(page.body, next).toContain(`name="next" value="${expected!.replace('&', '&amp;')}"`);
      await forgetLastTotpStep(t.ctx.pool, owner.email);
      const res = await c.post('/portal/step-up', { _csrf: c.csrf(), next: next!, code: totpCode(MEMBER_TOTP_SECRET) });
      expect(res.statusCode, next).toBe(303);
      expect(res.headers.location, next).toBe(expected);
    }
  });

  it('tells a member without a second factor to set one up, and refuses live changes meanwhile', async () => {
    const tenant = await t.newTenant('No Factor Co');
    const dev = await memberSession(t, tenant.organizationId, 'developer');
    const c = dev.client;
    await switchTo(c, 'live');
    await c.get('/portal/keys');
    const refused = await c.post('/portal/keys', { _csrf: c.csrf(), name: 'Server' });
    expect(refused.headers.location).toBe('/portal/step-up?next=%2Fportal%2Fkeys');
    const page = await c.get(String(refused.headers.location));
    expect(page.body).toContain('href="/portal/account/two-factor"');
    expect(page.body).not.toContain('action="/portal/step-up"');
    expect(await keyCount(tenant.organizationId, 'live')).toBe(1);
  });
});

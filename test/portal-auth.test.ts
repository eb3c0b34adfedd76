import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './harness.js';
import {
  acceptInvitation,
  enrolTotp,
  forgetLastTotpStep,
  invite,
  newEmail,
  PASSWORD,
  portalClient,
  signIn,
  signInPassword,
  totpCode,
} from './portal-helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe('portal: invitation, password, second factor, sessions', () => {
  it('walks from an operator invitation to a signed-in owner with two-factor, then lists and revokes sessions', async () => {
    const tenant = await t.newTenant('Portal Walk Co');
    const email = newEmail('owner');
    const inv = await invite(t, tenant.organizationId, email, 'owner');
    expect(inv.res.statusCode, inv.res.body).toBe(201);
    expect(inv.body.invitationUrl).toMatch(/^http:\/\/localhost:\d+\/portal\/invitation\?token=/);
    const hours = (Date.parse(inv.body.expiresAt) - Date.now()) / 3_600_000;
    expect(hours).toBeGreaterThan(71.9);
    expect(hours).toBeLessThanOrEqual(72);
    // Only the token's hash is stored.
    const { rows } = await t.ctx.pool.query('SELECT token_hash FROM portal_invitations WHERE email = $1', [email]);
    expect(rows[0].token_hash).not.toContain(inv.token);

    const browser = portalClient(t);
    const page = await browser.get(inv.path);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Join Portal Walk Co');
    const accepted = await acceptInvitation(browser, inv.path, 'Olive Owner');
    expect(accepted.statusCode, accepted.body).toBe(303);
    expect(accepted.headers.location).toBe('/portal/account/two-factor');
    const cookie = ([] as string[])
      .concat(accepted.headers['set-cookie'] ?? [])
      .find((c) => c.startsWith('fcs_portal='))!;
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
    expect(cookie).toMatch(/Path=\/portal/i);

    // An owner without a second factor is sent to enrol it from every other page.
    const home = await browser.get('/portal/');
    expect(home.statusCode).toBe(303);
    expect(home.headers.location).toBe('/portal/account/two-factor');

    const { secret, recoveryCodes } = await enrolTotp(browser);
    expect(recoveryCodes).toHaveLength(10);
    const sealed = await t.ctx.pool.query('SELECT totp_sealed FROM members WHERE email = $1', [email]);
    expect(sealed.rows[0].totp_sealed).toMatch(/^sealed:v1:/);
    expect(sealed.rows[0].totp_sealed).not.toContain(secret);
    const overview = await browser.get('/portal/');
    expect(overview.statusCode).toBe(200);
    expect(overview.body).toContain('Portal Walk Co');
    expect(overview.body).toContain('Test mode');

    // A second browser: the password alone opens nothing but the second-factor page.
    const laptop = portalClient(t, '203.0.113.9');
    const first = await signInPassword(laptop, email);
    expect(first.headers.location).toBe('/portal/second-factor');
    expect((await laptop.get('/portal/sessions')).headers.location).toBe('/portal/second-factor');
    await laptop.get('/portal/second-factor');
    const wrong = await laptop.post('/portal/second-factor', { _csrf: laptop.csrf(), code: '000000' });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.body).toContain('That code is not valid');
    // The code the enrolment used is spent: a code of the next step is accepted (the app's clock may be ahead).
    const ok = await laptop.post('/portal/second-factor', {
      _csrf: laptop.csrf(),
      code: totpCode(secret, Date.now() + 30_000),
    });
    expect(ok.statusCode).toBe(303);
    expect(ok.headers.location).toBe('/portal/');
    expect((await laptop.get('/portal/')).statusCode).toBe(200);

    // Both sessions listed; the first browser signs the laptop out.
    const list = await browser.get('/portal/sessions');
    expect(list.statusCode).toBe(200);
    const sessionRows = list.body.split('<tr data-session="').slice(1);
    expect(sessionRows).toHaveLength(2);
    const other = sessionRows.find((r) => r.includes('203.0.113.9'))!.split('"')[0];
    expect(other).toMatch(/^psess_/);
    const revoked = await browser.post(`/portal/sessions/${other}/revoke`, { _csrf: browser.csrf() });
    expect(revoked.statusCode).toBe(303);
    expect((await laptop.get('/portal/')).headers.location).toBe('/portal/sign-in');
    expect((await browser.get('/portal/')).statusCode).toBe(200);

    // A recovery code works once.
    const phone = portalClient(t);
    await signInPassword(phone, email);
    await phone.get('/portal/second-factor');
    const byCode = await phone.post('/portal/second-factor', { _csrf: phone.csrf(), code: recoveryCodes[0]! });
    expect(byCode.statusCode).toBe(303);
    const again = portalClient(t);
    await signInPassword(again, email);
    await again.get('/portal/second-factor');
    expect(
      (await again.post('/portal/second-factor', { _csrf: again.csrf(), code: recoveryCodes[0]! })).statusCode,
    ).toBe(401);

    await forgetLastTotpStep(t.ctx.pool, email);
    expect((await signIn(portalClient(t), email, secret)).headers.location).toBe('/portal/');
  });

  it('refuses wrong passwords and unknown addresses alike, and never signs in without the form token', async () => {
    const tenant = await t.newTenant('Refusal Co');
    const email = newEmail('dev');
    const inv = await invite(t, tenant.organizationId, email, 'developer');
    await acceptInvitation(portalClient(t), inv.path);
    const c = portalClient(t, '198.51.100.20');
    expect((await signInPassword(c, email, 'not the password at all')).statusCode).toBe(401);
    const unknown = await signInPassword(c, newEmail('nobody'), PASSWORD);
    expect(unknown.statusCode).toBe(401);
    expect(unknown.body).toContain('do not match an active portal account');
    const forged = await c.post('/portal/sign-in', { email, password: PASSWORD });
    expect(forged.statusCode).toBe(403);
    expect(c.cookies.has('fcs_portal')).toBe(false);
    // A developer has no second factor to give: signed in at once.
    const ok = await signInPassword(portalClient(t), email);
    expect(ok.headers.location).toBe('/portal/');
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp, type TestTenant } from './harness.js';
import { purgeExpiredTask } from '../src/modules/maintenance/purge-expired.task.js';
import { createSession, sessionCookieValue } from '../src/modules/portal/sessions.js';
import {
  acceptInvitation,
  invite,
  memberSession,
  newEmail,
  type PortalClient,
  portalClient,
  signInPassword,
  totpCode,
} from './portal-helpers.js';

/*
 * Pages that show a secret the portal has just made (PORTAL-46): the form redirects (303) to the page that shows it
 * once, for the session that made it; a reload, Back or another session sees that it was shown already, never the
 * secret; nothing of it is cached.
 */

let t: TestApp;
let tenant: TestTenant;
beforeAll(async () => {
  t = await createTestApp();
  tenant = await t.newTenant('Secret Views Co');
});
afterAll(() => t.close());

const KEY = /sk_test_[A-Za-z0-9_-]{40,}/;
const SIGNING = /whsec_[A-Za-z0-9+/=_-]{20,}/;
const CODE = /[A-Z0-9]{5}-[A-Z0-9]{5}/;

/** POSTs a form from `page` and checks the answer is a redirect naming a one-time view, with no secret in it. */
async function postForSecret(c: PortalClient, page: string, url: string, form: Record<string, string> = {}) {
  await c.get(page);
  const res = await c.post(url, { _csrf: c.csrf(), ...form });
  expect(res.statusCode, res.body.slice(0, 300)).toBe(303);
  const location = String(res.headers.location);
  expect(location).toMatch(/[?&]shown=psv_[0-9a-z]{26}$/);
  expect(res.body).not.toMatch(KEY);
  expect(res.body).not.toMatch(SIGNING);
  return location;
}

/** Opens a one-time view: the first GET shows the secret, no-store; a reload says it was shown and shows nothing. */
async function expectShownOnce(c: PortalClient, location: string, secret: RegExp) {
  const first = await c.get(location);
  expect(first.statusCode).toBe(200);
  expect(first.headers['cache-control']).toBe('no-store');
  const value = secret.exec(first.body)?.[0];
  expect(value, 'the secret on the first view').toBeTruthy();
  expect(first.body).not.toContain('id="secret-gone"');
  const reload = await c.get(location);
  expect(reload.statusCode).toBe(200);
  expect(reload.headers['cache-control']).toBe('no-store');
  expect(reload.body).not.toContain(value!);
  expect(reload.body).not.toMatch(secret);
  expect(reload.body).toContain('id="secret-gone"');
  expect(reload.body).toContain('is not shown again');
  return value!;
}

describe('a new API key', () => {
  it('is shown once after the redirect; a reload, and another session, never see it again', async () => {
    const owner = await memberSession(t, tenant.organizationId, 'owner');
    const location = await postForSecret(owner.client, '/portal/keys', '/portal/keys', { name: 'Once' });
    // Another member's session, and the same member's other session, opening the link first: nothing, and the view
    // stays for the session that made it.
    const other = await memberSession(t, tenant.organizationId, 'admin');
    const sameMemberElsewhere = portalClient(t);
    const sessionId = await createSession(t.ctx.pool, {
      memberId: owner.memberId,
      pending: false,
      clientAddress: '127.0.0.1',
      userAgent: 'another browser',
    });
    sameMemberElsewhere.cookies.set('fcs_portal', sessionCookieValue(t.ctx.secrets.fileUrlSecret, sessionId));
    for (const c of [other.client, sameMemberElsewhere]) {
      const res = await c.get(location);
      expect(res.statusCode).toBe(200);
      expect(res.body).not.toMatch(KEY);
      expect(res.body).toContain('id="secret-gone"');
    }
    const key = await expectShownOnce(owner.client, location, KEY);
    const api = await t.app.inject({ method: 'GET', url: '/test/v1/organization', headers: { 'x-api-key': key } });
    expect(api.statusCode).toBe(200);
    // Nothing of it stays in the database.
    const { rows } = await t.ctx.pool.query('SELECT count(*)::int AS n FROM portal_secret_views');
    expect(rows[0].n).toBe(0);
  });

  it('keeps the key sealed until its view; a view expires and is purged', async () => {
    const owner = await memberSession(t, tenant.organizationId, 'owner');
    const location = await postForSecret(owner.client, '/portal/keys', '/portal/keys', { name: 'Sealed' });
    const { rows } = await t.ctx.pool.query<{ sealed: string }>('SELECT sealed FROM portal_secret_views');
    expect(rows).toHaveLength(1);
    expect(rows[0]!.sealed).toMatch(/^sealed:/);
    expect(rows[0]!.sealed).not.toMatch(KEY);
    await t.ctx.pool.query("UPDATE portal_secret_views SET expires_at = now() - interval '1 second'");
    const late = await owner.client.get(location);
    expect(late.body).not.toMatch(KEY);
    expect(late.body).toContain('id="secret-gone"');
    // The daily purge deletes a view never opened in time (OPS-3).
    await purgeExpiredTask.handler(t.ctx)({}, {} as never);
    expect((await t.ctx.pool.query('SELECT 1 FROM portal_secret_views')).rowCount).toBe(0);
  });

  it('of a roll is shown once too, and a view is only for the page of its kind', async () => {
    const owner = await memberSession(t, tenant.organizationId, 'owner');
    const location = await postForSecret(owner.client, '/portal/keys', `/portal/keys/${tenant.keyIds.test}/roll`, {
      overlapHours: '1',
    });
    // The webhooks page given the key's view shows no key and leaves the view to its own page.
    const elsewhere = await owner.client.get(location.replace('/portal/keys', '/portal/webhooks'));
    expect(elsewhere.body).not.toMatch(KEY);
    const rolled = await expectShownOnce(owner.client, location, KEY);
    expect(rolled).not.toBe(tenant.keys.test);
  });
});

describe('a webhook signing secret', () => {
  it('of a new endpoint, and of a roll, is shown once after the redirect', async () => {
    const dev = await memberSession(t, tenant.organizationId, 'developer');
    const made = await postForSecret(dev.client, '/portal/webhooks', '/portal/webhooks', {
      url: 'https://hooks.example.invalid/once',
      eventTypes: 'filing.status_changed',
    });
    const first = await expectShownOnce(dev.client, made, SIGNING);
    const { rows } = await t.ctx.pool.query<{ id: string }>(
      "SELECT id FROM webhook_endpoints WHERE organization_id = $1 AND url = 'https://hooks.example.invalid/once'",
      [tenant.organizationId],
    );
    const id = rows[0]!.id;
    const rolled = await postForSecret(dev.client, `/portal/webhooks/${id}`, `/portal/webhooks/${id}/roll-secret`);
    expect(rolled).toMatch(new RegExp(`^/portal/webhooks/${id}\\?shown=`));
    const second = await expectShownOnce(dev.client, rolled, SIGNING);
    expect(second).not.toBe(first);
  });
});

describe('two-factor recovery codes', () => {
  it('are shown once after enrolment; a reload shows none', async () => {
    const email = newEmail('codes');
    const { path } = await invite(t, tenant.organizationId, email, 'developer');
    const c = portalClient(t);
    await acceptInvitation(c, path);
    await c.get('/portal/account/two-factor');
    await c.post('/portal/account/two-factor/start', { _csrf: c.csrf() });
    const page = await c.get('/portal/account/two-factor');
    const secret = /<code class="secret">([A-Z2-7 ]+)<\/code>/.exec(page.body)![1]!.replace(/ /g, '');
    await c.get('/portal/account/two-factor');
    const confirmed = await c.post('/portal/account/two-factor/confirm', { _csrf: c.csrf(), code: totpCode(secret) });
    expect(confirmed.statusCode).toBe(303);
    expect(confirmed.body).not.toMatch(CODE);
    const location = String(confirmed.headers.location);
    const first = await expectShownOnce(c, location, CODE);
    expect((await c.get('/portal/account/two-factor')).body).not.toMatch(CODE);
    // A sign-in elsewhere never sees them either.
    const elsewhere = portalClient(t);
    await signInPassword(elsewhere, email);
    expect((await elsewhere.get(location)).body).not.toContain(first);
  });
});

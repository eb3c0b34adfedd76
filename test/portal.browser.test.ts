import net, { type AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BackgroundWorker, startWorker } from '../src/worker.js';
import { expectAccessible, launchChromium, screenshot } from './browser.js';
import { harborLightFormation, ok } from './e2e-fixtures.js';
import { createTestApp, type TestApp, type TestTenant } from './harness.js';
import {
  acceptInvitation,
  enrolTotp,
  forgetLastTotpStep,
  memberSession,
  newEmail,
  PASSWORD,
  type PortalClient,
  setProofAge,
  portalClient,
  switchTo,
  totpCode,
} from './portal-helpers.js';
import { type Receiver, startReceiver, waitFor } from './webhook-receiver.js';

/*
 * The partner portal in Chromium (PORTAL-1 to PORTAL-38): the walk of an integrator's engineer from the invitation to
 * a rolled key, every main page checked with axe-core on all its rules and impacts, and what a viewer and a member of
 * another organization may do. The portal answers only on the host of PORTAL_BASE_URL, so the app listens on a port
 * picked first and PORTAL_BASE_URL names it. Screenshots go to test-results/.
 */

let t: TestApp;
let worker: BackgroundWorker;
let receiver: Receiver;
let browser: Browser;
let origin: string;

/** A loopback port free right now (the app listens on it next). */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

beforeAll(async () => {
  const port = await freePort();
  origin = `http://localhost:${port}`;
  t = await createTestApp({ PORTAL_BASE_URL: `${origin}/portal`, WEBHOOK_RETRY_SCHEDULE: '0.1' });
  await t.app.listen({ host: '127.0.0.1', port });
  worker = await startWorker(t.ctx);
  receiver = await startReceiver();
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await worker?.stop();
  await receiver?.close();
  await t?.close();
});

async function shot(page: Page, name: string) {
  await screenshot(page, `portal-${name}`);
}

/** A desktop browser context; bypassCSP: the portal's CSP forbids inline scripts, and axe is injected as one. */
async function newDesktop(): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, bypassCSP: true });
  return { context, page: await context.newPage() };
}

/** A browser context signed in with the session of a test client (its portal cookie copied). */
async function browserOf(client: PortalClient): Promise<{ context: BrowserContext; page: Page }> {
  const desktop = await newDesktop();
  await desktop.context.addCookies([
    { name: 'fcs_portal', value: client.cookies.get('fcs_portal')!, url: `${origin}/portal/` },
  ]);
  return desktop;
}

/** An integrator API call with a given key, as the integrator's server sends it. */
async function api(key: string, method: 'GET' | 'POST', url: string, payload?: unknown) {
  const res = await t.app.inject({
    method,
    url: `/test/v1${url}`,
    payload: payload as any,
    headers: { 'x-api-key': key },
  });
  return { statusCode: res.statusCode, body: res.body, json: () => JSON.parse(res.body) };
}

/** Text of the page's main heading. */
const h1 = (page: Page) => page.getByRole('heading', { level: 1 }).textContent();

/** Clicks a submit button and waits for the page the form leads to. */
async function submit(page: Page, name: string | RegExp) {
  await Promise.all([page.waitForNavigation(), page.getByRole('button', { name }).click()]);
}

/** A placed test order of the tenant, advanced to filed so a filing.status_changed event goes out. */
async function placeFiledOrder(key: string, email: string): Promise<string> {
  const user = await ok(await api(key, 'POST', '/users', { fullName: 'Grace Hopper', email }), 201);
  const placed = await ok(
    await api(key, 'POST', '/orders', harborLightFormation(user.id, ['Harbor Light Holdings LLC'])),
    201,
  );
  const orderId: string = placed.items[0].orderId;
  const advanced = await t.app.inject({
    method: 'POST',
    url: `/test/v1/test_helpers/orders/${orderId}/advance`,
    payload: { filingStatus: 'filed', filingDate: '2025-02-03' },
    headers: { 'x-api-key': key },
  });
  expect(advanced.statusCode, advanced.body).toBe(200);
  return orderId;
}

/** Test money for the tenant's key (the sandbox's balance credit helper). */
async function creditTest(key: string) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/test/v1/test_helpers/balance-credits',
    payload: { amount: 5000 },
    headers: { 'x-api-key': key },
  });
  expect(res.statusCode, res.body).toBeLessThan(300);
}

describe('partner portal in a browser', () => {
  it('takes an invited owner from the invitation to a rolled key, with a webhook delivery resent on the way', async () => {
    const tenant = await t.newTenant('Lighthouse Integrations');
    const email = newEmail('owner');
    const invitation = await ok(
      await t.admin('POST', `/organizations/${tenant.organizationId}/invitations`, { email, role: 'owner' }),
      201,
    );
    expect(invitation.invitationUrl.startsWith(`${origin}/portal/invitation?token=`)).toBe(true);
    const { context, page } = await newDesktop();

    // The invitation: who invites whom, then a name and a password.
    await page.goto(invitation.invitationUrl);
    expect(await h1(page)).toBe('Join Lighthouse Integrations');
    expect(await page.locator('main').textContent()).toContain(email);
    await shot(page, '01-invitation');
    await page.getByLabel('Your name').fill('Ada Integrator');
    await page.getByLabel(/^Choose a password/).fill(PASSWORD);
    await page.getByLabel('The password again').fill(PASSWORD);
    await submit(page, 'Create my account');

    // An owner must enrol a second factor before anything else (PORTAL-5).
    expect(new URL(page.url()).pathname).toBe('/portal/account/two-factor');
    expect(await h1(page)).toBe('Two-factor authentication');
    await submit(page, 'Set up two-factor authentication');
    const secret = (await page.locator('code.secret').textContent())!.replace(/\s/g, '');
    expect(secret).toMatch(/^[A-Z2-7]{16,}$/);
    await shot(page, '02-two-factor-enrol');
    await page.getByLabel('The 6-digit code the app shows').fill(totpCode(secret));
    await submit(page, 'Turn on');
    expect(await page.getByRole('status').textContent()).toContain('Two-factor authentication is on');
    const codes = await page.locator('.codes code').allTextContents();
    expect(codes.length).toBeGreaterThanOrEqual(8);
    for (const code of codes) expect(code).toMatch(/^[A-Z0-9]{5}-[A-Z0-9]{5}$/);
    await shot(page, '03-recovery-codes');

    // Test data from here on: the banner says so.
    await submit(page, 'Test');
    expect(await page.getByRole('button', { name: 'Test' }).getAttribute('aria-pressed')).toBe('true');
    expect(await page.getByRole('note').textContent()).toContain('Test mode');

    // A test API key, shown once.
    await page.getByRole('link', { name: 'API keys' }).click();
    expect(await h1(page)).toContain('API keys');
    await page.getByLabel('Name').fill('Staging server');
    await submit(page, 'Create test key');
    const key = (await page.locator('#new-key').textContent())!.trim();
    expect(key).toMatch(/^sk_test_/);
    expect(await page.getByRole('row', { name: /Staging server/ }).textContent()).toContain('Active');
    await shot(page, '04-key-created');
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.waitForURL(/\/portal\/keys$/);
    expect(await page.getByRole('row', { name: /Staging server/ }).textContent()).not.toContain(key);
    expect(await page.locator('#new-key').count()).toBe(0);

    // A webhook endpoint pointing at the receiver, with its signing secret shown once.
    await page.getByRole('link', { name: 'Webhooks', exact: true }).click();
    await page.getByLabel('URL').fill(receiver.url);
    await page.getByLabel('filing.status_changed').check();
    await submit(page, 'Add endpoint');
    expect(await page.locator('#new-secret').textContent()).toMatch(/^whsec_/);
    expect(await page.getByRole('row', { name: receiver.url }).textContent()).toContain('Enabled');
    await shot(page, '05-endpoint-created');

    // The integrator's server places an order with the new key; filing it sends an event to the receiver.
    await creditTest(key);
    const graceEmail = newEmail('grace');
    const orderId = await placeFiledOrder(key, graceEmail);
    await waitFor('the filing event at the receiver', () =>
      receiver.requests.find((r) => r.event.type === 'filing.status_changed' && r.event.data.orderId === orderId),
    );

    // The delivery in the log, and its attempt.
    await page.getByRole('link', { name: 'Deliveries' }).click();
    // Placing and filing each change the filing status: one delivery each, newest first.
    const rows = page.getByRole('row', { name: /filing\.status_changed/ });
    await waitFor('both deliveries to show as succeeded', async () => {
      await page.reload();
      const texts = await rows.allTextContents();
      return texts.length === 2 && texts.every((text) => text.includes('succeeded'));
    });
    const row = rows.first();
    expect(await row.textContent()).toContain(receiver.url);
    await shot(page, '06-deliveries');
    const deliveryId = (await row.getByRole('link').textContent())!.trim();
    await Promise.all([page.waitForNavigation(), row.getByRole('link').click()]);
    expect(await h1(page)).toBe(`Delivery ${deliveryId}`);
    expect(await page.getByRole('heading', { name: 'Attempt 1' }).count()).toBe(1);
    expect(await page.locator('main').textContent()).toContain(orderId);

    // Resend: a second attempt shows up.
    const before = receiver.requests.length;
    await submit(page, 'Resend now');
    await waitFor('the resent delivery at the receiver', () => receiver.requests.length > before);
    await waitFor('the second attempt on the page', async () => {
      await page.reload();
      return (await page.getByRole('heading', { name: 'Attempt 2' }).count()) === 1;
    });
    await shot(page, '07-delivery-resent');

    // Roll the key: a new one is shown once, and the old one keeps working through the overlap.
    await page.getByRole('link', { name: 'API keys' }).click();
    const keyRow = page.getByRole('row', { name: /Staging server/ });
    await keyRow.getByLabel('Old key keeps working').selectOption({ index: 1 });
    await Promise.all([page.waitForNavigation(), keyRow.getByRole('button', { name: /Roll/ }).click()]);
    const rolled = (await page.locator('#new-key').textContent())!.trim();
    expect(rolled).toMatch(/^sk_test_/);
    expect(rolled).not.toBe(key);
    expect(await page.getByRole('status').textContent()).toMatch(/The key it replaces works until/);
    await shot(page, '08-key-rolled');
    for (const usable of [key, rolled]) {
      const grace = await ok(await api(usable, 'GET', `/users/${encodeURIComponent(graceEmail)}`), 200);
      expect(grace.fullName).toBe('Grace Hopper');
    }
    await context.close();
  });

  it('passes every axe rule on the funding pages: add funds, statements, a statement', async () => {
    const tenant = await t.newTenant('Axe Funding Partners');
    await tenant.api('POST', '/balance/top-ups', { amount: 120 });
    const owner = await memberSession(t, tenant.organizationId, 'owner');
    await switchTo(owner.client, 'test');
    const { context, page } = await browserOf(owner.client);
    for (const [pathname, what] of [
      ['/portal/balance/top-up', 'add funds'],
      ['/portal/balance/statements', 'statements'],
      [`/portal/balance/statements/${new Date().toISOString().slice(0, 7)}`, 'statement'],
    ]) {
      const res = await page.goto(`${origin}${pathname}`);
      expect(res!.status(), `${what} answers`).toBe(200);
      expect(await page.locator('script').count(), `scripts on ${what}`).toBe(0);
      await expectAccessible(page, what, { strict: true });
    }
    await context.close();
  });

  it('passes every axe rule, at every impact, on each signed-in page with test data present', async () => {
    const tenant = await t.newTenant('Axe Check Partners');
    const { orderId } = await seedTestData(tenant);
    const owner = await memberSession(t, tenant.organizationId, 'owner');
    await switchTo(owner.client, 'test');
    const { context, page } = await browserOf(owner.client);

    const check = async (pathname: string, what: string) => {
      const res = await page.goto(`${origin}${pathname}`);
      expect(res!.status(), `${what} answers`).toBe(200);
      expect(new URL(page.url()).pathname).toBe(pathname.split('?')[0]);
      expect(await page.locator('script').count(), `scripts on ${what}`).toBe(0);
      await expectAccessible(page, what, { strict: true });
      await shot(page, `axe-${what.replace(/[^a-z0-9]+/gi, '-')}`);
    };
    /** Opens the first link of the page's table and checks the page it leads to. */
    const checkFirstRow = async (what: string) => {
      const link = page.locator('main table tbody a').first();
      const href = (await link.getAttribute('href'))!;
      await check(href, what);
    };

    await check('/portal/', 'overview');
    await check('/portal/orders', 'orders');
    expect(await page.locator('main').textContent()).toContain(orderId);
    await check(`/portal/orders/${orderId}`, 'order');
    await check('/portal/companies', 'companies');
    await checkFirstRow('company');
    await check('/portal/users', 'users');
    await check('/portal/balance', 'balance');
    await check('/portal/prices', 'prices');
    await check('/portal/branding', 'branding');
    await check('/portal/balance/auto-recharge', 'auto-recharge');
    await check('/portal/keys', 'keys');
    await check('/portal/webhooks', 'webhooks');
    await checkFirstRow('webhook endpoint');
    await check('/portal/deliveries', 'deliveries');
    expect(await page.getByRole('row', { name: /succeeded/ }).count()).toBeGreaterThan(0);
    await checkFirstRow('delivery');
    await check('/portal/deliveries/recoveries', 'recoveries');
    await check('/portal/events', 'events');
    await checkFirstRow('event');
    await check('/portal/request-log', 'request log');
    expect(await page.getByRole('row', { name: /POST/ }).count()).toBeGreaterThan(0);
    await check('/portal/members', 'members');
    await check('/portal/audit-log', 'audit log');
    await check('/portal/sessions', 'sessions');
    await check('/portal/account/two-factor', 'two-factor');
    // A filter the page refuses shows its error tied to the field.
    const refused = await page.goto(`${origin}/portal/deliveries?from=yesterday`);
    expect(refused!.status()).toBe(400);
    await expectAccessible(page, 'deliveries with a refused filter', { strict: true });
    const missing = await page.goto(`${origin}/portal/orders/order_doesnotexist`);
    expect(missing!.status()).toBe(404);
    await expectAccessible(page, 'page not found', { strict: true });

    // Live: a change to a live key asks for the second factor again (PORTAL-10), on a page checked as the others.
    await setProofAge(t, owner.memberId, null);
    await page.goto(`${origin}/portal/keys`);
    await submit(page, 'Live');
    expect(await page.getByRole('note').count()).toBe(0);
    await check('/portal/keys', 'live keys');
    await page.getByLabel('Name').fill('Production');
    await submit(page, 'Create live key');
    expect(new URL(page.url()).pathname).toBe('/portal/step-up');
    expect(await h1(page)).toBe('Confirm it is you');
    await expectAccessible(page, 'step-up', { strict: true });
    await page.getByLabel('Code').fill('000000');
    await submit(page, 'Confirm');
    expect(await page.getByRole('alert').textContent()).toBeTruthy();
    await expectAccessible(page, 'step-up refused', { strict: true });
    await shot(page, 'axe-step-up-refused');
    await context.close();
  }, 180_000); // about twenty pages, each checked by axe on every rule: a minute and more on a loaded machine

  it('passes every axe rule, at every impact, on the signed-out pages and the second factor', async () => {
    const tenant = await t.newTenant('Signed Out Partners');
    const email = newEmail('owner');
    const invitation = await ok(
      await t.admin('POST', `/organizations/${tenant.organizationId}/invitations`, { email, role: 'owner' }),
      201,
    );
    const { context, page } = await newDesktop();
    const check = async (what: string) => {
      expect(await page.locator('script').count(), `scripts on ${what}`).toBe(0);
      await expectAccessible(page, what, { strict: true });
      await shot(page, `axe-${what.replace(/[^a-z0-9]+/gi, '-')}`);
    };

    await page.goto(invitation.invitationUrl);
    expect(await h1(page)).toBe('Join Signed Out Partners');
    await check('invitation');
    await page.goto(`${origin}/portal/invitation?token=not-a-token`);
    expect(await h1(page)).toBe('Invitation not valid');
    await check('invitation not valid');

    // The invitee becomes a member with a second factor (outside the browser: the walk above does it in one).
    const invitee = portalClient(t);
    await acceptInvitation(
      invitee,
      new URL(invitation.invitationUrl).pathname + new URL(invitation.invitationUrl).search,
    );
    const { secret } = await enrolTotp(invitee);
    await forgetLastTotpStep(t.ctx.pool, email);

    await page.goto(`${origin}/portal/sign-in`);
    expect(await h1(page)).toBe('Sign in to the partner portal');
    await check('sign-in');
    await page.getByLabel('E-mail address').fill(email);
    await page.getByLabel('Password').fill('not the password at all');
    await submit(page, 'Sign in');
    expect(await page.getByRole('alert').textContent()).toBeTruthy();
    await check('sign-in refused');

    await page.getByLabel('E-mail address').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await submit(page, 'Sign in');
    expect(new URL(page.url()).pathname).toBe('/portal/second-factor');
    await check('second factor');
    await page.getByLabel('Code').fill('000000');
    await submit(page, 'Continue');
    expect(await page.getByRole('alert').textContent()).toBeTruthy();
    await check('second factor refused');
    await page.getByLabel('Code').fill(totpCode(secret));
    await submit(page, 'Continue');
    expect(new URL(page.url()).pathname).toBe('/portal/');
    await submit(page, 'Sign out');

    await page.goto(`${origin}/portal/password-reset`);
    await check('password reset');
    await page.getByLabel('E-mail address of your account').fill(email);
    await submit(page, /Send/);
    await check('password reset sent');
    await page.goto(`${origin}/portal/password-reset/new?token=not-a-token`);
    await check('new password, link not valid');
    await context.close();
  });

  it('shows a viewer no write form, refuses the POSTs sent anyway, and shows another organization nothing', async () => {
    const tenant = await t.newTenant('Viewer Partners');
    const { orderId } = await seedTestData(tenant);
    const endpointId = (await ok(await tenant.api('GET', '/webhook-endpoints'), 200)).data[0].id as string;
    const viewer = await memberSession(t, tenant.organizationId, 'viewer');
    await switchTo(viewer.client, 'test');
    const { context, page } = await browserOf(viewer.client);

    /** The actions of the forms that change something (not the session's own sign-out and switches). */
    const writeForms = () =>
      page
        .locator('main form[method="post"]')
        .evaluateAll((forms) => forms.map((f) => (f as HTMLFormElement).getAttribute('action')));
    const pages = [
      '/portal/keys',
      '/portal/webhooks',
      `/portal/webhooks/${endpointId}`,
      '/portal/deliveries',
      '/portal/deliveries/recoveries',
      '/portal/branding',
      `/portal/orders/${orderId}`,
    ];
    for (const pathname of pages) {
      const res = await page.goto(`${origin}${pathname}`);
      expect(res!.status(), pathname).toBe(200);
      expect(await writeForms(), pathname).toEqual([]);
    }
    // The members page is not for viewers: no link to it, and refused when typed in.
    expect(await page.getByRole('navigation').getByRole('link', { name: 'Members' }).count()).toBe(0);
    expect((await page.goto(`${origin}/portal/members`))!.status()).toBe(403);
    await page.goto(`${origin}/portal/deliveries`);
    const deliveryHref = (await page.locator('main table tbody a').first().getAttribute('href'))!;
    await page.goto(`${origin}${deliveryHref}`);
    expect(await page.getByRole('button', { name: 'Resend now' }).count()).toBe(0);
    await shot(page, 'viewer-delivery');

    // The same POSTs a hand-made form would send, with the session's CSRF token: each is refused.
    const csrf = (await page.locator('form[action="/portal/sign-out"] input[name="_csrf"]').first().inputValue())!;
    const keyId = (
      await t.ctx.pool.query<{ id: string }>(
        `SELECT id FROM api_keys WHERE organization_id = $1 AND environment = 'test' LIMIT 1`,
        [tenant.organizationId],
      )
    ).rows[0]!.id;
    const posts: Array<[string, Record<string, string>]> = [
      ['/portal/keys', { name: 'Sneaky' }],
      [`/portal/keys/${keyId}/roll`, { overlapHours: '24' }],
      [`/portal/keys/${keyId}/revoke`, {}],
      ['/portal/webhooks', { url: receiver.url, eventTypes: 'filing.status_changed' }],
      [`/portal/webhooks/${endpointId}/roll-secret`, {}],
      [`${deliveryHref}/resend`, {}],
      ['/portal/branding', { primaryColor: '#000000' }],
    ];
    // The token is good: a switch the viewer may make goes through with it, so each 403 below is the role's.
    const allowed = await context.request.post(`${origin}/portal/environment`, {
      form: { _csrf: csrf, environment: 'test' },
      maxRedirects: 0,
    });
    expect(allowed.status()).toBe(303);
    for (const [url, form] of posts) {
      const res = await context.request.post(`${origin}${url}`, { form: { _csrf: csrf, ...form }, maxRedirects: 0 });
      expect(res.status(), url).toBe(403);
    }
    const keys = await ok(await tenant.api('GET', '/webhook-endpoints'), 200);
    expect(keys.data).toHaveLength(1);
    await context.close();

    // A member of another organization: none of this one's pages, and nothing of it in the lists.
    const other = await t.newTenant('Elsewhere Partners');
    const stranger = await memberSession(t, other.organizationId, 'owner');
    await switchTo(stranger.client, 'test');
    const away = await browserOf(stranger.client);
    for (const pathname of [`/portal/orders/${orderId}`, `/portal/webhooks/${endpointId}`, deliveryHref]) {
      const res = await away.page.goto(`${origin}${pathname}`);
      expect(res!.status(), pathname).toBe(404);
      const text = (await away.page.locator('main').textContent())!;
      expect(text, pathname).toContain('Not found');
      expect(text, pathname).not.toContain('Harbor Light Ventures');
      expect(text, pathname).not.toContain(receiver.url);
    }
    for (const pathname of [
      '/portal/orders',
      '/portal/companies',
      '/portal/webhooks',
      '/portal/deliveries',
      '/portal/events',
    ]) {
      await away.page.goto(`${origin}${pathname}`);
      const text = (await away.page.locator('main').textContent())!;
      expect(text, pathname).not.toContain(orderId);
      expect(text, pathname).not.toContain('Harbor Light Ventures');
      expect(text, pathname).not.toContain(receiver.url);
    }
    await shot(away.page, 'stranger-deliveries');
    await away.context.close();
  });
});

/**
 * Test data of a tenant through its test key: money, an endpoint at the receiver, a filed order (two deliveries), and
 * a refused API request. Waits until the deliveries succeeded.
 */
async function seedTestData(tenant: TestTenant): Promise<{ orderId: string }> {
  await ok(
    await tenant.api('POST', '/webhook-endpoints', { url: receiver.url, eventTypes: ['filing.status_changed'] }),
    201,
  );
  await creditTest(tenant.keys.test);
  const orderId = await placeFiledOrder(tenant.keys.test, newEmail('grace'));
  const refused = await tenant.api('POST', '/orders', { userId: 'user_nobody', filingState: 'XX' });
  expect(refused.statusCode).toBeGreaterThanOrEqual(400);
  await waitFor('both deliveries to succeed', async () => {
    const { rows } = await t.ctx.pool.query(
      `SELECT count(*)::int AS n FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
        WHERE e.organization_id = $1 AND d.status = 'succeeded'`,
      [tenant.organizationId],
    );
    return rows[0].n >= 2;
  });
  return { orderId };
}

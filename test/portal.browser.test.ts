import fs from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BackgroundWorker, startWorker } from '../src/worker.js';
import { expectAccessible, launchChromium } from './browser.js';
import { harborLightFormation, ok } from './e2e-fixtures.js';
import { createTestApp, type TestApp, type TestTenant } from './harness.js';
import { type PortalClient, memberSession, newEmail, PASSWORD, switchTo, totpCode } from './portal-helpers.js';
import { type Receiver, startReceiver, waitFor } from './webhook-receiver.js';

/*
 * The partner portal in Chromium (PORTAL-1 to PORTAL-38): the walk of an integrator's engineer from the invitation to
 * a rolled key, every main page checked with axe-core on all its rules and impacts, and what a viewer and a member of
 * another organization may do. The portal answers only on the host of PORTAL_BASE_URL, so the app listens on a port
 * picked first and PORTAL_BASE_URL names it. Screenshots go to test-results/.
 */
const SHOTS = path.resolve('test-results');

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
  fs.mkdirSync(SHOTS, { recursive: true });
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
  await page.screenshot({ path: path.join(SHOTS, `portal-${name}.png`), fullPage: true });
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
});

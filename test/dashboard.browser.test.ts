import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { expectAccessible, launchChromium, screenshot } from './browser.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCompany, createOrderRow } from './factories.js';
import { createTestApp, type TestApp, type TestTenant } from './harness.js';
import { mintLink } from './dashboard-helpers.js';
import { setVerifiedDomain } from './domain-helpers.js';

/*
 * Browser tests of the customer dashboard (DASH-3, DASH-11): Debian's Chromium driven by playwright-core.
 * The app listens on 127.0.0.1:<random port>; magic links minted by the API are opened at localhost:<port>
 * (same host name and path, the test server's port). The white-label test maps its host to 127.0.0.1 in
 * Chromium's resolver. Every page is checked with axe-core (no serious or critical violations) at a
 * phone-sized viewport, and screenshots go to test-results/.
 */

// A *.localhost name: browsers treat it as a secure context, so the Secure session cookie of a white-label host is
// kept over the test server's plain http as it is over https in production.
const WHITE_LABEL_HOST = 'portal.example.localhost';
const PHONE = { width: 390, height: 844 };

let t: TestApp;
let browser: Browser;
let origin: string;

beforeAll(async () => {
  t = await createTestApp();
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  // localhost: the host name of the default dashboard address, the only host its magic links open on.
  origin = `http://localhost:${(t.app.server.address() as AddressInfo).port}`;
  browser = await launchChromium([`--host-resolver-rules=MAP ${WHITE_LABEL_HOST} 127.0.0.1`]);
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

/** The same link served by the test server: its path, at `base` (the server's own origin, or the white-label host). */
const atServer = (link: string, base = origin) => `${base}${new URL(link).pathname}`;

async function newPhone(): Promise<{ context: BrowserContext; page: Page }> {
  // bypassCSP: the dashboard's CSP forbids inline scripts, and axe is injected as one.
  const context = await browser.newContext({
    viewport: PHONE,
    deviceScaleFactor: 2,
    isMobile: true,
    hasTouch: true,
    bypassCSP: true,
  });
  return { context, page: await context.newPage() };
}

/** Nothing wider than the phone screen (no sideways scrolling). */
async function expectFitsPhone(page: Page, what: string) {
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  expect(overflow, `${what} scrolls sideways`).toBeLessThanOrEqual(0);
}

async function shot(page: Page, name: string) {
  await screenshot(page, `dashboard-${name}`);
}

async function seedCompany(tenant: TestTenant, legalName: string) {
  const { user, company } = await createCompany(tenant, 'test', { legalName });
  const tenantKey = { organizationId: tenant.organizationId, environment: 'test' as const };
  const formation = await createOrderRow(t.ctx, tenantKey, {
    companyId: company.id,
    userId: user.id,
    orderType: 'formation',
  });
  const ein = await createOrderRow(t.ctx, tenantKey, { companyId: company.id, userId: user.id, orderType: 'ein' });
  await tenant.api('POST', `/test_helpers/orders/${formation.orderId}/advance`, {
    filingStatus: 'filed',
    filingDate: '2025-02-03',
  });
  await tenant.api('POST', `/test_helpers/orders/${ein.orderId}/advance`, {
    filingStatus: 'exception',
    exceptionCode: '484',
    exceptionMessage: 'The name on file with the IRS is spelled differently.',
  });
  await tenant.api('POST', `/test_helpers/orders/${formation.orderId}/documents`, { documentType: 'company' });
  return { user, company };
}

describe('dashboard in a browser', () => {
  it('opens a magic link, shows the company and its filings, buys with the sandbox card, and refuses the used link', async () => {
    const tenant = await t.newTenant('Northwind Filings');
    await tenant.api('PATCH', '/organization', { dashboardBilling: 'customer' }, { env: 'live' });
    const { user, company } = await seedCompany(tenant, 'Blue Fern Studio LLC');
    const link = atServer(await mintLink(tenant, { userId: user.id, companyId: company.id }));
    const { context, page } = await newPhone();

    await page.goto(link);
    expect(new URL(page.url()).pathname).toBe(`/dashboard/companies/${company.id}`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Blue Fern Studio LLC');
    expect(await page.locator('.order', { hasText: 'Company formation' }).locator('.badge').textContent()).toBe(
      'Filed',
    );
    expect(await page.locator('.order', { hasText: 'EIN' }).textContent()).toContain(
      'EIN SSN does not match the person',
    );
    await expectAccessible(page, 'company page');
    await expectFitsPhone(page, 'company page');
    await shot(page, 'company-phone');

    await page.getByRole('link', { name: 'Order a filing' }).click();
    await expectAccessible(page, 'product list');
    await expectFitsPhone(page, 'product list');
    await shot(page, 'products-phone');
    await page.getByRole('link', { name: 'Choose Annual report' }).click();
    await expectAccessible(page, 'checkout form');
    await expectFitsPhone(page, 'checkout form');

    const pay = async (number: string) => {
      await page.getByLabel('Name on card').fill('Ada Lovelace');
      await page.getByLabel('Card number').fill(number);
      await page.getByLabel('Expiry (MM/YY)').fill('12/34');
      await page.getByLabel('Security code').fill('123');
      await page.getByRole('button', { name: /^Pay \$/ }).click();
      await page.waitForLoadState('load');
    };
    await pay('4000 0000 0000 0002');
    expect(await page.getByRole('alert').textContent()).toContain('Your card was declined');
    await expectAccessible(page, 'declined checkout');
    await shot(page, 'checkout-declined-phone');

    await pay('4242 4242 4242 4242');
    expect(new URL(page.url()).pathname).toBe(`/dashboard/companies/${company.id}`);
    expect(await page.getByRole('status').textContent()).toContain('your order is placed');
    expect(await page.locator('.order', { hasText: 'Annual report' }).locator('.badge').textContent()).toBe(
      'Submitted',
    );
    await shot(page, 'order-placed-phone');

    await page.getByRole('link', { name: 'Orders' }).click();
    expect(await page.locator('.order').count()).toBe(3);
    await expectAccessible(page, 'order history');
    await shot(page, 'orders-phone');

    await page.getByRole('link', { name: 'Companies' }).click();
    await page.getByRole('link', { name: 'Form a new company' }).click();
    await expectAccessible(page, 'formation packages');
    await expectFitsPhone(page, 'formation packages');
    await shot(page, 'formation-packages-phone');
    await page.getByRole('link', { name: 'Choose Standard' }).click();
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Standard formation package');
    await expectAccessible(page, 'formation form');
    await expectFitsPhone(page, 'formation form');
    await shot(page, 'formation-form-phone');
    await page.setViewportSize({ width: 1280, height: 900 });
    await shot(page, 'formation-form-desktop');
    await page.setViewportSize(PHONE);

    const fresh = await browser.newContext({ viewport: PHONE, bypassCSP: true });
    const again = await fresh.newPage();
    const response = await again.goto(link);
    expect(response!.status()).toBe(410);
    expect(await again.getByRole('heading', { level: 1 }).textContent()).toBe('This link was used or has expired');
    await expectAccessible(again, 'refusal page');
    await shot(again, 'link-used-phone');
    await fresh.close();
    await context.close();
  });

  // ORD-EIN-8: the EIN order the IRS refused (484) links to the correction form from the company page.
  it('corrects a refused EIN responsible party from the company page', async () => {
    const tenant = await t.newTenant('Correction Filings');
    const { user, company } = await seedCompany(tenant, 'Quiet Harbor LLC');
    const link = atServer(await mintLink(tenant, { userId: user.id, companyId: company.id }));
    const { context, page } = await newPhone();
    await page.goto(link);
    await page.getByRole('link', { name: /Correct the responsible party/ }).click();
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Correct the responsible party');
    await expectAccessible(page, 'correction form');
    await expectFitsPhone(page, 'correction form');
    await shot(page, 'ein-correction-phone');

    await page.getByLabel('First name').fill('Ada');
    await page.getByLabel('Last name').fill('King');
    await page.getByLabel('Tax ID type').selectOption('SSN');
    await page.getByLabel('SSN or ITIN').fill('666-12-3456');
    await page.getByLabel('Role in the company').fill('Managing Member');
    await page.getByRole('button', { name: 'Send the corrected details' }).click();
    await page.waitForLoadState('load');
    expect(await page.getByRole('alert').textContent()).toContain('is not a valid SSN');
    expect(await page.getByLabel('SSN or ITIN').inputValue()).toBe('');
    await expectAccessible(page, 'correction form with an error');
    await shot(page, 'ein-correction-error-phone');

    await page.getByLabel('SSN or ITIN').fill('272-56-8904');
    await page.getByRole('button', { name: 'Send the corrected details' }).click();
    await page.waitForLoadState('load');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toContain('Thank you');
    await expectAccessible(page, 'correction sent');
    await page.goto(`${origin}/dashboard/companies/${company.id}`);
    expect(await page.locator('.order', { hasText: 'EIN' }).locator('.badge').textContent()).toBe('With the state');
    await context.close();
  });

  it("serves the branded dashboard on the organization's white-label host", async () => {
    const tenant = await t.newTenant('Acme Legal Partners');
    await tenant.api(
      'PATCH',
      '/organization',
      {
        branding: { logoUrl: 'https://cdn.acme-legal.test/logo.svg', primaryColor: '#f2c744', accentColor: '#7c3aed' },
      },
      { env: 'live' },
    );
    await setVerifiedDomain(t, tenant, WHITE_LABEL_HOST);
    const { user, company } = await seedCompany(tenant, 'Harbor Light Bakery LLC');
    const minted = await mintLink(tenant, { userId: user.id });
    expect(minted.startsWith(`https://${WHITE_LABEL_HOST}/auth/`)).toBe(true);
    const port = new URL(origin).port;
    const { context, page } = await newPhone();
    await context.route('https://cdn.acme-legal.test/logo.svg', (route) =>
      route.fulfill({
        contentType: 'image/svg+xml',
        body: '<svg xmlns="http://www.w3.org/2000/svg" width="180" height="36" viewBox="0 0 180 36"><rect width="36" height="36" rx="8" fill="#1f2933"/><text x="46" y="25" font-family="Arial" font-weight="700" font-size="18" fill="#1f2933">Acme Legal</text></svg>',
      }),
    );

    await page.goto(atServer(minted, `http://${WHITE_LABEL_HOST}:${port}`));
    expect(new URL(page.url()).host).toBe(`${WHITE_LABEL_HOST}:${port}`);
    expect(new URL(page.url()).pathname).toBe('/');
    expect(await page.getByRole('img', { name: 'Acme Legal Partners' }).isVisible()).toBe(true);
    await page.getByRole('link', { name: 'Harbor Light Bakery LLC' }).click();
    expect(new URL(page.url()).pathname).toBe(`/companies/${company.id}`);
    expect(await page.locator('.order', { hasText: 'Company formation' }).locator('.badge').textContent()).toBe(
      'Filed',
    );
    await expectAccessible(page, 'white-label company page');
    await expectFitsPhone(page, 'white-label company page');
    await shot(page, 'white-label-phone');

    await page.setViewportSize({ width: 1280, height: 900 });
    await shot(page, 'white-label-desktop');
    await context.close();
  });
});

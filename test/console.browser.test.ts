import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import type { Browser, Page } from 'playwright-core';
import { expectAccessible, launchChromium, screenshot } from './browser.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BackgroundWorker, startWorker } from '../src/worker.js';
import { newOperator } from './console-helpers.js';
import { createCompany } from './factories.js';
import { harborLightFormation, ok } from './e2e-fixtures.js';
import { createTestApp, type TestApp } from './harness.js';
import { einObject } from './orders-fixtures.js';
import { startReceiver, verifyWithStripe, waitFor, type Receiver } from './webhook-receiver.js';

// CONS-2 to CONS-4: an operator walks one LIVE formation through the console, from submitted to filed with an
// exception on the way and a document upload; the integrator's receiver must get every event.

let t: TestApp;
let worker: BackgroundWorker;
let receiver: Receiver;
let browser: Browser;
let base: string;

beforeAll(async () => {
  t = await createTestApp();
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  const address = t.app.server.address();
  base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
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
  await screenshot(page, `console-${name}`);
}

/** Fills an order-page action form (scoped by its hidden action), goes to the confirmation page and confirms. */
async function act(
  page: Page,
  action: string,
  fill: (form: ReturnType<Page['locator']>) => Promise<void>,
  shotName?: string,
) {
  const form = page.locator(`form.action:has(input[name="action"][value="${action}"])`);
  await fill(form);
  await form.locator('button[type="submit"]').click();
  await page.waitForURL(/\/review$/);
  if (shotName) await shot(page, shotName);
  await page.locator('input[name="confirm"]').check();
  await page.locator('form[action$="/transition"] button[type="submit"]').click();
  await page.waitForURL(/\/console\/orders\/order_[a-z0-9]+$/);
  // The confirmation the operator sees after the transition (a locator object is always truthy: wait for the element).
  await page.locator('.flash-ok').waitFor({ state: 'visible', timeout: 10_000 });
  expect(await page.locator('.flash-ok').count()).toBe(1);
}

async function samplePdf(): Promise<string> {
  const doc = await PDFDocument.create();
  const pdfPage = doc.addPage([612, 792]);
  pdfPage.drawText('Certificate of Formation - Harbor Light Ventures LLC', {
    x: 72,
    y: 700,
    size: 14,
    font: await doc.embedFont(StandardFonts.Helvetica),
  });
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'console-')), 'certificate-of-formation.pdf');
  fs.writeFileSync(file, await doc.save());
  return file;
}

describe('console in a real browser', () => {
  it('walks a live formation from submitted to filed, with an exception and an upload, and the receiver gets every event', async () => {
    const operator = await newOperator(t.ctx.pool, 'Frances Filer');
    const tenant = await t.newTenant('Harbor Platform');
    await ok(
      await t.admin('POST', `/organizations/${tenant.organizationId}/balance-credits`, {
        environment: 'live',
        amount: 2500,
        note: 'Wire 2025-03 ref 4411',
      }),
      201,
    );
    const endpoint = await ok(
      await tenant.api(
        'POST',
        '/webhook-endpoints',
        { url: receiver.url, eventTypes: ['filing.status_changed', 'document.uploaded'] },
        { env: 'live' },
      ),
      201,
    );
    const user = await ok(
      await tenant.api('POST', '/users', { fullName: 'Grace Hopper', email: 'grace@example.com' }, { env: 'live' }),
      201,
    );
    const placed = await ok(
      await tenant.api(
        'POST',
        '/orders',
        harborLightFormation(user.id, ['Harbor Light Holdings LLC', 'Harborlight Ventures LLC']),
        { env: 'live' },
      ),
      201,
    );
    const orderId: string = placed.items[0].orderId;

    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const page = await context.newPage();

    // Sign in: the queue sends us to the sign-in page and back.
    await page.goto(`${base}/console/queue`);
    await page.waitForURL(/\/console\/login/);
    await shot(page, '01-login');
    await page.fill('input[name="email"]', operator.email);
    await page.fill('input[name="password"]', operator.password);
    await page.click('button[type="submit"]');
    await page.waitForURL(/\/console\/queue$/);
    const cookie = (await context.cookies()).find((c) => c.name === 'fcs_console')!;
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/console' });

    // The queue shows the live order, with its product, state and organization.
    const row = page.locator('table.queue tbody tr', { has: page.locator(`a:text("${orderId}")`) });
    await expect(row.textContent()).resolves.toMatch(
      /submitted[\s\S]*Formation[\s\S]*DE[\s\S]*Harbor Platform[\s\S]*Harbor Light Ventures LLC/,
    );
    await shot(page, '02-queue');

    // The order page shows what the request carried.
    await row.locator('a.mono').click();
    await page.waitForURL(new RegExp(`/console/orders/${orderId}$`));
    const body = await page.textContent('main');
    for (const text of [
      'Harbor Light Ventures LLC',
      'Grace Hopper',
      'Managing Member',
      'Delaware Agents Inc',
      '8 The Green, Dover, DE 19901',
      'Harbor Light Holdings LLC',
      '1209 Orange Street, Wilmington, DE 19801, US',
    ]) {
      expect(body, text).toContain(text);
    }
    await shot(page, '03-order-submitted');

    // submitted -> pending
    await act(page, 'pending', async () => undefined, '04-confirm-pending');
    expect(await page.textContent('.flash-ok')).toContain('Order is now pending');

    // pending -> exception 465 with a message; the confirmation shows the code's reason.
    const message = 'Harbor Light Ventures LLC is taken in Delaware; please choose another name';
    await act(
      page,
      'exception',
      async (form) => {
        await form.locator('select[name="exceptionCode"]').selectOption('465');
        await form.locator('textarea[name="exceptionMessage"]').fill(message);
      },
      '05-confirm-exception',
    );
    expect(await page.textContent('.callout-exception')).toContain('465: Entity name not available');
    await shot(page, '06-order-exception');

    // exception -> resolved (back to pending)
    await act(page, 'resolve', async (form) => {
      await form.locator('select[name="resumeTo"]').selectOption('pending');
    });
    expect(await page.textContent('.flash-ok')).toContain('Order is now pending');

    // pending -> filed with a filing date
    const filingDate = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    await act(
      page,
      'filed',
      async (form) => {
        await form.locator('input[name="filingDate"]').fill(filingDate);
      },
      '07-confirm-filed',
    );
    expect(await page.textContent('.flash-ok')).toContain('Order is now filed');

    // Upload the filed certificate.
    const upload = page.locator('form[action$="/documents"]');
    await upload.locator('select[name="documentType"]').selectOption('articles_of_organization');
    await upload.locator('input[name="file"]').setInputFiles(await samplePdf());
    await upload.locator('input[name="confirm"]').check();
    await upload.locator('button[type="submit"]').click();
    await page.waitForURL(new RegExp(`/console/orders/${orderId}$`));
    expect(await page.textContent('.flash-ok')).toContain(
      'Uploaded certificate-of-formation.pdf as articles_of_organization',
    );

    // Every change names the operator who made it.
    const { rows: history } = await t.ctx.pool.query(
      'SELECT to_status, actor FROM order_status_history WHERE order_id = $1 ORDER BY created_at, id',
      [orderId],
    );
    expect(history.map((h) => h.to_status)).toEqual(['submitted', 'pending', 'exception', 'pending', 'filed']);
    expect(history.slice(1).every((h) => h.actor === `operator:${operator.id}`)).toBe(true);
    expect(await page.locator('#history .actor').allTextContents()).toEqual(
      expect.arrayContaining([expect.stringContaining('Frances Filer')]),
    );

    // The receiver got every event, signed, in order.
    await waitFor('six events at the receiver', () => receiver.requests.length >= 6, 30_000);
    await waitFor('every delivery to settle', async () => {
      const { rows } = await t.ctx.pool.query(`SELECT status FROM webhook_deliveries WHERE endpoint_id = $1`, [
        endpoint.id,
      ]);
      return rows.length === 6 && rows.every((r) => r.status === 'succeeded');
    });
    expect(receiver.requests).toHaveLength(6);
    for (const req of receiver.requests) verifyWithStripe(req, endpoint.secret);
    const received = receiver.requests.map((q) => q.event).sort((a, b) => (a.id < b.id ? -1 : 1));
    expect(received.map((e) => [e.type, e.data.filingStatus ?? e.data.documentType])).toEqual([
      ['filing.status_changed', 'submitted'],
      ['filing.status_changed', 'pending'],
      ['filing.status_changed', 'exception'],
      ['filing.status_changed', 'pending'],
      ['filing.status_changed', 'filed'],
      ['document.uploaded', 'articles_of_organization'],
    ]);
    expect(received.every((e) => e.data.orderId === orderId)).toBe(true);
    expect(received[2].data).toMatchObject({
      exceptionCode: '465',
      exceptionReason: 'Entity name not available',
      exceptionMessage: message,
    });
    expect(received[4].data).toMatchObject({ filingDate });

    // The order page now shows the deliveries with their 200 attempts.
    await page.reload();
    expect(await page.locator('#events .badge-d-succeeded').count()).toBe(6);
    expect(await page.locator('#events .attempt-ok').count()).toBeGreaterThanOrEqual(6);
    await shot(page, '08-order-filed');

    // Business pages render for this organization.
    for (const [url, name] of [
      ['/console/organizations', '09-organizations'],
      [`/console/organizations/${tenant.organizationId}`, '10-organization'],
      [`/console/prices?organizationId=${tenant.organizationId}`, '11-prices'],
      ['/console/fees', '12-fees'],
      ['/console/fees/DE', '13-fee-edit'],
      [`/console/webhooks/${tenant.organizationId}`, '14-webhook-health'],
    ] as const) {
      const res = await page.goto(`${base}${url}`);
      expect(res?.status(), url).toBe(200);
      await shot(page, name);
    }
    await page.goto(`${base}/console/queue?status=exception`);
    await shot(page, '15-queue-empty');
    await context.close();
  }, 180_000);

  // ORD-EIN-7: the reveal asks why, shows the number with the SS-4 worksheet, hides it after 60 seconds without a
  // script, and lists the reveal on the order page; every page passes axe.
  it("reveals an EIN order's tax id with its worksheet for 60 seconds, recorded on the order page", async () => {
    const operator = await newOperator(t.ctx.pool, 'Tomas Taxid');
    const tenant = await t.newTenant('Reveal Platform');
    await ok(await tenant.api('POST', '/test_helpers/balance-credits', { amount: 2500 }), 201);
    const user = await ok(
      await tenant.api('POST', '/users', { fullName: 'Ada Lovelace', email: 'ada@example.com' }),
      201,
    );
    const body = harborLightFormation(user.id, ['Harbor Light Holdings LLC']);
    const ein = einObject({ responsibleParty: { ...einObject().responsibleParty, taxId: '247-81-3590' } });
    const placed = await ok(await tenant.api('POST', '/orders', { ...body, ein }), 201);
    const orderId: string = placed.items.find((i: { orderType: string }) => i.orderType === 'ein').orderId;

    // bypassCSP: axe is injected as an inline script, which the console's policy forbids.
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 }, bypassCSP: true });
    const page = await context.newPage();
    await page.goto(`${base}/console/orders/${orderId}`);
    await page.fill('input[name="email"]', operator.email);
    await page.fill('input[name="password"]', operator.password);
    await page.click('button[type="submit"]');
    await page.waitForURL(new RegExp(`/console/orders/${orderId}$`));
    expect(await page.textContent('main')).not.toContain('247-81-3590');
    await expectAccessible(page, 'EIN order page');

    await page.getByRole('link', { name: 'Reveal tax id…' }).click();
    await page.waitForURL(new RegExp(`/console/orders/${orderId}/tax-id$`));
    await expectAccessible(page, 'reveal reason form');
    await page.getByLabel('Why you need it').fill('SS-4 for the IRS online assistant');
    await page.getByRole('button', { name: 'Reveal tax id' }).click();
    await page.waitForLoadState('load');
    const number = page.locator('.reveal-number code');
    expect(await number.textContent()).toBe('247-81-3590');
    expect(await number.isVisible()).toBe(true);
    expect(await page.locator('.reveal-expired-note').isVisible()).toBe(false);
    expect(await page.locator('table.worksheet tbody tr').count()).toBeGreaterThanOrEqual(28);
    await expectAccessible(page, 'revealed tax id with its worksheet');
    await shot(page, '16-tax-id-revealed');

    // The stylesheet hides it after 60 s: the animation waits 60 s; played to its end, the number is hidden and the
    // note shows.
    expect(await page.locator('#revealed').evaluate((el) => getComputedStyle(el).animationDelay)).toBe('60s');
    await page.evaluate(() => {
      for (const a of document.getAnimations()) a.finish();
    });
    expect(await number.isVisible()).toBe(false);
    expect(await page.locator('.reveal-expired-note').isVisible()).toBe(true);
    await expectAccessible(page, 'tax id hidden after 60 seconds');
    await shot(page, '17-tax-id-hidden');

    await page.getByRole('link', { name: 'back to the order' }).click();
    await page.waitForURL(new RegExp(`/console/orders/${orderId}$`));
    const reveals = page.locator('table.reveals tbody tr');
    expect(await reveals.count()).toBe(1);
    expect(await reveals.textContent()).toMatch(
      /Tomas Taxid[\s\S]*SS-4 for the IRS online assistant[\s\S]*127\.0\.0\.1/,
    );
    expect(await page.textContent('main')).not.toContain('247-81-3590');
    await context.close();
  }, 180_000);

  // CAL-36: the company page with its calendar and the anchor override forms passes axe, empty, with a refused form
  // (its error names the field) and with an override listed.
  it("sets and clears an anchor date override on a company's page; every state of the page passes axe", async () => {
    const operator = await newOperator(t.ctx.pool, 'Cora Calendar');
    const tenant = await t.newTenant('Calendar Platform');
    const { company } = await createCompany(tenant, 'test', { formationState: 'IL', formationDate: '2025-03-15' });
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 }, bypassCSP: true });
    const page = await context.newPage();
    const url = `${base}/console/companies/${company.id}?from=2027-01-01&to=2027-12-31`;
    await page.goto(url);
    await page.fill('input[name="email"]', operator.email);
    await page.fill('input[name="password"]', operator.password);
    await page.click('button[type="submit"]');
    await page.waitForURL(/\/console\/companies\//);
    expect(await page.textContent('table.calendar')).toContain('2027-03-02');
    await expectAccessible(page, 'company page');

    await page.getByLabel('State', { exact: true }).selectOption('IL');
    await page.getByLabel('Anchor date', { exact: true }).fill('2026-07-01');
    await page.getByLabel('Event', { exact: true }).selectOption('conversion');
    await page.getByLabel('Reason (kept in the change log)').fill(' ');
    // The browser would refuse an empty required field itself; a blank reason reaches the server.
    await page.getByRole('button', { name: 'Set anchor date' }).click();
    await page.waitForLoadState('load');
    expect(await page.textContent('[role="alert"]')).toContain('Reason: is required');
    await expectAccessible(page, 'company page with a refused override');

    await page.getByLabel('Reason (kept in the change log)').fill('Converted from a corporation on 2026-07-01');
    await page.getByRole('button', { name: 'Set anchor date' }).click();
    await page.waitForURL(new RegExp(`/console/companies/${company.id}\\?from=2027-01-01&to=2027-12-31$`));
    expect(await page.textContent('table.overrides')).toContain('2026-07-01');
    expect(await page.textContent('table.calendar')).toContain('2027-06-30');
    await expectAccessible(page, 'company page with an override');
    await shot(page, '18-company-override');

    await page.getByLabel('Reason for clearing IL').fill('Entered for the wrong company');
    await page.getByRole('button', { name: 'Clear IL override' }).click();
    await page.waitForURL(new RegExp(`/console/companies/${company.id}\\?from=2027-01-01&to=2027-12-31$`));
    expect(await page.locator('table.overrides').count()).toBe(0);
    await context.close();
  }, 180_000);
});

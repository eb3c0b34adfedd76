import { describe, expect, it } from 'vitest';
import { balanceOf, fundingSuite, payByCard } from './funding-helpers.js';
import type { TestApp } from './harness.js';
import { memberSession } from './portal-helpers.js';

/*
 * Funding from the partner portal: owners and admins add funds (FUND-24: a live top-up goes on to Stripe Checkout, a
 * test one credits at once, the limits shown and enforced) and read monthly statements as a printable page and CSV
 * (FUND-23); developers and viewers are refused by the server whatever the page showed.
 */

const suite = fundingSuite();
const { stripe } = suite;
/** The suite's app (set by fundingSuite's beforeAll). */
const app = (): TestApp => suite.t;

const formKeyOf = (html: string) => /name="formKey" value="([^"]+)"/.exec(html)![1]!;

describe('portal top-ups', () => {
  it('lets an owner add test money at once and open a live Stripe Checkout page, with the limits shown', async () => {
    const t = app();
    const tenant = await t.newTenant('Portal Funds Co');
    const { client } = await memberSession(t, tenant.organizationId, 'owner');
    const form = await client.get('/portal/balance/top-up');
    expect(form.statusCode).toBe(200);
    expect(form.body).toContain('<strong data-top-up-min>$10.00</strong>');
    expect(form.body).toContain('<strong data-top-up-max>$50,000.00</strong>');
    expect(form.body).toContain('Add test money');

    // Test: credited at once.
    const added = await client.post('/portal/balance/top-up', {
      _csrf: client.csrf(),
      formKey: formKeyOf(form.body),
      amount: '25.50',
    });
    expect(added.statusCode, added.body).toBe(303);
    expect(added.headers.location).toBe('/portal/balance');
    expect(await balanceOf(tenant, 'test')).toBe(25.5);

    // Live: on to Stripe's page; a double submit of the same form opens one page.
    await client.post('/portal/environment', { _csrf: client.csrf(), environment: 'live' });
    const liveForm = await client.get('/portal/balance/top-up');
    expect(liveForm.body).toContain('Continue to payment');
    expect(String(liveForm.headers['content-security-policy'])).toContain(
      "form-action 'self' https://checkout.stripe.com",
    );
    const key = formKeyOf(liveForm.body);
    const sessions = stripe.callsTo('/v1/checkout/sessions').length;
    const go = await client.post('/portal/balance/top-up', { _csrf: client.csrf(), formKey: key, amount: '1,200' });
    const again = await client.post('/portal/balance/top-up', { _csrf: client.csrf(), formKey: key, amount: '1,200' });
    expect(go.statusCode, go.body).toBe(303);
    expect(go.headers.location).toMatch(/^https:\/\/checkout\.stripe\.com\/c\/pay\/cs_test_/);
    expect(again.headers.location).toBe(go.headers.location);
    expect(stripe.callsTo('/v1/checkout/sessions').length).toBe(sessions + 1);
    expect(stripe.callsTo('/v1/checkout/sessions').at(-1)!.form['line_items[0][price_data][unit_amount]']).toBe(
      '120000',
    );
    const listed = (await tenant.api('GET', '/balance/top-ups', undefined, { env: 'live' })).json().data;
    expect(listed).toEqual([expect.objectContaining({ amount: 1200, status: 'pending' })]);
    expect(await balanceOf(tenant, 'live')).toBe(0);
    // Credited only when Stripe says it is paid.
    const sessionId = String(go.headers.location).split('/').at(-1)!;
    await payByCard(t, { topUp: listed[0], sessionId, created: null as never }, 'pi_portal_1');
    expect(await balanceOf(tenant, 'live')).toBe(1200);
  });

  it('refuses amounts outside the limits beside the field, before Stripe is called', async () => {
    const t = app();
    const tenant = await t.newTenant('Portal Funds Limits Co');
    const { client } = await memberSession(t, tenant.organizationId, 'admin');
    await client.get('/portal/balance/top-up');
    await client.post('/portal/environment', { _csrf: client.csrf(), environment: 'live' });
    const sessions = stripe.callsTo('/v1/checkout/sessions').length;
    for (const amount of ['5', '50000.01', 'ten', '12.345']) {
      const res = await client.post('/portal/balance/top-up', { _csrf: client.csrf(), formKey: '', amount });
      expect(res.statusCode, amount).toBe(400);
      expect(res.body).toContain('id="err-amount"');
      expect(res.body).toContain('aria-invalid="true"');
    }
    expect(stripe.callsTo('/v1/checkout/sessions').length).toBe(sessions);
    expect((await tenant.api('GET', '/balance/top-ups', undefined, { env: 'live' })).json().data).toEqual([]);
  });

  it('refuses developers and viewers on the server, and shows them no link', async () => {
    const t = app();
    const tenant = await t.newTenant('Portal Funds Roles Co');
    for (const role of ['developer', 'viewer'] as const) {
      const { client } = await memberSession(t, tenant.organizationId, role);
      await client.get('/portal/');
      expect((await client.get('/portal/balance/top-up')).statusCode).toBe(403);
      const posted = await client.post('/portal/balance/top-up', { _csrf: client.csrf(), formKey: 'x', amount: '50' });
      expect(posted.statusCode).toBe(403);
      expect((await client.get('/portal/balance/statements')).statusCode).toBe(403);
      const month = new Date().toISOString().slice(0, 7);
      expect((await client.get(`/portal/balance/statements/${month}`)).statusCode).toBe(403);
      expect((await client.get(`/portal/balance/statements/${month}?format=csv`)).statusCode).toBe(403);
    }
    expect(await balanceOf(tenant, 'test')).toBe(0);
    const { client: owner } = await memberSession(t, tenant.organizationId, 'owner');
    const balance = await owner.get('/portal/balance');
    expect(balance.body).toContain('href="/portal/balance/top-up"');
    expect(balance.body).toContain('href="/portal/balance/statements"');
  });
});

describe('portal statements', () => {
  it('lists the months and shows each as a printable page and as CSV, closing at the balance', async () => {
    const t = app();
    const tenant = await t.newTenant('Portal Statement Co');
    await tenant.api('POST', '/balance/top-ups', { amount: 300 });
    await tenant.api('POST', '/balance/top-ups', { amount: 45.25 });
    const { client } = await memberSession(t, tenant.organizationId, 'admin');
    const month = new Date().toISOString().slice(0, 7);
    const list = await client.get('/portal/balance/statements');
    expect(list.statusCode).toBe(200);
    expect(list.body).toContain(`<tr data-month="${month}">`);
    const page = await client.get(`/portal/balance/statements/${month}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<dd data-opening>$0.00</dd>');
    expect(page.body).toContain('<dd data-closing>$345.25</dd>');
    expect([...page.body.matchAll(/<tr data-entry="txn_/g)]).toHaveLength(2);
    expect(page.body).toContain('Balance so far');
    const csv = await client.get(`/portal/balance/statements/${month}?format=csv`);
    expect(csv.statusCode).toBe(200);
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    const api = await tenant.api('GET', `/balance/statements/${month}?format=csv`);
    const lines = (text: string) => text.split('\r\n').filter(Boolean);
    // The same file as the API's, but for the moment "so far" of the closing row.
    expect(lines(csv.body).slice(0, -1)).toEqual(lines(api.body).slice(0, -1));
    expect(lines(csv.body)).toHaveLength(5);
    expect(lines(csv.body).at(-1)).toMatch(/,closing_balance,.*,345\.25,USD$/);
    expect((await client.get('/portal/balance/statements/2025-13')).statusCode).toBe(400);
    // A format there is not is refused, as the API refuses it, instead of answered with the page.
    const xml = await client.get(`/portal/balance/statements/${month}?format=xml`);
    expect(xml.statusCode).toBe(400);
    expect(xml.body).toContain('format');
  });
});

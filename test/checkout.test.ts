import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCompany } from './factories.js';
import { createTestApp, type TestApp } from './harness.js';
import {
  card,
  checkoutTokenOf,
  csrfOf,
  dollarsText,
  einForm,
  setDashboardBilling,
  signIn,
  wyomingCompanyForm,
} from './dashboard-helpers.js';
import { listPrice, stateFee, wholesale } from './orders-fixtures.js';

let t: TestApp;
beforeAll(async () => {
  // As a deployed service connects (SEC-3): its pools log in as fcs_app, with fcs_service's rights only.
  t = await createTestApp({
    DASHBOARD_BASE_URL: 'http://localhost:3000/dashboard',
    DATABASE_SERVICE_ROLE: 'fcs_service',
  });
});
afterAll(() => t.close());

// Expected amounts come from the data files the service seeds its catalogue and fee schedule from (orders-fixtures),
// not from the service's own rows: a seeding or conversion mistake (dollars vs cents, a wrong column) must fail these
// tests.

async function customerTenant(name: string) {
  const tenant = await t.newTenant(name);
  await setDashboardBilling(tenant, 'customer');
  return tenant;
}

describe('checkout prices (BILL-11)', () => {
  it('shows each enabled formation package at tier + registered agent retail (tiers 2, 3) and the state fee as its own line', async () => {
    const tenant = await customerTenant('Rule Nine Co');
    expect((await tenant.api('PUT', '/organization/prices/registered_agent', { retailAmount: 333 })).statusCode).toBe(
      200,
    );
    expect((await tenant.api('PUT', '/organization/prices/formation_tier_1', { enabled: false })).statusCode).toBe(200);
    const { user } = await createCompany(tenant);
    const s = await signIn(t, tenant, { userId: user.id });

    const catalog = await s.get('/checkout');
    expect(catalog.statusCode).toBe(200);
    // No retail price set for the tiers: their list price from the catalogue file, plus the agent's retail price set
    // above.
    const tier2 = listPrice('formation_tier_2') + 33300;
    const tier3 = listPrice('formation_tier_3') + 33300;
    expect(catalog.body).toContain(dollarsText(tier2));
    expect(catalog.body).toContain(dollarsText(tier3));
    expect(catalog.body).not.toContain('Starter');
    expect(catalog.body).not.toContain('tier=1');

    const form = await s.get('/checkout/formation?tier=2&entityType=LLC&filingState=DE');
    expect(form.statusCode).toBe(200);
    const fee = stateFee('DE', 'Formation', 'LLC');
    expect(form.body).toContain(dollarsText(fee));
    expect(form.body).toContain('State fee');
    expect(form.body).toContain(`Pay ${dollarsText(tier2 + fee)}`);
  });
});

describe('in-app checkout (customer pays)', () => {
  it('charges the sandbox card, records retail and margin, and places the order in the pipeline', async () => {
    const tenant = await customerTenant('Card Co');
    const { user, company } = await createCompany(tenant);
    const s = await signIn(t, tenant, { userId: user.id, companyId: company.id });
    const page = await s.get(`/companies/${company.id}/checkout/ein`);
    expect(page.statusCode).toBe(200);

    const res = await s.post(`/companies/${company.id}/checkout/ein`, {
      _csrf: csrfOf(page.body),
      filingState: 'DE',
      ...einForm,
      ...card('4242 4242 4242 4242'),
    });
    expect(res.statusCode, res.body).toBe(303);
    expect(res.headers.location).toMatch(new RegExp(`^/dashboard/companies/${company.id}\\?placed=ordgrp_`));

    const { rows: orders } = await t.ctx.pool.query('SELECT * FROM orders WHERE company_id = $1', [company.id]);
    expect(orders).toHaveLength(1);
    const retail = listPrice('ein');
    expect(orders[0]).toMatchObject({
      order_type: 'ein',
      billing: 'checkout',
      filing_status: 'submitted',
      retail_cents: retail,
      margin_cents: retail - wholesale('ein'),
    });
    const { rows: payments } = await t.ctx.pool.query(
      'SELECT *, payment_status(id) AS status FROM payments WHERE group_id = $1',
      [orders[0].group_id],
    );
    expect(payments).toMatchObject([
      { status: 'succeeded', amount_cents: retail, card_last4: '4242', provider: 'sandbox' },
    ]);
    const events = await t.ctx.pool.query(
      `SELECT data FROM events WHERE type = 'filing.status_changed' AND data->>'orderId' = $1`,
      [orders[0].id],
    );
    expect(events.rows).toHaveLength(1);
    expect((await tenant.api('GET', '/organization')).json().balance).toBe(0);

    const landing = await s.get(String(res.headers.location).replace(s.base, ''));
    expect(landing.body).toContain('your order is placed');
    expect(landing.body).toContain('EIN (federal tax ID)');
  });

  it('declines 4000 0000 0000 0002 with a clear message and places nothing', async () => {
    const tenant = await customerTenant('Decline Co');
    const { user, company } = await createCompany(tenant);
    const s = await signIn(t, tenant, { userId: user.id });
    const page = await s.get(`/companies/${company.id}/checkout/certificate-of-good-standing`);
    const res = await s.post(`/companies/${company.id}/checkout/certificate-of-good-standing`, {
      _csrf: csrfOf(page.body),
      filingState: 'DE',
      ...card('4000 0000 0000 0002'),
    });
    expect(res.statusCode).toBe(402);
    expect(res.body).toContain('Your card was declined');
    expect(res.body).not.toContain('4000 0000 0000 0002');
    expect((await t.ctx.pool.query('SELECT 1 FROM orders WHERE company_id = $1', [company.id])).rowCount).toBe(0);
    expect(
      (
        await t.ctx.pool.query(`SELECT payment_status(id) AS status, card_last4 FROM payments WHERE company_id = $1`, [
          company.id,
        ])
      ).rows,
    ).toEqual([{ status: 'declined', card_last4: '0002' }]);
  });

  it('names bad fields next to their inputs and refuses a form without the CSRF token', async () => {
    const tenant = await customerTenant('Fields Co');
    const { user, company } = await createCompany(tenant);
    const s = await signIn(t, tenant, { userId: user.id });
    const page = await s.get(`/companies/${company.id}/checkout/ein`);
    const bad = await s.post(`/companies/${company.id}/checkout/ein`, {
      _csrf: csrfOf(page.body),
      filingState: 'DE',
      ...einForm,
      'ein.responsibleParty.taxId': '12',
      ...card('4242 4242 4242 4241'),
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('id="f-ein-responsibleParty-taxId-error"');
    expect(bad.body).toContain('Enter a valid card number');
    expect(
      (
        await s.post(`/companies/${company.id}/checkout/ein`, {
          filingState: 'DE',
          ...einForm,
          ...card('4242424242424242'),
        })
      ).statusCode,
    ).toBe(403);
    expect((await t.ctx.pool.query('SELECT 1 FROM orders WHERE company_id = $1', [company.id])).rowCount).toBe(0);
  });

  it('forms a new company with the tier 3 package: formation, EIN, registered agent and a DBA order', async () => {
    const tenant = await customerTenant('Tier Three Co');
    const { user } = await createCompany(tenant);
    const s = await signIn(t, tenant, { userId: user.id });
    const page = await s.get('/checkout/formation?tier=3&entityType=LLC&filingState=WY');
    expect(page.statusCode).toBe(200);
    const res = await s.post('/checkout/formation', {
      _csrf: csrfOf(page.body),
      tier: '3',
      entityType: 'LLC',
      filingState: 'WY',
      ...wyomingCompanyForm('Prairie Wind LLC'),
      dbaName: 'Prairie Wind Outfitters',
      ...einForm,
      ...card('4242424242424242'),
    });
    expect(res.statusCode, res.body.slice(0, 3000)).toBe(303);
    const companyId = /companies\/(comp_[a-z0-9]+)/.exec(String(res.headers.location))![1];
    const { rows } = await t.ctx.pool.query(
      'SELECT order_type, billing FROM orders WHERE company_id = $1 ORDER BY order_type',
      [companyId],
    );
    expect(rows.map((r) => r.order_type)).toEqual(['dba', 'ein', 'formation', 'registered_agent']);
    expect(new Set(rows.map((r) => r.billing))).toEqual(new Set(['checkout']));
  });
});

describe('live customer billing without Stripe configured', () => {
  it('says card payment is unavailable and takes no card details (PAY-1)', async () => {
    const tenant = await customerTenant('No Stripe Co');
    const { user, company } = await createCompany(tenant, 'live');
    const s = await signIn(t, tenant, { userId: user.id }, 'live');
    const page = await s.get(`/companies/${company.id}/checkout/certificate-of-good-standing`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Card payment is not available yet');
    expect(page.body).not.toContain('name="card.number"');

    // A submit anyway (an old tab, a crafted form) takes no order and charges nothing.
    const res = await s.post(`/companies/${company.id}/checkout/certificate-of-good-standing`, {
      _csrf: csrfOf(page.body),
      filingState: 'DE',
      ...card('4242424242424242'),
    });
    expect(res.statusCode).toBe(409);
    expect(res.body).toContain('Card payment is not available yet');
    expect(
      (await t.ctx.pool.query('SELECT count(*)::int AS n FROM orders WHERE company_id = $1', [company.id])).rows[0].n,
    ).toBe(0);
    expect(
      (await t.ctx.pool.query('SELECT count(*)::int AS n FROM payments WHERE company_id = $1', [company.id])).rows[0].n,
    ).toBe(0);
    // Nothing answers for Stripe either.
    const hook = await t.app.inject({
      method: 'POST',
      url: '/stripe/webhook',
      headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=00' },
      payload: '{}',
    });
    expect(hook.statusCode).toBe(404);
  });
});

describe('organization-billed dashboard orders', () => {
  it('debit the prepaid balance at wholesale plus state fee, like an API order; certificate orders too', async () => {
    const tenant = await t.newTenant('Balance Co');
    expect((await tenant.api('POST', '/test_helpers/balance-credits', { amount: 5000 })).statusCode).toBe(201);
    const { user, company } = await createCompany(tenant);
    const s = await signIn(t, tenant, { userId: user.id });
    const page = await s.get(`/companies/${company.id}/checkout/annual-report`);
    expect(page.body).toContain('covers this order');
    expect(page.body).not.toContain('card.number');
    const year = String(new Date().getUTCFullYear());
    const res = await s.post(`/companies/${company.id}/checkout/annual-report`, {
      _csrf: csrfOf(page.body),
      filingState: 'DE',
      filingYear: year,
    });
    expect(res.statusCode, res.body.slice(0, 2000)).toBe(303);
    const cogs = await s.post(`/companies/${company.id}/checkout/certificate-of-good-standing`, {
      _csrf: csrfOf(page.body),
      filingState: 'DE',
    });
    expect(cogs.statusCode, cogs.body.slice(0, 2000)).toBe(303);

    const fee = stateFee('DE', 'AnnualReport', 'LLC');
    const charged = wholesale('annual_report') + fee + wholesale('certificate_of_good_standing');
    expect((await tenant.api('GET', '/organization')).json().balance).toBe(5000 - charged / 100);
    const { rows } = await t.ctx.pool.query(
      'SELECT o.order_type, o.billing, g.source FROM orders o JOIN order_groups g ON g.id = o.group_id WHERE o.company_id = $1 ORDER BY o.order_type',
      [company.id],
    );
    expect(rows).toEqual([
      { order_type: 'annual_report', billing: 'balance', source: 'dashboard' },
      { order_type: 'certificate_of_good_standing', billing: 'balance', source: 'dashboard' },
    ]);
  });

  it('tells the customer to contact the organization when its balance is short', async () => {
    const tenant = await t.newTenant('Broke Co');
    const { user, company } = await createCompany(tenant);
    const s = await signIn(t, tenant, { userId: user.id });
    const page = await s.get(`/companies/${company.id}/checkout/registered-agent`);
    const res = await s.post(`/companies/${company.id}/checkout/registered-agent`, {
      _csrf: csrfOf(page.body),
      filingState: 'DE',
      changeOfAgent: 'false',
    });
    expect(res.statusCode).toBe(409);
    expect(res.body).toContain('Please contact Broke Co');
  });
});

describe('what the customer was shown is what is ordered and charged', () => {
  it('refuses a package switched off after the page was shown, instead of placing another one', async () => {
    const tenant = await customerTenant('Tier Gone Co');
    const { user } = await createCompany(tenant);
    const s = await signIn(t, tenant, { userId: user.id });
    const page = await s.get('/checkout/formation?tier=1&entityType=LLC&filingState=WY');
    expect((await tenant.api('PUT', '/organization/prices/formation_tier_1', { enabled: false })).statusCode).toBe(200);
    const res = await s.post('/checkout/formation', {
      _csrf: csrfOf(page.body),
      _checkout: checkoutTokenOf(page.body),
      tier: '1',
      entityType: 'LLC',
      filingState: 'WY',
      ...wyomingCompanyForm('Gone Tier LLC'),
      ...card('4242424242424242'),
    });
    expect(res.statusCode).toBe(409);
    expect(res.body).toContain('package is no longer offered');
    expect((await t.ctx.pool.query(`SELECT 1 FROM companies WHERE legal_name = 'Gone Tier LLC'`)).rowCount).toBe(0);
    expect((await t.ctx.pool.query('SELECT 1 FROM payments WHERE user_id = $1', [user.id])).rowCount).toBe(0);
  });

  it('charges nothing when the price changed after the page was shown, and shows the new total', async () => {
    const tenant = await customerTenant('Price Move Co');
    const { user, company } = await createCompany(tenant);
    const s = await signIn(t, tenant, { userId: user.id });
    const path = `/companies/${company.id}/checkout/certificate-of-good-standing`;
    const page = await s.get(path);
    expect(
      (await tenant.api('PUT', '/organization/prices/certificate_of_good_standing', { retailAmount: 250 })).statusCode,
    ).toBe(200);
    const res = await s.post(path, {
      _csrf: csrfOf(page.body),
      _checkout: checkoutTokenOf(page.body),
      _total: /name="_total" value="(\d+)"/.exec(page.body)![1],
      filingState: 'DE',
      ...card('4242424242424242'),
    });
    expect(res.statusCode).toBe(409);
    expect(res.body).toContain('The price changed');
    expect(res.body).toContain('Pay $250.00');
    expect((await t.ctx.pool.query('SELECT 1 FROM payments WHERE company_id = $1', [company.id])).rowCount).toBe(0);
    expect((await t.ctx.pool.query('SELECT 1 FROM orders WHERE company_id = $1', [company.id])).rowCount).toBe(0);
  });

  it('does not offer registered agent service again, new or as a change of agent, where it is already active', async () => {
    const tenant = await customerTenant('Agent Twice Co');
    const { user, company } = await createCompany(tenant);
    const s = await signIn(t, tenant, { userId: user.id });
    const path = `/companies/${company.id}/checkout/registered-agent`;
    const page = await s.get(`${path}?filingState=DE`);
    expect(
      (
        await s.post(path, {
          _csrf: csrfOf(page.body),
          _checkout: checkoutTokenOf(page.body),
          filingState: 'DE',
          changeOfAgent: 'false',
          ...card('4242424242424242'),
        })
      ).statusCode,
    ).toBe(303);
    for (const changeOfAgent of ['false', 'true']) {
      const again = await s.get(`${path}?filingState=DE&changeOfAgent=${changeOfAgent}`);
      expect(again.body, changeOfAgent).toContain('already active for this company');
      expect(again.body, changeOfAgent).not.toContain('Pay $');
    }
  });
});

describe('forms not sent as they were rendered (DASH-5, DASH-8, DASH-11)', () => {
  const ordersOf = async (companyId: string) =>
    (await t.ctx.pool.query('SELECT count(*)::int AS n FROM orders WHERE company_id = $1', [companyId])).rows[0].n;

  it('refuses a field sent twice with a page, and places nothing', async () => {
    const tenant = await customerTenant('Twice Co');
    const { user, company } = await createCompany(tenant);
    const s = await signIn(t, tenant, { userId: user.id });
    const path = `/companies/${company.id}/checkout/certificate-of-good-standing`;
    const page = await s.get(path);
    const form = new URLSearchParams({
      _csrf: csrfOf(page.body),
      _checkout: checkoutTokenOf(page.body),
      filingState: 'DE',
      ...card('4242424242424242'),
    });
    form.append('card.number', '4000000000000002');
    const res = await s.post(path, form);
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toContain('text/html');
    expect(res.body).toContain('sent the field &quot;card.number&quot; more than once');
    expect(await ordersOf(company.id)).toBe(0);
  });

  it('never swaps a posted option it does not offer for another one', async () => {
    const tenant = await t.newTenant('Options Co');
    expect((await tenant.api('POST', '/test_helpers/balance-credits', { amount: 5000 })).statusCode).toBe(201);
    const { user, company } = await createCompany(tenant, 'test', { formationState: 'DE' });
    const s = await signIn(t, tenant, { userId: user.id });

    const report = `/companies/${company.id}/checkout/annual-report`;
    const csrf = csrfOf((await s.get(report)).body);
    for (const filingYear of ['2030', 'x']) {
      const res = await s.post(report, { _csrf: csrf, filingState: 'DE', filingYear });
      expect(res.statusCode, filingYear).toBe(400);
      expect(res.body).toContain(`year we do not offer (${filingYear})`);
    }
    const badState = await s.post(report, { _csrf: csrf, filingState: 'ZZ' });
    expect(badState.statusCode).toBe(400);
    expect(badState.body).toContain('state we do not offer (ZZ)');

    // The formation state itself: refused with the reason (DASH-5), not replaced by the first other state.
    const qualification = await s.post(`/companies/${company.id}/checkout/foreign-qualification`, {
      _csrf: csrf,
      filingState: 'DE',
      agent: 'order',
    });
    expect(qualification.statusCode).toBe(409);
    expect(qualification.body).toContain('The company was formed in DE; choose another state to qualify in.');
    expect(await ordersOf(company.id)).toBe(0);
  });

  it('treats a shown total it cannot read as an expired form', async () => {
    const tenant = await customerTenant('Total Co');
    const { user, company } = await createCompany(tenant);
    const s = await signIn(t, tenant, { userId: user.id });
    const path = `/companies/${company.id}/checkout/certificate-of-good-standing`;
    const page = await s.get(path);
    const res = await s.post(path, {
      _csrf: csrfOf(page.body),
      _checkout: checkoutTokenOf(page.body),
      _total: 'free',
      filingState: 'DE',
      ...card('4242424242424242'),
    });
    expect(res.statusCode).toBe(409);
    expect(res.body).toContain('This order form has expired');
    expect(await ordersOf(company.id)).toBe(0);
  });

  it('names a bad principal address once, not again for the mailing and officer addresses copied from it', async () => {
    const tenant = await customerTenant('Zip Co');
    const { user } = await createCompany(tenant);
    const s = await signIn(t, tenant, { userId: user.id });
    const page = await s.get('/checkout/formation?tier=2&entityType=LLC&filingState=WY');
    const res = await s.post('/checkout/formation', {
      _csrf: csrfOf(page.body),
      _checkout: checkoutTokenOf(page.body),
      tier: '2',
      entityType: 'LLC',
      filingState: 'WY',
      ...wyomingCompanyForm('Zip Code LLC'),
      'formation.company.principalAddress.postalCode': 'x',
      ...einForm,
      ...card('4242424242424242'),
    });
    expect(res.statusCode).toBe(400);
    expect(res.body).not.toContain('officers.0.address');
    // Once beside the field and once in the summary at the top.
    expect(res.body.match(/five digits/g)).toHaveLength(2);
  });

  it('answers an unknown dashboard page with a page', async () => {
    const tenant = await t.newTenant('Lost Co');
    const { user } = await createCompany(tenant);
    const s = await signIn(t, tenant, { userId: user.id });
    const res = await s.get('/no-such-page');
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toContain('text/html');
    expect(res.body).toContain('Page not found');
  });
});

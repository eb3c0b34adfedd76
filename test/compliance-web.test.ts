import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleClient, newOperator, signIn as consoleSignIn } from './console-helpers.js';
import { signIn } from './dashboard-helpers.js';
import { corpFields, createCompany, createOrderRow } from './factories.js';
import { createTestApp, type TestApp } from './harness.js';

// The compliance calendar on the customer dashboard and in the filing team's console (CAL-16 .. CAL-18).
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

// One clock reading for both, so a run across midnight (or New Year) never pairs this year with tomorrow's date.
const now = new Date();
const thisYear = now.getUTCFullYear();
const today = now.toISOString().slice(0, 10);

describe('dashboard company page', () => {
  it('shows upcoming deadlines with status and a button to the annual report checkout for the state', async () => {
    const tenant = await t.newTenant();
    // Formed last year in Texas: the report is due May 15 each year, so one falls in the next 18 months.
    const { user, company } = await createCompany(tenant, 'test', {
      formationState: 'TX',
      formationDate: `${thisYear - 1}-02-10`,
      legalName: 'Lone Star LLC',
    });
    const s = await signIn(t, tenant, { userId: user.id });
    const page = await s.get(`/companies/${company.id}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('State filing deadlines');
    const nextDue = `${today <= `${thisYear}-05-15` ? thisYear : thisYear + 1}`;
    expect(page.body).toContain(`May 15, ${nextDue}`);
    expect(page.body).toMatch(/Upcoming|Open for filing/);
    const href = `${s.base}/companies/${company.id}/checkout/annual-report?filingState=TX&amp;filingYear=${nextDue}`;
    expect(page.body).toContain(href);
    // The button opens the annual report checkout for that state and year.
    const checkout = await s.get(
      `/companies/${company.id}/checkout/annual-report?filingState=TX&filingYear=${nextDue}`,
    );
    expect(checkout.statusCode).toBe(200);
    expect(checkout.body).toContain('Annual report');
  });

  it("a report still overdue from last year has no button: the checkout would order this year's report instead", async () => {
    const tenant = await t.newTenant();
    // Minnesota: due December 31 every year, so last year's report is overdue and this year's is open (CAL-23).
    const { user, company } = await createCompany(tenant, 'test', {
      formationState: 'MN',
      formationDate: `${thisYear - 3}-06-01`,
      legalName: 'North Star LLC',
    });
    const s = await signIn(t, tenant, { userId: user.id });
    const page = (await s.get(`/companies/${company.id}`)).body;
    expect(page).toContain(`Dec 31, ${thisYear - 1}`);
    expect(page).toContain('badge-warning">Overdue');
    expect(page).not.toContain(`filingYear=${thisYear - 1}`);
    expect(page).toContain(
      `${s.base}/companies/${company.id}/checkout/annual-report?filingState=MN&amp;filingYear=${thisYear}`,
    );
  });

  it('shows a filed report as filed, without a button, and says when there is no formation date', async () => {
    const tenant = await t.newTenant();
    const { user, company } = await createCompany(tenant, 'test', {
      formationState: 'TX',
      formationDate: `${thisYear - 1}-02-10`,
    });
    const year = today <= `${thisYear}-05-15` ? thisYear : thisYear + 1;
    await createOrderRow(
      t.ctx,
      { organizationId: tenant.organizationId, environment: 'test' },
      {
        companyId: company.id,
        userId: user.id,
        orderType: 'annual_report',
        filingState: 'TX',
        filingStatus: 'filed',
        details: { filingYear: year },
      },
    );
    const s = await signIn(t, tenant, { userId: user.id });
    const page = (await s.get(`/companies/${company.id}`)).body;
    expect(page).toContain('badge-success">Filed');
    expect(page).not.toContain(`filingState=TX&amp;filingYear=${year}`);

    const { user: u2, company: noDate } = await createCompany(tenant, 'test', {
      ...corpFields(),
      formationState: 'NY',
    });
    const s2 = await signIn(t, tenant, { userId: u2.id });
    expect((await s2.get(`/companies/${noDate.id}`)).body).toContain(
      'Deadlines appear once the company has a formation date.',
    );
  });
});

describe('console deadlines view', () => {
  it('CAL-28: shows the effective due date with the statutory one beside it where they differ', async () => {
    const tenant = await t.newTenant('Texas Platform');
    await createCompany(tenant, 'live', {
      legalName: 'Weekend Due LLC',
      formationState: 'TX',
      formationDate: '2025-03-15',
    });
    const op = await newOperator(t.ctx.pool);
    const c = consoleClient(t.app);
    await consoleSignIn(c, op.email, op.password);
    // Texas 2027: May 15 is a Saturday, so the report is due Monday May 17 (Tax Code 111.053).
    const page = (await c.get('/console/deadlines?from=2027-05-01&to=2027-05-31&state=TX')).body;
    expect(page).toContain('Weekend Due LLC');
    expect(page).toContain('2027-05-17');
    expect(page).toContain('statutory 2027-05-15');
  });

  it('lists live deadlines across tenants for the filing team, filtered', async () => {
    const a = await t.newTenant('Alpha Platform');
    const b = await t.newTenant('Beta Platform');
    await createCompany(a, 'live', {
      legalName: 'Alpha Widgets LLC',
      formationState: 'WY',
      formationDate: '2024-09-03',
    });
    await createCompany(b, 'live', {
      legalName: 'Beta Gadgets LLC',
      formationState: 'DE',
      formationDate: '2024-03-01',
    });
    await createCompany(b, 'test', { legalName: 'Test Only LLC', formationState: 'DE', formationDate: '2024-03-01' });
    const op = await newOperator(t.ctx.pool);
    const c = consoleClient(t.app);
    await consoleSignIn(c, op.email, op.password);

    const page = await c.get('/console/deadlines?from=2031-01-01&to=2031-12-31');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('aria-current="page">Deadlines');
    expect(page.body).toContain('Alpha Widgets LLC');
    expect(page.body).toContain('Beta Gadgets LLC');
    expect(page.body).not.toContain('Test Only LLC');
    // By due date: Delaware June 1 before Wyoming September 1.
    expect(page.body.indexOf('2031-06-01')).toBeLessThan(page.body.indexOf('2031-09-01'));
    const wy = await c.get('/console/deadlines?from=2031-01-01&to=2031-12-31&state=WY');
    expect(wy.body).toContain('Alpha Widgets LLC');
    expect(wy.body).not.toContain('Beta Gadgets LLC');
    const test = await c.get('/console/deadlines?from=2031-01-01&to=2031-12-31&environment=test');
    expect(test.body).toContain('Test Only LLC');
    expect((await consoleClient(t.app).get('/console/deadlines')).statusCode).toBe(303);
  });
});

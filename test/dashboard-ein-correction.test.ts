import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transitionOrder } from '../src/modules/filings/filings.service.js';
import { openTaxId } from '../src/modules/orders/ein-tax-ids.js';
import { createCompany, createUser } from './factories.js';
import { createTestApp, type TestApp, type TestTenant } from './harness.js';
import { csrfOf, einForm, signIn } from './dashboard-helpers.js';
import { einObject } from './orders-fixtures.js';

// ORD-EIN-8 in the dashboard: the customer whose EIN application the IRS refused (exception 483 or 484) corrects the
// responsible party on a page the company page links to, reached through the integrator's magic link.
let t: TestApp;
let tenant: TestTenant;
beforeAll(async () => {
  t = await createTestApp({ DASHBOARD_BASE_URL: 'http://localhost:3000/dashboard' });
  tenant = await t.newTenant('Correction Platform');
  await tenant.api('POST', '/test_helpers/balance-credits', { amount: 5000 });
});
afterAll(() => t.close());

/** An EIN order for a new company in exception `code` (as the filing team would raise it). */
async function refusedEinOrder(code: string) {
  const { user, company } = await createCompany(tenant);
  const res = await tenant.api('POST', '/orders', {
    userId: user.id,
    companyId: company.id,
    filingState: 'DE',
    ein: einObject({ responsibleParty: { ...einObject().responsibleParty, taxId: '261-45-7893' } }),
  });
  expect(res.statusCode, res.body).toBe(201);
  const orderId: string = res.json().items[0].orderId;
  await transitionOrder(
    t.ctx,
    null,
    orderId,
    { filingStatus: 'exception', exceptionCode: code, exceptionMessage: 'IRS letter 147C' },
    'cli',
  );
  return { user, company, orderId };
}

const form = (overrides: Record<string, string> = {}) => ({
  'responsibleParty.firstName': 'Ada',
  'responsibleParty.middleName': 'Augusta',
  'responsibleParty.lastName': 'King',
  'responsibleParty.taxIdType': 'SSN',
  'responsibleParty.taxId': '272-56-8904',
  'responsibleParty.title': 'Managing Member',
  ...overrides,
});

const orderRow = async (orderId: string) =>
  (
    await t.ctx.pool.query(
      `SELECT o.filing_status, o.details, t.sealed FROM orders o LEFT JOIN ein_tax_ids t ON t.order_id = o.id WHERE o.id = $1`,
      [orderId],
    )
  ).rows[0];

describe('correcting the responsible party in the dashboard', () => {
  for (const code of ['483', '484']) {
    it(`exception ${code}: the company page links to the form, which takes a valid party and sends the order back to pending`, async () => {
      const { user, company, orderId } = await refusedEinOrder(code);
      const s = await signIn(t, tenant, { userId: user.id, companyId: company.id });
      expect(s.location).toBe(`/dashboard/companies/${company.id}`);
      const companyPage = await s.get(`/companies/${company.id}`);
      expect(companyPage.body).toContain(`href="/dashboard/orders/${orderId}/responsible-party"`);

      const page = await s.get(`/orders/${orderId}/responsible-party`);
      expect(page.statusCode).toBe(200);
      expect(page.headers['cache-control']).toBe('no-store');
      expect(page.body).toContain('IRS letter 147C');
      expect(page.body).toContain('value="Lovelace"');
      expect(page.body).toContain('ended in 7893');
      expect(page.body).not.toContain('261-45-7893');
      const before = (await orderRow(orderId)).sealed;

      // The same validation as the API: the typed number is refused without being shown again.
      const bad = await s.post(`/orders/${orderId}/responsible-party`, {
        _csrf: csrfOf(page.body),
        ...form({ 'responsibleParty.taxId': '666-12-3456', 'responsibleParty.lastName': 'Kingsley' }),
      });
      expect(bad.statusCode).toBe(400);
      expect(bad.body).toContain('is not a valid SSN');
      expect(bad.body).toContain('id="f-responsibleParty-taxId-error"');
      expect(bad.body).toContain('value="Kingsley"');
      expect(bad.body).not.toContain('666-12-3456');
      expect((await orderRow(orderId)).sealed).toBe(before);

      const ok = await s.post(`/orders/${orderId}/responsible-party`, { _csrf: csrfOf(page.body), ...form() });
      expect(ok.statusCode, ok.body).toBe(200);
      expect(ok.body).toContain('Thank you');
      expect(ok.body).not.toContain('272-56-8904');
      const row = await orderRow(orderId);
      expect(row.filing_status).toBe('pending');
      expect(row.details.responsibleParty).toMatchObject({
        middleName: 'Augusta',
        lastName: 'King',
        taxIdLast4: '8904',
      });
      expect(openTaxId(t.ctx.secrets.dataKeys, orderId, row.sealed)).toBe('272-56-8904');
      const { rows: history } = await t.ctx.pool.query(
        `SELECT actor FROM order_status_history WHERE order_id = $1 AND to_status = 'pending'`,
        [orderId],
      );
      expect(history).toEqual([{ actor: 'dashboard' }]);

      // Once corrected there is nothing left to correct.
      expect((await s.get(`/companies/${company.id}`)).body).not.toContain('/responsible-party"');
      const again = await s.get(`/orders/${orderId}/responsible-party`);
      expect(again.statusCode).toBe(409);
      expect(again.body).toContain('Nothing to correct');
      const resent = await s.post(`/orders/${orderId}/responsible-party`, { _csrf: csrfOf(page.body), ...form() });
      expect(resent.statusCode).toBe(409);
    });
  }

  it('offers nothing for another exception, and answers 404 to a user who does not administer the company', async () => {
    const { user, company, orderId } = await refusedEinOrder('470');
    const s = await signIn(t, tenant, { userId: user.id, companyId: company.id });
    expect((await s.get(`/companies/${company.id}`)).body).not.toContain('/responsible-party"');
    expect((await s.get(`/orders/${orderId}/responsible-party`)).statusCode).toBe(409);

    const refused = await refusedEinOrder('483');
    const stranger = await signIn(t, tenant, { userId: (await createUser(tenant)).id });
    expect((await stranger.get(`/orders/${refused.orderId}/responsible-party`)).statusCode).toBe(404);
    const page = await stranger.get('/');
    const post = await stranger.post(`/orders/${refused.orderId}/responsible-party`, {
      _csrf: csrfOf(page.body),
      ...form(),
    });
    expect(post.statusCode).toBe(404);
    expect((await orderRow(refused.orderId)).filing_status).toBe('exception');
  });

  it('checkout never sends a typed tax id back, even when another field is refused (ORD-EIN-6)', async () => {
    const { user, company } = await createCompany(tenant);
    const s = await signIn(t, tenant, { userId: user.id });
    const page = await s.get(`/companies/${company.id}/checkout/ein`);
    const bad = await s.post(`/companies/${company.id}/checkout/ein`, {
      _csrf: csrfOf(page.body),
      filingState: 'DE',
      ...einForm,
      'ein.responsibleParty.taxId': '283-67-9015',
      'ein.principalProductOrService': '',
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('id="f-ein-principalProductOrService-error"');
    expect(bad.body).toContain('value="Lovelace"');
    expect(bad.body).not.toContain('283-67-9015');
  });

  it('refuses a post without the session CSRF token', async () => {
    const { user, company, orderId } = await refusedEinOrder('483');
    const s = await signIn(t, tenant, { userId: user.id, companyId: company.id });
    const res = await s.post(`/orders/${orderId}/responsible-party`, form());
    expect(res.statusCode).toBe(403);
    expect((await orderRow(orderId)).filing_status).toBe('exception');
  });
});

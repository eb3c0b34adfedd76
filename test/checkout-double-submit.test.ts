import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCompany } from './factories.js';
import { createTestApp, type TestApp, type TestTenant } from './harness.js';
import { card, checkoutTokenOf, csrfOf, setDashboardBilling, signIn } from './dashboard-helpers.js';
import { balanceCents, listPrice, stateFee, wholesale } from './orders-fixtures.js';

// DASH-9: a checkout form submitted twice (double click, reload, back + resubmit, two
// requests racing) places and charges once; the second submit lands on the first one's orders.
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ DASHBOARD_BASE_URL: 'http://localhost:3000/dashboard' });
});
afterAll(() => t.close());

const count = async (sql: string, params: unknown[]) => (await t.ctx.pool.query(sql, params)).rowCount;
const paymentsOf = async (companyId: string) =>
  (
    await t.ctx.pool.query(
      'SELECT payment_status(id) AS status, provider_reference, amount_cents::int AS "amountCents" FROM payments WHERE company_id = $1 ORDER BY created_at',
      [companyId],
    )
  ).rows;
/** The company's orders with what each was charged, cents. */
const ordersOf = async (companyId: string) =>
  (
    await t.ctx.pool.query(
      'SELECT amount_cents::int AS "amountCents", retail_cents::int AS "retailCents" FROM orders WHERE company_id = $1 ORDER BY id',
      [companyId],
    )
  ).rows;
/** The ledger entries of the company's orders, cents (signed: a debit is negative). */
const ledgerOf = async (companyId: string) =>
  (
    await t.ctx.pool.query(
      `SELECT l.type, l.line_type AS "lineType", l.amount_cents::int AS "amountCents"
         FROM ledger_entries l JOIN orders o ON o.id = l.order_id WHERE o.company_id = $1 ORDER BY l.id`,
      [companyId],
    )
  ).rows;
// A certificate at checkout costs its list price when the organization sets no retail price (DASH-10); nothing
// comes from the organization's balance.
const CERTIFICATE = listPrice('certificate_of_good_standing');

async function tenantBilling(name: string, billing: 'customer' | 'organization'): Promise<TestTenant> {
  const tenant = await t.newTenant(name);
  await setDashboardBilling(tenant, billing);
  if (billing === 'organization')
    expect((await tenant.api('POST', '/test_helpers/balance-credits', { amount: 5000 })).statusCode).toBe(201);
  return tenant;
}

async function certificateForm(tenant: TestTenant) {
  const { user, company } = await createCompany(tenant);
  const s = await signIn(t, tenant, { userId: user.id });
  const path = `/companies/${company.id}/checkout/certificate-of-good-standing`;
  const page = await s.get(path);
  expect(page.statusCode).toBe(200);
  const form = { _csrf: csrfOf(page.body), _checkout: checkoutTokenOf(page.body), filingState: 'DE' };
  return { s, path, form, company, page };
}

describe('a checkout form submitted more than once', () => {
  it('customer pays: the second submit charges nothing and shows the first order', async () => {
    const tenant = await tenantBilling('Twice Card Co', 'customer');
    const { s, path, form, company } = await certificateForm(tenant);
    const first = await s.post(path, { ...form, ...card('4242 4242 4242 4242') });
    expect(first.statusCode, first.body.slice(0, 500)).toBe(303);
    const again = await s.post(path, { ...form, ...card('4242 4242 4242 4242') });
    expect(again.statusCode).toBe(303);
    expect(again.headers.location).toBe(first.headers.location);
    expect(await ordersOf(company.id)).toEqual([{ amountCents: CERTIFICATE, retailCents: CERTIFICATE }]);
    expect((await paymentsOf(company.id)).map(({ status, amountCents }) => ({ status, amountCents }))).toEqual([
      { status: 'succeeded', amountCents: CERTIFICATE },
    ]);
    expect(await ledgerOf(company.id)).toEqual([]);
  });

  it('customer pays: many submits racing at once place one order and one charge, and all land on it', async () => {
    const tenant = await tenantBilling('Race Card Co', 'customer');
    const { s, path, form, company } = await certificateForm(tenant);
    const results = await Promise.all(
      Array.from({ length: 6 }, () => s.post(path, { ...form, ...card('4242424242424242') })),
    );
    expect(results.map((r) => r.statusCode)).toEqual(Array(6).fill(303));
    expect(new Set(results.map((r) => r.headers.location)).size).toBe(1);
    expect(await ordersOf(company.id)).toEqual([{ amountCents: CERTIFICATE, retailCents: CERTIFICATE }]);
    expect((await paymentsOf(company.id)).map(({ status, amountCents }) => ({ status, amountCents }))).toEqual([
      { status: 'succeeded', amountCents: CERTIFICATE },
    ]);
    expect(await ledgerOf(company.id)).toEqual([]);
  });

  it('customer pays: after a decline the same form can be paid with another card, once', async () => {
    const tenant = await tenantBilling('Retry Card Co', 'customer');
    const { s, path, form, company } = await certificateForm(tenant);
    expect((await s.post(path, { ...form, ...card('4000 0000 0000 0002') })).statusCode).toBe(402);
    expect((await s.post(path, { ...form, ...card('4242 4242 4242 4242') })).statusCode).toBe(303);
    expect((await s.post(path, { ...form, ...card('4242 4242 4242 4242') })).statusCode).toBe(303);
    expect(await ordersOf(company.id)).toEqual([{ amountCents: CERTIFICATE, retailCents: CERTIFICATE }]);
    const payments = await paymentsOf(company.id);
    expect(payments.map(({ status, amountCents }) => ({ status, amountCents }))).toEqual([
      { status: 'declined', amountCents: CERTIFICATE },
      { status: 'succeeded', amountCents: CERTIFICATE },
    ]);
  });

  it('organization pays: a racing resubmit of an annual report form debits the balance once', async () => {
    const tenant = await tenantBilling('Twice Balance Co', 'organization');
    const { user, company } = await createCompany(tenant);
    const s = await signIn(t, tenant, { userId: user.id });
    const path = `/companies/${company.id}/checkout/annual-report`;
    const page = await s.get(path);
    const form = {
      _csrf: csrfOf(page.body),
      _checkout: checkoutTokenOf(page.body),
      filingState: 'DE',
      filingYear: String(new Date().getUTCFullYear()),
    };
    const before = await balanceCents(tenant);
    const results = await Promise.all([s.post(path, form), s.post(path, form), s.post(path, form)]);
    expect(results.map((r) => r.statusCode)).toEqual([303, 303, 303]);
    // One order, debited once at wholesale: the annual report service and Delaware's LLC annual fee (BILL-8), each
    // line once, and the balance down by exactly their sum.
    const service = wholesale('annual_report');
    const fee = stateFee('DE', 'AnnualReport', 'LLC');
    expect(await ordersOf(company.id)).toEqual([{ amountCents: service + fee, retailCents: null }]);
    expect(await ledgerOf(company.id)).toEqual([
      { type: 'debit', lineType: 'annual_report', amountCents: -service },
      { type: 'debit', lineType: 'state_fee', amountCents: -fee },
    ]);
    expect(before - (await balanceCents(tenant))).toBe(service + fee);
    expect(await count('SELECT 1 FROM payments WHERE company_id = $1', [company.id])).toBe(0);
  });

  it('two forms are two orders; a form token of another session is refused as expired and places nothing', async () => {
    const tenant = await tenantBilling('Two Forms Co', 'customer');
    const { s, path, form, company } = await certificateForm(tenant);
    const second = await s.get(path);
    expect(checkoutTokenOf(second.body)).not.toBe(form._checkout);
    expect((await s.post(path, { ...form, ...card('4242424242424242') })).statusCode).toBe(303);
    expect(
      (await s.post(path, { ...form, _checkout: checkoutTokenOf(second.body), ...card('4242424242424242') }))
        .statusCode,
    ).toBe(303);
    expect(await ordersOf(company.id)).toEqual([
      { amountCents: CERTIFICATE, retailCents: CERTIFICATE },
      { amountCents: CERTIFICATE, retailCents: CERTIFICATE },
    ]);
    expect((await paymentsOf(company.id)).map((p) => p.amountCents)).toEqual([CERTIFICATE, CERTIFICATE]);

    const other = await certificateForm(tenant);
    const foreign = await other.s.post(other.path, {
      ...other.form,
      _checkout: checkoutTokenOf((await s.get(path)).body),
      ...card('4242424242424242'),
    });
    expect(foreign.statusCode).toBe(409);
    expect(foreign.body).toContain('This order form has expired');
    expect(checkoutTokenOf(foreign.body)).toBeTruthy();
    expect(await count('SELECT 1 FROM orders WHERE company_id = $1', [other.company.id])).toBe(0);
    expect(await count('SELECT 1 FROM payments WHERE company_id = $1', [other.company.id])).toBe(0);
  });

  it('customer pays: when the order cannot be saved after the charge, the charge is refunded and the form can be paid again', async () => {
    const tenant = await tenantBilling('Refund Co', 'customer');
    const { s, path, form, company } = await certificateForm(tenant);
    // Make the order insert fail after the card was charged (a database failure the service cannot foresee).
    await t.ctx.pool.query(
      `CREATE FUNCTION review_fail_insert() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'disk full'; END $$`,
    );
    await t.ctx.pool.query(
      `CREATE TRIGGER review_fail BEFORE INSERT ON orders FOR EACH ROW WHEN (NEW.company_id = '${company.id}') EXECUTE FUNCTION review_fail_insert()`,
    );
    const failed = await s.post(path, { ...form, ...card('4242424242424242') });
    await t.ctx.pool.query('DROP TRIGGER review_fail ON orders; DROP FUNCTION review_fail_insert()');
    expect(failed.statusCode).toBe(500);
    expect(failed.body).not.toContain('disk full');
    expect(
      (await t.ctx.pool.query('SELECT payment_status(id) AS status FROM payments WHERE company_id = $1', [company.id]))
        .rows,
    ).toEqual([{ status: 'refunded' }]);

    expect((await s.post(path, { ...form, ...card('4242424242424242') })).statusCode).toBe(303);
    expect(await count('SELECT 1 FROM orders WHERE company_id = $1', [company.id])).toBe(1);
    const payments = await paymentsOf(company.id);
    expect(payments.map(({ status, amountCents }) => ({ status, amountCents }))).toEqual([
      { status: 'refunded', amountCents: CERTIFICATE },
      { status: 'succeeded', amountCents: CERTIFICATE },
    ]);
    expect(await ordersOf(company.id)).toEqual([{ amountCents: CERTIFICATE, retailCents: CERTIFICATE }]);
    // The retry was a new charge at the provider, not the refunded one again.
    expect(payments[1].provider_reference).not.toBe(payments[0].provider_reference);
  });
});

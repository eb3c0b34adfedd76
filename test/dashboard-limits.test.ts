import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueCheckoutForm, CHECKOUT_FORM_MAX_SECONDS } from '../src/modules/dashboard/checkout-forms.js';
import { createCompany } from './factories.js';
import { createTestApp, type TestApp, type TestTenant } from './harness.js';
import { card, checkoutTokenOf, csrfOf, setDashboardBilling, signIn } from './dashboard-helpers.js';
import { statementsDuring } from './statements.js';

/*
 * AUTH-6: a signed-in dashboard session has a request limit of its own. DASH-9: showing a checkout form writes
 * nothing; its one-time token is stateless until the form is submitted.
 */

let t: TestApp;
let tenant: TestTenant;
beforeAll(async () => {
  t = await createTestApp({
    RATE_LIMIT_WINDOW_SECONDS: '3600',
    RATE_LIMIT_DASHBOARD_REQUESTS: '4',
    RATE_LIMIT_SYNC_MS: '600000',
  });
  tenant = await t.newTenant('Limits Co');
  await setDashboardBilling(tenant, 'customer');
});
afterAll(() => t.close());

const inserts = (statements: string[]) => statements.filter((s) => /\bINSERT\s+INTO\b/i.test(s));
/** The row version of the user's session: any UPDATE of the row changes it. */
const sessionVersion = async (userId: string) =>
  (await t.ctx.pool.query('SELECT xmin::text AS v FROM dashboard_sessions WHERE user_id = $1', [userId])).rows[0].v;
const formsOf = async (organizationId: string) =>
  (await t.ctx.pool.query('SELECT attempts FROM checkout_forms WHERE organization_id = $1', [organizationId])).rows;

describe('dashboard requests per session (AUTH-6)', () => {
  it('answers a 429 page with Retry-After beyond RATE_LIMIT_DASHBOARD_REQUESTS; another session is not affected', async () => {
    const { user } = await createCompany(tenant);
    const busy = await signIn(t, tenant, { userId: user.id });
    const pages = [];
    for (let i = 0; i < 5; i++) pages.push(await busy.get('/'));
    expect(pages.slice(0, 4).map((p) => p.statusCode)).toEqual([200, 200, 200, 200]);
    expect(pages[3].headers['ratelimit-remaining']).toBe('0');
    const refused = pages[4];
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['content-type']).toContain('text/html');
    expect(refused.body).toContain('Too many requests');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    const other = await signIn(t, tenant, { userId: user.id });
    expect((await other.get('/')).statusCode).toBe(200);
  });
});

describe('checkout forms (DASH-9)', () => {
  it('showing a product page writes nothing, the session included; the first submit of its form makes the row', async () => {
    const { user, company } = await createCompany(tenant);
    const s = await signIn(t, tenant, { userId: user.id });
    const path = `/companies/${company.id}/checkout/certificate-of-good-standing`;
    const before = await sessionVersion(user.id);
    const { result: page, statements } = await statementsDuring(() => s.get(path));
    expect(page.statusCode).toBe(200);
    expect(checkoutTokenOf(page.body)).toBeTruthy();
    expect(inserts(statements)).toEqual([]);
    expect(await formsOf(tenant.organizationId)).toEqual([]);
    // The idle timer moves at most once a minute: a page view right after sign-in leaves the row as it was.
    expect(await sessionVersion(user.id)).toBe(before);

    const form = { _csrf: csrfOf(page.body), _checkout: checkoutTokenOf(page.body), filingState: 'DE' };
    expect((await s.post(path, { ...form, ...card('4242424242424242') })).statusCode).toBe(303);
    expect(await formsOf(tenant.organizationId)).toEqual([{ attempts: 0 }]);
  });

  it('refuses a token older than 8 days, or with its issue time altered, as expired, placing nothing', async () => {
    const other = await t.newTenant('Old Forms Co');
    await setDashboardBilling(other, 'customer');
    const { user, company } = await createCompany(other);
    const s = await signIn(t, other, { userId: user.id });
    const path = `/companies/${company.id}/checkout/certificate-of-good-standing`;
    const page = await s.get(path);
    const session = {
      idHash: (await t.ctx.pool.query('SELECT id_hash FROM dashboard_sessions WHERE user_id = $1', [user.id])).rows[0]
        .id_hash,
    } as Parameters<typeof issueCheckoutForm>[1];
    const secret = t.ctx.secrets.fileUrlSecret;
    const old = issueCheckoutForm(secret, session, Date.now() - (CHECKOUT_FORM_MAX_SECONDS + 60) * 1000);
    const fresh = checkoutTokenOf(page.body);
    const [nonce, issued, mac] = fresh.split('.');
    const altered = `${nonce}.${(Number.parseInt(issued, 36) + 1).toString(36)}.${mac}`;
    for (const token of [old, altered]) {
      const res = await s.post(path, {
        _csrf: csrfOf(page.body),
        _checkout: token,
        filingState: 'DE',
        ...card('4242424242424242'),
      });
      expect(res.statusCode).toBe(409);
      expect(res.body).toContain('This order form has expired');
    }
    expect((await t.ctx.pool.query('SELECT 1 FROM orders WHERE company_id = $1', [company.id])).rowCount).toBe(0);
    expect(await formsOf(other.organizationId)).toEqual([]);
    // A token issued 7 days ago is still good.
    const recent = issueCheckoutForm(secret, session, Date.now() - 7 * 24 * 3600 * 1000);
    const placed = await s.post(path, {
      _csrf: csrfOf(page.body),
      _checkout: recent,
      filingState: 'DE',
      ...card('4242424242424242'),
    });
    expect(placed.statusCode).toBe(303);
  });
});

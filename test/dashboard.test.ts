import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCompany, createOrderRow, createUser, llcFields } from './factories.js';
import { createTestApp, type TestApp, type TestTenant } from './harness.js';
import { csrfOf, mintLink, openLink, sessionCookie, signIn } from './dashboard-helpers.js';
import { fakeDns, setVerifiedDomain } from './domain-helpers.js';

let t: TestApp;
let tenant: TestTenant;
beforeAll(async () => {
  t = await createTestApp({ DASHBOARD_BASE_URL: 'http://localhost:3000/dashboard', TRUST_PROXY: 'loopback' });
  tenant = await t.newTenant('Northwind Formations');
});
afterAll(() => t.close());

const tenantOf = (x: TestTenant) => ({ organizationId: x.organizationId, environment: 'test' as const });

describe('opening a magic link', () => {
  it('redirects into the dashboard with an HttpOnly, SameSite=Lax, path-scoped session cookie', async () => {
    const { user } = await createCompany(tenant);
    const res = await openLink(t, await mintLink(tenant, { userId: user.id }));
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/dashboard/');
    const { attributes } = sessionCookie(res.headers['set-cookie']);
    expect(attributes).toMatch(/HttpOnly/i);
    expect(attributes).toMatch(/SameSite=Lax/i);
    expect(attributes).toMatch(/Path=\/dashboard/);
    expect(attributes).not.toMatch(/Secure/i);
  });

  it('marks the cookie Secure when the request came over https', async () => {
    const user = await createUser(tenant);
    const res = await openLink(t, await mintLink(tenant, { userId: user.id }), { 'x-forwarded-proto': 'https' });
    expect(sessionCookie(res.headers['set-cookie']).attributes).toMatch(/Secure/i);
  });

  it('marks the cookie Secure when DASHBOARD_BASE_URL is https, even if the TLS proxy is not trusted', async () => {
    const https = await createTestApp({ DASHBOARD_BASE_URL: 'https://app.filings.test/dashboard' });
    try {
      const other = await https.newTenant('Https Co');
      const user = await createUser(other);
      const link = await mintLink(other, { userId: user.id });
      expect(link.startsWith('https://app.filings.test/dashboard/auth/')).toBe(true);
      const res = await https.app.inject({
        method: 'GET',
        url: new URL(link).pathname,
        headers: { host: 'app.filings.test' },
      });
      expect(res.statusCode).toBe(303);
      expect(sessionCookie(res.headers['set-cookie']).attributes).toMatch(/Secure/i);
    } finally {
      await https.close();
    }
  });

  it('lands on the company page when the link names a company', async () => {
    const { user, company } = await createCompany(tenant);
    const s = await signIn(t, tenant, { userId: user.id, companyId: company.id });
    expect(s.location).toBe(`/dashboard/companies/${company.id}`);
  });

  it('shows the friendly refusal with a 4xx when opened a second time', async () => {
    const user = await createUser(tenant);
    const link = await mintLink(tenant, { userId: user.id });
    expect((await openLink(t, link)).statusCode).toBe(303);
    const again = await openLink(t, link);
    expect(again.statusCode).toBe(410);
    expect(again.body).toContain('This link was used or has expired');
    expect(again.body).toContain('Northwind Formations');
    expect(again.headers['set-cookie']).toBeUndefined();
  });
});

describe('dashboard pages', () => {
  it("lists the user's companies and shows a company with officers, orders, plain-word exceptions and documents", async () => {
    const { user, company } = await createCompany(tenant, 'test', { legalName: 'Blue Fern LLC' });
    await createCompany(tenant, 'test', { legalName: 'Someone Else LLC' });
    const filed = await createOrderRow(t.ctx, tenantOf(tenant), {
      companyId: company.id,
      userId: user.id,
      orderType: 'formation',
    });
    const ein = await createOrderRow(t.ctx, tenantOf(tenant), {
      companyId: company.id,
      userId: user.id,
      orderType: 'ein',
    });
    expect(
      (
        await tenant.api('POST', `/test_helpers/orders/${filed.orderId}/advance`, {
          filingStatus: 'filed',
          filingDate: '2025-01-15',
        })
      ).statusCode,
    ).toBe(200);
    const ex = await tenant.api('POST', `/test_helpers/orders/${ein.orderId}/advance`, {
      filingStatus: 'exception',
      exceptionCode: '484',
      exceptionMessage: 'Name on SSN card differs.',
    });
    expect(ex.statusCode, ex.body).toBe(200);
    const doc = await tenant.api('POST', `/test_helpers/orders/${filed.orderId}/documents`, {
      documentType: 'company',
    });
    expect(doc.statusCode, doc.body).toBe(201);

    const s = await signIn(t, tenant, { userId: user.id });
    const list = await s.get('/');
    expect(list.statusCode).toBe(200);
    expect(list.body).toContain('Blue Fern LLC');
    expect(list.body).not.toContain('Someone Else LLC');
    expect(list.body).toContain('1 needs attention');

    const page = await s.get(`/companies/${company.id}`);
    expect(page.statusCode).toBe(200);
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.body).toContain('Ada Lovelace');
    expect(page.body).toContain('Managing Member');
    expect(page.body).toContain('Filed');
    expect(page.body).toContain('Needs attention');
    expect(page.body).toContain('EIN SSN does not match the person&#39;s name');
    expect(page.body).toContain('Name on SSN card differs.');

    const documentId = doc.json().documentId;
    const download = await s.get(`/documents/${documentId}/download`);
    expect(download.statusCode).toBe(302);
    const file = new URL(String(download.headers.location));
    const fetched = await t.app.inject({ method: 'GET', url: file.pathname + file.search });
    expect(fetched.statusCode).toBe(200);
    expect(fetched.rawPayload.subarray(0, 5).toString()).toBe('%PDF-');

    const history = await s.get('/orders');
    expect(history.statusCode).toBe(200);
    expect(history.body).toContain('Company formation');
    expect(history.body).toContain('EIN (federal tax ID)');
  });

  it('answers 404 for a company or document the user does not administer', async () => {
    const { user } = await createCompany(tenant);
    const { company: other } = await createCompany(tenant);
    const s = await signIn(t, tenant, { userId: user.id });
    expect((await s.get(`/companies/${other.id}`)).statusCode).toBe(404);
    expect((await s.get('/documents/doc_nope/download')).statusCode).toBe(404);
  });

  it('asks to sign in again without a session, after sign-out, and after 12 hours idle', async () => {
    expect(
      (await t.app.inject({ method: 'GET', url: '/dashboard/', headers: { host: 'localhost:3000' } })).statusCode,
    ).toBe(401);
    const { user } = await createCompany(tenant);
    const s = await signIn(t, tenant, { userId: user.id });
    const home = await s.get('/');
    expect(home.statusCode).toBe(200);

    const forged = await s.post('/sign-out', { _csrf: 'not-the-token' });
    expect(forged.statusCode).toBe(403);
    expect((await s.post('/sign-out', {})).statusCode).toBe(403);
    expect((await s.get('/')).statusCode).toBe(200);

    const out = await s.post('/sign-out', { _csrf: csrfOf(home.body) });
    expect(out.statusCode).toBe(200);
    expect(out.body).toContain('You are signed out');
    expect((await s.get('/')).statusCode).toBe(401);

    const s2 = await signIn(t, tenant, { userId: user.id });
    expect((await s2.get('/')).statusCode).toBe(200);
    await t.ctx.pool.query(
      `UPDATE dashboard_sessions SET last_seen_at = now() - interval '13 hours' WHERE user_id = $1`,
      [user.id],
    );
    expect((await s2.get('/')).statusCode).toBe(401);
  });

  it('keeps the JSON API refusing form bodies with 415', async () => {
    const res = await tenant.api('POST', '/auth/magic-link', 'userId=x', {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(res.statusCode).toBe(415);
  });
});

describe('white-label host', () => {
  it("serves the dashboard at the root of the organization's domain, branded, and accepts only its own links", async () => {
    const wl = await t.newTenant('Acme Legal');
    await wl.api(
      'PATCH',
      '/organization',
      { branding: { primaryColor: '#ffcc00', logoUrl: 'https://cdn.acme-legal.test/logo.png' } },
      { env: 'live' },
    );
    await setVerifiedDomain(t, wl, 'portal.acme-legal.test');
    const { user, company } = await createCompany(wl, 'test', { legalName: 'Acme Client LLC' });
    const link = await mintLink(wl, { userId: user.id, companyId: company.id });
    expect(link.startsWith('https://portal.acme-legal.test/auth/')).toBe(true);

    const res = await openLink(t, link);
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe(`/companies/${company.id}`);
    const { pair, attributes } = sessionCookie(res.headers['set-cookie']);
    expect(attributes).toMatch(/Path=\/(;|$)/);
    expect(attributes).toMatch(/Secure/i);
    const page = await t.app.inject({
      method: 'GET',
      url: `/companies/${company.id}`,
      headers: { host: 'portal.acme-legal.test', cookie: pair },
    });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Acme Client LLC');
    expect(page.body).toContain('https://cdn.acme-legal.test/logo.png');
    expect(page.body).toContain('--brand:#ffcc00;--on-brand:#111827');

    // Another organization's link is refused on this host (and stays usable on its own).
    const otherUser = await createUser(tenant);
    const foreign = await mintLink(tenant, { userId: otherUser.id });
    const onWrongHost = await t.app.inject({
      method: 'GET',
      url: new URL(foreign).pathname.replace('/dashboard', ''),
      headers: { host: 'portal.acme-legal.test' },
    });
    expect(onWrongHost.statusCode).toBe(410);
    expect((await openLink(t, foreign)).statusCode).toBe(303);

    // The root of an unknown host is not the dashboard.
    expect(
      (await t.app.inject({ method: 'GET', url: '/', headers: { host: 'unknown.example.test' } })).statusCode,
    ).toBe(404);
  });
});

describe('dashboard sessions (AUTH-6)', () => {
  it("refuses a session of one organization on another organization's white-label host", async () => {
    const dns = fakeDns(t);
    const [a, b] = [await t.newTenant('Alpha Legal'), await t.newTenant('Beta Legal')];
    await setVerifiedDomain(t, a, 'portal.alpha-legal.test', dns);
    await setVerifiedDomain(t, b, 'portal.beta-legal.test', dns);
    const { user, company } = await createCompany(a, 'test', { legalName: 'Alpha Client LLC' });
    const opened = await openLink(t, await mintLink(a, { userId: user.id, companyId: company.id }));
    expect(opened.statusCode).toBe(303);
    const { pair } = sessionCookie(opened.headers['set-cookie']);
    const at = (host: string, url: string) => t.app.inject({ method: 'GET', url, headers: { host, cookie: pair } });
    // Control: the session works on its own organization's host.
    expect((await at('portal.alpha-legal.test', `/companies/${company.id}`)).statusCode).toBe(200);
    // The same cookie sent to B's host (a browser would not, but a cookie can be copied) opens nothing there.
    for (const url of ['/', `/companies/${company.id}`, '/orders']) {
      const res = await at('portal.beta-legal.test', url);
      expect(res.statusCode, url).toBe(401);
      expect(res.body).toContain('Please sign in again');
      expect(res.body).not.toContain('Alpha Client LLC');
    }
    // A session opened at the default address is not accepted on a white-label host either.
    const { user: plain, company: plainCompany } = await createCompany(tenant, 'test', {
      legalName: 'Default Host Client LLC',
    });
    const s = await signIn(t, tenant, { userId: plain.id, companyId: plainCompany.id });
    expect((await s.get(`/companies/${plainCompany.id}`)).statusCode).toBe(200);
    const { pair: defaultPair } = sessionCookie(
      (await openLink(t, await mintLink(tenant, { userId: plain.id }))).headers['set-cookie'],
    );
    const elsewhere = await t.app.inject({
      method: 'GET',
      url: `/companies/${plainCompany.id}`,
      headers: { host: 'portal.beta-legal.test', cookie: defaultPair },
    });
    expect(elsewhere.statusCode).toBe(401);
    expect(elsewhere.body).not.toContain('Default Host Client LLC');
  });

  it('ends a session 7 days after sign-in even while it is in use (absolute expiry)', async () => {
    const { user } = await createCompany(tenant);
    const s = await signIn(t, tenant, { userId: user.id });
    expect((await s.get('/')).statusCode).toBe(200);
    const sessionOf = async () =>
      (await t.ctx.pool.query(`SELECT id_hash FROM dashboard_sessions WHERE user_id = $1`, [user.id])).rows[0]
        .id_hash as string;
    const idHash = await sessionOf();
    // Signed in 6 days 23 hours ago and used a minute ago: still within both limits.
    await t.ctx.pool.query(
      `UPDATE dashboard_sessions SET created_at = now() - interval '6 days 23 hours', expires_at = now() - interval '6 days 23 hours' + interval '7 days',
              last_seen_at = now() - interval '1 minute' WHERE id_hash = $1`,
      [idHash],
    );
    expect((await s.get('/')).statusCode).toBe(200);
    // Signed in 7 days and 1 minute ago and active a minute ago (never idle for 12 hours): refused all the same.
    await t.ctx.pool.query(
      `UPDATE dashboard_sessions SET created_at = now() - interval '7 days 1 minute', expires_at = now() - interval '7 days 1 minute' + interval '7 days',
              last_seen_at = now() - interval '1 minute' WHERE id_hash = $1`,
      [idHash],
    );
    const expired = await s.get('/');
    expect(expired.statusCode).toBe(401);
    expect(expired.body).toContain('Please sign in again');
    // The lifetime set at sign-in is 7 days, not more.
    const fresh = await signIn(t, tenant, { userId: user.id });
    expect((await fresh.get('/')).statusCode).toBe(200);
    const { rows } = await t.ctx.pool.query(
      `SELECT extract(epoch FROM expires_at - created_at)::int AS lifetime FROM dashboard_sessions WHERE user_id = $1 AND id_hash <> $2`,
      [user.id, idHash],
    );
    expect(rows.map((r) => r.lifetime)).toEqual([7 * 24 * 3600]);
  });
});

describe('dashboard lists are paginated', () => {
  it('shows 25 companies a page with a link to the next page, and every company exactly once', async () => {
    const owner = await t.newTenant('Many Companies Co');
    const { user } = await createCompany(owner, 'test', { legalName: 'Company 00 LLC' });
    for (let i = 1; i < 27; i++) {
      const res = await owner.api('POST', '/companies', {
        ...llcFields(),
        legalName: `Company ${String(i).padStart(2, '0')} LLC`,
        userId: user.id,
      });
      expect(res.statusCode, res.body).toBe(201);
    }
    const session = await signIn(t, owner, { userId: user.id });
    const names = (html: string) => [...html.matchAll(/>(Company \d\d LLC)</g)].map((m) => m[1]);
    const first = await session.get('/');
    expect(names(first.body)).toHaveLength(25);
    const next = /href="[^"]*\?after=([a-z]+_[a-z0-9]+)"/.exec(first.body);
    expect(next, 'a link to the next page').not.toBeNull();
    const second = await session.get(`/?after=${next![1]}`);
    expect(names(second.body)).toEqual(['Company 25 LLC', 'Company 26 LLC']);
    expect(second.body).not.toMatch(/\?after=/);
    // A malformed cursor is ignored (first page); one holding a NUL character is refused with a 400 page, never a 500.
    const odd = await session.get('/?after=%27%3B--');
    expect(odd.statusCode).toBe(200);
    expect(names(odd.body)).toHaveLength(25);
    expect((await session.get('/?after=%00')).statusCode).toBe(400);
  });

  it('shows 25 orders a page in the order history and on the company page, and pages the documents the same way', async () => {
    const owner = await t.newTenant('Many Orders Co');
    const { user, company } = await createCompany(owner, 'test', { legalName: 'Busy Client LLC' });
    const orders: string[] = [];
    for (let i = 0; i < 27; i++)
      orders.push(
        (
          await createOrderRow(t.ctx, tenantOf(owner), {
            companyId: company.id,
            userId: user.id,
            orderType: 'annual_report',
          })
        ).orderId,
      );
    for (let i = 0; i < 27; i++) {
      const doc = await owner.api('POST', `/test_helpers/orders/${orders[i % orders.length]}/documents`, {
        documentType: 'company',
      });
      expect(doc.statusCode, doc.body).toBe(201);
    }
    const session = await signIn(t, owner, { userId: user.id });
    const orderCount = (html: string) => (html.match(/<li class="order">/g) ?? []).length;
    // The company page lists its deadlines the same way: count only its "Filings and orders" section.
    const filingsOf = (html: string) =>
      html.slice(html.indexOf('id="filings-title"'), html.indexOf('id="documents-title"'));
    const documentIds = (html: string) =>
      [...html.matchAll(/\/documents\/(doc_[A-Za-z0-9]+)\/download/g)].map((m) => m[1]);

    const history = await session.get('/orders');
    expect(history.statusCode).toBe(200);
    expect(orderCount(history.body)).toBe(25);
    const more = /href="\/dashboard\/orders\?after=([a-z]+_[A-Za-z0-9]+)"/.exec(history.body);
    expect(more, 'a link to older orders').not.toBeNull();
    const older = await session.get(`/orders?after=${more![1]}`);
    expect(orderCount(older.body)).toBe(2);
    expect(older.body).not.toMatch(/\/orders\?after=/);

    const page = await session.get(`/companies/${company.id}`);
    expect(page.statusCode).toBe(200);
    expect(orderCount(filingsOf(page.body))).toBe(25);
    const olderOrders = /\?ordersAfter=([a-z]+_[A-Za-z0-9]+)"/.exec(page.body);
    expect(olderOrders, 'a link to older orders of the company').not.toBeNull();
    expect(
      orderCount(filingsOf((await session.get(`/companies/${company.id}?ordersAfter=${olderOrders![1]}`)).body)),
    ).toBe(2);

    const firstDocuments = documentIds(page.body);
    expect(firstDocuments).toHaveLength(25);
    const olderDocuments = /\?documentsAfter=([a-z]+_[A-Za-z0-9]+)"/.exec(page.body);
    expect(olderDocuments, 'a link to older documents').not.toBeNull();
    const rest = documentIds((await session.get(`/companies/${company.id}?documentsAfter=${olderDocuments![1]}`)).body);
    expect(rest).toHaveLength(2);
    const { rows } = await t.ctx.pool.query('SELECT id FROM documents WHERE company_id = $1', [company.id]);
    expect(new Set([...firstDocuments, ...rest])).toEqual(new Set(rows.map((r) => r.id)));
  });
});

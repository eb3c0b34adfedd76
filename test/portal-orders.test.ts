import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Environment } from '../src/context.js';
import { createCompany, createOrderRow, createUser, tenantOf } from './factories.js';
import { createTestApp, type TestApp, type TestTenant } from './harness.js';
import { credit, formationBody } from './orders-fixtures.js';
import { memberSession, type PortalClient } from './portal-helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

/** Places a DE (or `state`) formation with an EIN through the API. @returns the formation's and the EIN's order ids. */
async function placeFormation(tenant: TestTenant, userId: string, state = 'DE', env: Environment = 'test') {
  const body = formationBody(userId, state);
  const res = await tenant.api('POST', '/orders', body, { env });
  if (res.statusCode !== 201) throw new Error(`order: ${res.statusCode} ${res.body}`);
  const items = res.json<{ companyId: string; items: Array<{ orderId: string; orderType: string }> }>().items;
  return { formation: items.find((i) => i.orderType === 'formation')!.orderId, companyId: res.json().companyId };
}

/** The order ids listed on a portal orders page, in page order. */
const listed = (html: string) => [...html.matchAll(/<tr data-order="(order_[a-z0-9]+)">/g)].map((m) => m[1]!);

async function switchTo(client: PortalClient, environment: Environment) {
  await client.get('/portal/');
  const res = await client.post('/portal/environment', { _csrf: client.csrf(), environment });
  expect(res.statusCode).toBe(303);
}

describe('portal orders', () => {
  it('lists the tenant’s orders newest first and filters them by status, type, state, dates and user', async () => {
    const tenant = await t.newTenant('Orders Co');
    await credit(tenant, 5000);
    const ada = await createUser(tenant);
    const bob = await createUser(tenant, 'test', { fullName: 'Bob Builder' });
    const de = await placeFormation(tenant, ada.id, 'DE');
    const wy = await placeFormation(tenant, bob.id, 'WY');
    const advanced = await tenant.api('POST', `/test_helpers/orders/${wy.formation}/advance`, {
      filingStatus: 'exception',
      exceptionCode: '465',
      exceptionMessage: 'Name taken',
    });
    expect(advanced.statusCode).toBe(200);
    const { client } = await memberSession(t, tenant.organizationId, 'viewer');

    const all = await client.get('/portal/orders');
    expect(all.statusCode).toBe(200);
    expect(listed(all.body)).toEqual([wy.formation, de.formation]);

    expect(listed((await client.get('/portal/orders?status=exception')).body)).toEqual([wy.formation]);
    expect(listed((await client.get('/portal/orders?status=submitted')).body)).toEqual([de.formation]);
    expect(listed((await client.get('/portal/orders?state=DE')).body)).toEqual([de.formation]);
    expect(listed((await client.get('/portal/orders?type=ein')).body)).toEqual([]);
    expect(listed((await client.get('/portal/orders?type=formation&state=WY')).body)).toEqual([wy.formation]);
    expect(listed((await client.get(`/portal/orders?user=${encodeURIComponent(bob.email)}`)).body)).toEqual([
      wy.formation,
    ]);
    expect(listed((await client.get(`/portal/orders?user=${ada.id}`)).body)).toEqual([de.formation]);

    const today = new Date().toISOString().slice(0, 10);
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    expect(listed((await client.get(`/portal/orders?from=${today}&to=${today}`)).body)).toHaveLength(2);
    expect(listed((await client.get(`/portal/orders?from=${tomorrow}`)).body)).toEqual([]);
    expect(listed((await client.get(`/portal/orders?to=${yesterday}`)).body)).toEqual([]);

    // A bad filter is named beside its field and not applied; an unknown user shows nothing.
    const bad = await client.get('/portal/orders?from=2026-02-30&status=lost');
    expect(bad.body).toContain('id="err-from"');
    expect(bad.body).toContain('from: must be a date');
    expect(bad.body).toContain('status: must be one of');
    expect(listed(bad.body)).toHaveLength(2);
    const nobody = await client.get('/portal/orders?user=nobody%40example.com');
    expect(nobody.body).toContain('user: no user with this id or e-mail address in this environment');
    expect(listed(nobody.body)).toEqual([]);
  });

  it('pages with a cursor: every order once, in order, 50 to a page', async () => {
    const tenant = await t.newTenant('Many Orders Co');
    const made: string[] = [];
    for (let i = 0; i < 53; i++) made.push((await createOrderRow(t.ctx, tenantOf(tenant))).orderId);
    const { client } = await memberSession(t, tenant.organizationId, 'developer');
    const first = await client.get('/portal/orders');
    const page1 = listed(first.body);
    expect(page1).toHaveLength(50);
    const next = /href="(\/portal\/orders\?after=order_[a-z0-9]+)" rel="next"/.exec(first.body)?.[1];
    expect(next).toBeDefined();
    const second = await client.get(next!.replaceAll('&amp;', '&'));
    const page2 = listed(second.body);
    expect(page2).toHaveLength(3);
    expect(second.body).not.toContain('rel="next"');
    expect([...page1, ...page2]).toEqual([...made].reverse());
  });

  it('shows an order’s timeline, exception, documents, events and deliveries', async () => {
    const tenant = await t.newTenant('Order Page Co');
    await credit(tenant, 1000);
    const endpoint = await tenant.api('POST', '/webhook-endpoints', {
      url: 'http://127.0.0.1:9/hooks',
      eventTypes: ['filing.status_changed', 'document.uploaded'],
    });
    expect(endpoint.statusCode).toBe(201);
    const user = await createUser(tenant);
    const { formation } = await placeFormation(tenant, user.id);
    await tenant.api('POST', `/test_helpers/orders/${formation}/advance`, { filingStatus: 'pending' });
    await tenant.api('POST', `/test_helpers/orders/${formation}/advance`, {
      filingStatus: 'exception',
      exceptionCode: '465',
      exceptionMessage: 'The name is taken',
    });
    const doc = await tenant.api('POST', `/test_helpers/orders/${formation}/documents`, {
      documentType: 'articles_of_organization',
    });
    expect(doc.statusCode).toBe(201);
    const documentId = doc.json().documentId as string;

    const { client } = await memberSession(t, tenant.organizationId, 'viewer');
    const page = await client.get(`/portal/orders/${formation}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Exception <code>465</code>');
    expect(page.body).toContain('The name is taken');
    // The timeline, oldest first: placed, then pending, then the exception.
    const timeline = /<ol class="timeline">([\s\S]*?)<\/ol>/.exec(page.body)![1]!;
    expect([...timeline.matchAll(/<strong>([^<]+)<\/strong>/g)].map((m) => m[1])).toEqual([
      'Submitted',
      'Pending',
      'Exception',
    ]);
    // The document's link is the API's: the file route, signed, one hour.
    const api = await tenant.api('GET', `/documents/${documentId}`);
    const apiUrl = new URL(api.json().fileUrl as string);
    const link = /<a href="([^"]+)" data-document="([^"]+)">/.exec(page.body)!;
    expect(link[2]).toBe(documentId);
    const pageUrl = new URL(link[1]!.replaceAll('&amp;', '&'));
    expect(pageUrl.pathname).toBe(apiUrl.pathname);
    expect(pageUrl.searchParams.get('signature')).toMatch(/^[0-9a-f]{64}$/);
    const file = await t.app.inject({ method: 'GET', url: `${pageUrl.pathname}${pageUrl.search}` });
    expect(file.statusCode).toBe(200);
    // Events of the order and their deliveries, linked to their own pages.
    const events = await tenant.api('GET', `/events?orderId=${formation}`);
    const eventIds = (events.json().data as Array<{ id: string }>).map((e) => e.id);
    expect(eventIds.length).toBeGreaterThanOrEqual(4);
    for (const id of eventIds) expect(page.body).toContain(`href="/portal/events/${id}"`);
    expect(page.body).toMatch(/href="\/portal\/deliveries\/wd_[a-z0-9]+"/);
  });

  it('never shows another organization’s or the other environment’s orders: their ids are not found', async () => {
    const mine = await t.newTenant('Mine Co');
    const theirs = await t.newTenant('Theirs Co');
    await credit(mine, 1000);
    await credit(theirs, 1000);
    await t.admin('POST', `/organizations/${mine.organizationId}/balance-credits`, {
      environment: 'live',
      amount: 1000,
    });
    const testOrder = await placeFormation(mine, (await createUser(mine)).id);
    const liveOrder = await placeFormation(mine, (await createUser(mine, 'live')).id, 'DE', 'live');
    const otherOrder = await placeFormation(theirs, (await createUser(theirs)).id);

    const { client } = await memberSession(t, mine.organizationId, 'owner');
    expect(listed((await client.get('/portal/orders')).body)).toEqual([testOrder.formation]);
    expect((await client.get(`/portal/orders/${otherOrder.formation}`)).statusCode).toBe(404);
    expect((await client.get(`/portal/orders/${liveOrder.formation}`)).statusCode).toBe(404);
    expect((await client.get(`/portal/companies/${otherOrder.companyId}`)).statusCode).toBe(404);
    expect((await client.get(`/portal/companies/${liveOrder.companyId}`)).statusCode).toBe(404);
    // Another tenant's order as a cursor pages nothing of theirs.
    expect(listed((await client.get(`/portal/orders?after=${otherOrder.formation}`)).body)).toEqual([]);
    // A cursor that is no order id at all is not one of the tenant's orders either (PORTAL-30).
    expect(listed((await client.get('/portal/orders?after=garbage')).body)).toEqual([]);

    await switchTo(client, 'live');
    expect(listed((await client.get('/portal/orders')).body)).toEqual([liveOrder.formation]);
    expect((await client.get(`/portal/orders/${liveOrder.formation}`)).statusCode).toBe(200);
    expect((await client.get(`/portal/orders/${testOrder.formation}`)).statusCode).toBe(404);
  });
});

describe('portal companies and users', () => {
  it('lists the tenant’s companies and users, and shows a company’s compliance calendar', async () => {
    const tenant = await t.newTenant('Records Co');
    const other = await t.newTenant('Other Records Co');
    const { company, user } = await createCompany(tenant, 'test', {
      formationDate: '2024-03-15',
      formationState: 'DE',
    });
    const bare = await createCompany(tenant, 'test', { legalName: 'Undated Holdings LLC' });
    expect((await tenant.api('PATCH', `/companies/${bare.company.id}`, { formationDate: null })).statusCode).toBe(200);
    const live = await createCompany(tenant, 'live', { legalName: 'Live Only LLC' });
    const foreign = await createCompany(other, 'test', { legalName: 'Foreign Tenant LLC' });
    const { client } = await memberSession(t, tenant.organizationId, 'viewer');

    const companies = await client.get('/portal/companies');
    expect(companies.statusCode).toBe(200);
    expect([...companies.body.matchAll(/data-company="([^"]+)"/g)].map((m) => m[1])).toEqual([
      bare.company.id,
      company.id,
    ]);
    expect(companies.body).not.toContain(live.company.id);
    expect(companies.body).not.toContain(foreign.company.id);

    const page = await client.get(`/portal/companies/${company.id}`);
    expect(page.statusCode).toBe(200);
    // As GET /companies/{id} shows it: the addresses too.
    const api = (await tenant.api('GET', `/companies/${company.id}`)).json();
    expect(page.body).toContain(`${api.principalAddress.line1}, ${api.principalAddress.city}`);
    expect(page.body).toMatch(/<dt>Mailing address<\/dt><dd>[^<—]+<\/dd>/);
    const calendar = await tenant.api('GET', `/companies/${company.id}/compliance-calendar`);
    const ids = (calendar.json().items as Array<{ id: string }>).map((i) => i.id);
    expect(ids.length).toBeGreaterThan(0);
    expect([...page.body.matchAll(/data-deadline="([^"]+)"/g)].map((m) => m[1])).toEqual(ids);
    // A name of spaces alone (the API takes it) still gives the link, the heading and the row header a text.
    const blank = await createCompany(tenant, 'test', { legalName: '   ' });
    const blankPage = await client.get(`/portal/companies/${blank.company.id}`);
    expect(blankPage.body).toContain('<h1>(no name)</h1>');
    expect((await client.get('/portal/companies')).body).toContain(
      `<a href="/portal/companies/${blank.company.id}">(no name)</a>`,
    );
    const undated = await client.get(`/portal/companies/${bare.company.id}`);
    expect(undated.statusCode).toBe(200);
    expect(undated.body).toContain('has no formationDate');

    const users = await client.get('/portal/users');
    expect(users.body).toContain(`data-user="${user.id}"`);
    expect(users.body).toContain(`data-user="${bare.user.id}"`);
    expect(users.body).not.toContain(live.user.id);
    expect(users.body).not.toContain(foreign.user.id);
    expect(users.body).toContain(`href="/portal/orders?user=${user.id}"`);
  });

  it('shows the nav links a role may read', async () => {
    const tenant = await t.newTenant('Nav Co');
    const viewer = await memberSession(t, tenant.organizationId, 'viewer');
    const home = await viewer.client.get('/portal/');
    for (const path of ['/portal/orders', '/portal/companies', '/portal/users', '/portal/branding'])
      expect(home.body).toContain(`href="${path}"`);
    expect(home.body).not.toContain('href="/portal/balance"');
    expect(home.body).not.toContain('href="/portal/prices"');
    const owner = await memberSession(t, tenant.organizationId, 'owner');
    const ownerHome = await owner.client.get('/portal/orders');
    expect(ownerHome.body).toContain('href="/portal/balance"');
    expect(ownerHome.body).toContain('href="/portal/prices"');
    expect(ownerHome.body).toMatch(/<a href="\/portal\/orders" aria-current="page">Orders<\/a>/);
  });
});

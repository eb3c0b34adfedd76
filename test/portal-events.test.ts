import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Environment } from '../src/context.js';
import { withTransaction } from '../src/lib/db.js';
import { newId } from '../src/lib/ids.js';
import { emitEvents, type NewEvent } from '../src/modules/events/events.service.js';
import { createTestApp, type TestApp, type TestTenant } from './harness.js';
import { memberSession } from './portal-helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

/** Emits events as every module does (one transaction, emitEvents). @returns their ids in order. */
async function emit(tenant: TestTenant, events: NewEvent[], environment: Environment = 'test'): Promise<string[]> {
  const written = await withTransaction(t.ctx.pool, (tx) =>
    emitEvents(tx, { organizationId: tenant.organizationId, environment }, events),
  );
  return written.map((e) => e.id);
}

const statusChanged = (orderId: string, companyId: string): NewEvent => ({
  type: 'filing.status_changed',
  data: { orderId, companyId, orderType: 'formation', filingStatus: 'filed', filingDate: null, filingType: null },
});
const uploaded = (companyId: string): NewEvent => ({
  type: 'document.uploaded',
  data: { documentId: newId('document'), documentType: 'company', companyId, orderId: null },
});

describe('the events explorer', () => {
  it('filters by type, id and object id', async () => {
    const tenant = await t.newTenant('Explorer Co');
    const [orderA, orderB, company] = [newId('order'), newId('order'), newId('company')];
    const [forA, forB, doc] = await emit(tenant, [
      statusChanged(orderA, company),
      statusChanged(orderB, newId('company')),
      uploaded(company),
    ]);
    const { client } = await memberSession(t, tenant.organizationId, 'viewer');

    const all = await client.get('/portal/events');
    expect(all.statusCode).toBe(200);
    for (const id of [forA, forB, doc]) expect(all.body).toContain(id);

    const byType = await client.get('/portal/events?type=document.uploaded');
    expect(byType.body).toContain(doc);
    expect(byType.body).not.toContain(forA);

    const byId = await client.get(`/portal/events?id=${forB}`);
    expect(byId.body).toContain(forB);
    expect(byId.body).not.toContain(forA);

    const byOrder = await client.get(`/portal/events?object=${orderA}`);
    expect(byOrder.body).toContain(forA);
    expect(byOrder.body).not.toContain(forB);

    const byCompany = await client.get(`/portal/events?object=${company}`);
    expect(byCompany.body).toContain(forA);
    expect(byCompany.body).toContain(doc);
    expect(byCompany.body).not.toContain(forB);

    const refused = await client.get('/portal/events?object=nonsense');
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('must be an order_ or comp_ id');
  });

  it('pages newest first with a keyset link', async () => {
    const tenant = await t.newTenant('Many Events Co');
    const ids = await emit(
      tenant,
      Array.from({ length: 52 }, () => uploaded(newId('company'))),
    );
    const { client } = await memberSession(t, tenant.organizationId, 'viewer');
    const first = await client.get('/portal/events');
    expect(first.body).toContain(ids[51]);
    expect(first.body).not.toContain(ids[1]);
    const next = /href="(\/portal\/events\?before=[^"]+)">Older events/.exec(first.body)?.[1];
    expect(next).toBeDefined();
    const second = await client.get(next!.replace(/&amp;/g, '&'));
    expect(second.body).toContain(ids[0]);
    expect(second.body).toContain(ids[1]);
    expect(second.body).not.toContain(ids[51]);
    expect(second.body).not.toContain('Older events');
  });

  it('shows an event with its payload and its deliveries', async () => {
    const tenant = await t.newTenant('Event Page Co');
    const endpoint = await tenant.api('POST', '/webhook-endpoints', {
      url: 'http://127.0.0.1:1/hook',
      eventTypes: ['document.uploaded'],
    });
    expect(endpoint.statusCode).toBe(201);
    const company = newId('company');
    const [eventId] = await emit(tenant, [uploaded(company)]);
    const { client } = await memberSession(t, tenant.organizationId, 'viewer');
    const page = await client.get(`/portal/events/${eventId}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(`&quot;companyId&quot;: &quot;${company}&quot;`);
    const { rows } = await t.ctx.pool.query('SELECT id FROM webhook_deliveries WHERE event_id = $1', [eventId]);
    expect(rows).toHaveLength(1);
    expect(page.body).toContain(`href="/portal/deliveries/${rows[0].id}"`);
    expect(page.body).toContain('http://127.0.0.1:1/hook');
  });

  it("answers 404 for another organization's and the other environment's events", async () => {
    const tenant = await t.newTenant('Own Events Co');
    const other = await t.newTenant('Other Events Co');
    const [theirs] = await emit(other, [uploaded(newId('company'))]);
    const [live] = await emit(tenant, [uploaded(newId('company'))], 'live');
    const { client } = await memberSession(t, tenant.organizationId, 'viewer');
    expect((await client.get(`/portal/events/${theirs}`)).statusCode).toBe(404);
    expect((await client.get(`/portal/events/${live}`)).statusCode).toBe(404);
    const list = await client.get('/portal/events');
    expect(list.body).not.toContain(theirs);
    expect(list.body).not.toContain(live);
    await client.post('/portal/environment', { _csrf: client.csrf(), environment: 'live' });
    expect((await client.get(`/portal/events/${live}`)).statusCode).toBe(200);
  });
});

import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './harness.js';
import { credit, einObject, formationBody, newUser } from './orders-fixtures.js';

/*
 * Round trips are what an order costs on a loaded database: every statement waits for the server. This counts the
 * statements one POST /orders (formation + ein + registeredAgent) sends, the API-key check included (ORD-13, AUTH-12).
 */

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

/** Runs `work` and counts the queries every pg client of this process sent meanwhile. */
async function countQueries<T>(work: () => Promise<T>): Promise<{ result: T; queries: string[] }> {
  const original = pg.Client.prototype.query;
  const queries: string[] = [];
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const q = args[0] as string | { text: string };
    const text = typeof q === 'string' ? q : q?.text;
    // The rate limiter's timer syncs its counters now and then, whatever the requests: not part of an order.
    if (!/rate_limit_counters/.test(text)) queries.push(text);
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof original;
  try {
    return { result: await work(), queries };
  } finally {
    pg.Client.prototype.query = original;
  }
}

it('places formation + ein + registeredAgent in 6 round trips: the API key costs none once known', async () => {
  const tenant = await t.newTenant('Round Trip Org');
  const user = await newUser(tenant);
  await credit(tenant, 10_000);
  await tenant.api('GET', '/organization'); // warms the key cache, as any earlier request of a client does
  const body = { userId: user.id, filingState: 'DE', formation: { company: formationBody(user.id).formation.company }, ein: einObject(), registeredAgent: { isChangeOfAgent: false } };
  const { result, queries } = await countQueries(() => tenant.api('POST', '/orders', body));
  expect(result.statusCode, result.body).toBe(201);
  console.log(`POST /orders round trips: ${queries.length}\n${queries.map((q) => q.replace(/\s+/g, ' ').slice(0, 100)).join('\n')}`);
  expect(queries.length).toBeLessThanOrEqual(6);
  expect(queries.filter((q) => /api_keys/.test(q))).toEqual([]);
});

it('answers a single company, user, document or event in one round trip', async () => {
  const tenant = await t.newTenant('Read Trip Org');
  const user = await newUser(tenant);
  await credit(tenant, 10_000);
  const placed = (await tenant.api('POST', '/orders', formationBody(user.id, 'DE'))).json();
  const document = (await tenant.api('POST', `/test_helpers/orders/${placed.items[0].orderId}/documents`, { documentType: 'company' })).json();
  const event = (await tenant.api('GET', '/events?limit=1')).json().data[0];
  for (const path of [`/companies/${placed.companyId}`, `/users/${user.id}`, `/documents/${document.documentId}`, `/events/${event.id}`]) {
    const { result, queries } = await countQueries(() => tenant.api('GET', path));
    expect(result.statusCode, path).toBe(200);
    expect(queries, path).toHaveLength(1);
  }
});

import { AsyncLocalStorage } from 'node:async_hooks';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './harness.js';
import { credit, einObject, formationBody, formationCompany, newUser } from './orders-fixtures.js';

/*
 * Round trips are what an order costs on a loaded database: every statement waits for the server. This counts the
 * statements one POST /orders (formation + ein + registeredAgent) sends, the API-key check and prices included
 * (ORD-13, AUTH-12, BILL-19).
 */

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

/** Marks the asynchronous work a count is taken of. */
const counting = new AsyncLocalStorage<string[]>();

/**
 * Runs `work` and counts the queries the pg clients of this process sent for it: those sent from `work`'s own
 * asynchronous context, so a timer of the app that fires meanwhile (a cache's reconnection, a counter sync) is not
 * counted against the request. With `holdFirst`, the first query matching it is sent that many ms late (as if the
 * database were slow to take it).
 */
async function countQueries<T>(
  work: () => Promise<T>,
  holdFirst?: { pattern: RegExp; ms: number },
): Promise<{ result: T; queries: string[] }> {
  const original = pg.Client.prototype.query;
  const queries: string[] = [];
  let held = false;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const q = args[0] as string | { text: string };
    const text = typeof q === 'string' ? q : q?.text;
    if (counting.getStore() === queries) queries.push(text);
    const send = () => (original as (...a: unknown[]) => unknown).apply(this, args);
    if (holdFirst && !held && holdFirst.pattern.test(text)) {
      held = true;
      const callback = args.find((a) => typeof a === 'function');
      if (callback) return void setTimeout(send, holdFirst.ms);
      return new Promise((resolve) => setTimeout(resolve, holdFirst.ms)).then(send);
    }
    return send();
  } as typeof original;
  try {
    return { result: await counting.run(queries, work), queries };
  } finally {
    pg.Client.prototype.query = original;
  }
}

/** The wake-up statements among `queries` (OPS-5). */
function wakeUps(queries: string[]): string[] {
  return queries.filter((q) => /pg_notify/.test(q));
}

/** A LISTEN connection of its own on `channels`; `messages` collects "<channel> <payload>" as they arrive. */
async function listenTo(channels: string[]): Promise<{ messages: string[]; stop(): Promise<void> }> {
  const client = new pg.Client(t.ctx.pool.options as pg.ClientConfig);
  await client.connect();
  const messages: string[] = [];
  client.on('notification', (n) => messages.push(`${n.channel} ${n.payload}`));
  await client.query(channels.map((c) => `LISTEN ${c}`).join('; '));
  return { messages, stop: () => client.end() };
}

/** A webhook endpoint of `tenant` that takes filing.status_changed, so its placements write deliveries. */
async function subscribeEndpoint(tenant: Awaited<ReturnType<TestApp['newTenant']>>): Promise<void> {
  const res = await tenant.api('POST', '/webhook-endpoints', {
    url: 'https://hooks.example.com/filings',
    eventTypes: ['filing.status_changed'],
  });
  expect(res.statusCode, res.body).toBe(201);
}

it('places formation + ein + registeredAgent in ONE statement once the key and prices are known, and wakes nobody when nobody listens', async () => {
  const tenant = await t.newTenant('Round Trip Org');
  const user = await newUser(tenant);
  await credit(tenant, 10_000);
  const body = {
    userId: user.id,
    filingState: 'DE',
    formation: { company: formationBody(user.id).formation.company },
    ein: einObject(),
    registeredAgent: { isChangeOfAgent: false },
  };
  // Any earlier order of the tenant (or quote) has put its key, its prices and the state's fees in memory.
  expect((await tenant.api('POST', '/orders/quote', body)).statusCode).toBe(200);
  const { result, queries } = await countQueries(async () => {
    const res = await tenant.api('POST', '/orders', body);
    await new Promise((resolve) => setTimeout(resolve, 200)); // a wake-up would be sent after the answer's commit
    return res;
  });
  expect(result.statusCode, result.body).toBe(201);
  console.log(
    `POST /orders statements: ${queries.length}\n${queries.map((q) => q.replace(/\s+/g, ' ').slice(0, 100)).join('\n')}`,
  );
  // The order itself: one statement, its own transaction (no BEGIN/COMMIT round trips, no reads first). The tenant
  // has no webhook endpoint and no event stream open: no wake-up follows (OPS-6).
  expect(queries).toEqual(['SELECT place_order_groups_of_tenants($1::jsonb) AS r']);
  const events = (await tenant.api('GET', '/events?limit=10')).json().data;
  expect(events.filter((e: { type: string }) => e.type === 'filing.status_changed')).toHaveLength(3);
});

it('wakes the dispatchers after a placement that wrote webhook deliveries, on their own channel (OPS-5, OPS-6)', async () => {
  const tenant = await t.newTenant('Delivery Wake Org');
  const user = await newUser(tenant);
  await credit(tenant, 10_000);
  await subscribeEndpoint(tenant);
  expect((await tenant.api('POST', '/orders/quote', formationBody(user.id, 'DE'))).statusCode).toBe(200);
  const heard = await listenTo(['events_inserted', 'webhook_deliveries_due']);
  const { result, queries } = await countQueries(async () => {
    const res = await tenant.api('POST', '/orders', formationBody(user.id, 'DE'));
    await new Promise((resolve) => setTimeout(resolve, 200));
    return res;
  }).finally(() => heard.stop());
  expect(result.statusCode, result.body).toBe(201);
  // OPS-5: the wake-up goes out on its own after the commit, never inside the order's transaction.
  expect(queries.filter((q) => !/pg_notify/.test(q))).toEqual(['SELECT place_order_groups_of_tenants($1::jsonb) AS r']);
  expect(wakeUps(queries)).toHaveLength(1);
  // OPS-6: on the dispatchers' own channel; no stream of the tenant is open, so the event streams are not woken.
  expect(heard.messages).toEqual(['webhook_deliveries_due ']);
  // What the dispatchers are woken for: one delivery per order's filing.status_changed event.
  const { rows } = await t.ctx.pool.query<{ events: number; deliveries: number }>(
    `SELECT count(*)::int AS events, count(d.id)::int AS deliveries
       FROM events e LEFT JOIN webhook_deliveries d ON d.event_id = e.id
      WHERE e.organization_id = $1 AND e.type = 'filing.status_changed'`,
    [tenant.organizationId],
  );
  expect(rows[0]!.events).toBe(result.json().items.length);
  expect(rows[0]!.deliveries).toBe(rows[0]!.events);
});

it('wakes the event streams after a placement only while a stream of the tenant is open somewhere (OPS-6)', async () => {
  const tenant = await t.newTenant('Stream Wake Org');
  const user = await newUser(tenant);
  await credit(tenant, 100_000);
  expect((await tenant.api('POST', '/orders/quote', formationBody(user.id, 'DE'))).statusCode).toBe(200);
  const listener = await listenTo(['events_inserted', 'webhook_deliveries_due']);
  const heard = listener.messages;
  const place = async (i: number) => {
    const company = formationCompany('LLC', { legalName: `Stream Wake ${i} LLC` });
    const res = await tenant.api('POST', '/orders', formationBody(user.id, 'DE', { formation: { company } }));
    expect(res.statusCode, res.body).toBe(201);
    await new Promise((resolve) => setTimeout(resolve, 200));
  };
  const streamed = `${tenant.organizationId}:test`;
  try {
    await place(1);
    expect(heard).toEqual([]);
    // Another process's hub streams the tenant: its row is all this process goes by.
    await t.ctx.pool.query(
      `INSERT INTO event_stream_tenants (organization_id, environment, hub_id, expires_at)
       VALUES ($1, 'test', 'elsewhere:1:abcd', now() + interval '30 seconds')`,
      [tenant.organizationId],
    );
    await place(2);
    expect(heard).toEqual([`events_inserted ${streamed}`]);
    // Its process went away without removing the row: once lapsed, nobody is woken again.
    await t.ctx.pool.query(
      `UPDATE event_stream_tenants SET expires_at = now() - interval '1 second' WHERE organization_id = $1`,
      [tenant.organizationId],
    );
    await place(3);
    expect(heard).toHaveLength(1);
  } finally {
    await listener.stop();
  }
});

it('wakes the listeners once per placement statement when a busy tenant places orders together (ORD-17, OPS-5)', async () => {
  const tenant = await t.newTenant('Busy Round Trip Org');
  const user = await newUser(tenant);
  await credit(tenant, 100_000);
  await subscribeEndpoint(tenant);
  expect((await tenant.api('POST', '/orders/quote', formationBody(user.id, 'DE'))).statusCode).toBe(200);
  const { result, queries } = await countQueries(
    async () => {
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          tenant.api(
            'POST',
            '/orders',
            formationBody(user.id, 'DE', {
              formation: { company: formationCompany('LLC', { legalName: `Busy ${i} Holdings LLC` }) },
            }),
          ),
        ),
      );
      await new Promise((resolve) => setTimeout(resolve, 200));
      return answers;
    },
    { pattern: /place_order_groups/, ms: 300 },
  );
  for (const res of result) expect(res.statusCode, res.body).toBe(201);
  // The first is written at once (its statement held back a moment); of the seven that arrive meanwhile, the first
  // three to wait go out behind it on its connection and the rest once it answers (or all together, when they wait
  // before it is sent). Each statement's placements are answered in one turn of the event loop, and their wake-ups
  // share one NOTIFY statement.
  const placements = queries.filter((q) => /place_order_groups/.test(q));
  expect(placements.length).toBeGreaterThanOrEqual(2);
  expect(placements.length).toBeLessThanOrEqual(3);
  expect(wakeUps(queries)).toHaveLength(placements.length);
});

it('answers a single company, user, document or event in one round trip', async () => {
  const tenant = await t.newTenant('Read Trip Org');
  const user = await newUser(tenant);
  await credit(tenant, 10_000);
  const placed = (await tenant.api('POST', '/orders', formationBody(user.id, 'DE'))).json();
  const document = (
    await tenant.api('POST', `/test_helpers/orders/${placed.items[0].orderId}/documents`, { documentType: 'company' })
  ).json();
  const event = (await tenant.api('GET', '/events?limit=1')).json().data[0];
  for (const path of [
    `/companies/${placed.companyId}`,
    `/users/${user.id}`,
    `/documents/${document.documentId}`,
    `/events/${event.id}`,
  ]) {
    // Once the key is cached (AUTH-12): a notification heard while the key was read keeps it from being cached.
    expect((await tenant.api('GET', path)).statusCode, path).toBe(200);
    const { result, queries } = await countQueries(() => tenant.api('GET', path));
    expect(result.statusCode, path).toBe(200);
    expect(queries, `${path}: ${queries.join(' | ')}`).toHaveLength(1);
  }
});

it('plans the placement functions once per connection, not at every call (migration 094)', async () => {
  // A CREATE OR REPLACE of one of them without the setting would silently bring back planning at every call.
  const { rows } = await t.ctx.pool.query<{ proname: string; proconfig: string[] | null }>(
    `SELECT proname, proconfig FROM pg_proc
      WHERE proname IN ('place_order_groups_of_tenants', 'emit_events_of_tenants', 'post_ledger_entries_of_tenants')
      ORDER BY proname`,
  );
  expect(rows).toEqual(
    ['emit_events_of_tenants', 'place_order_groups_of_tenants', 'post_ledger_entries_of_tenants'].map((proname) => ({
      proname,
      // post_ledger_entries_of_tenants also pins its search_path, as a SECURITY DEFINER function must (SEC-3). Without
      // jit=off, PostgreSQL builds with LLVM compile each statement's generic plan: about 600 M instructions a call.
      proconfig: expect.arrayContaining(['plan_cache_mode=force_generic_plan', 'jit=off']),
    })),
  );
});

import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './harness.js';
import { balanceCents, credit, formationBody, newUser, stateFee, wholesale } from './orders-fixtures.js';
import { statementsDuring } from './statements.js';

/*
 * BILL-3, ORD-11: many simultaneous POST /orders against a balance that covers only some of them. The balance
 * never goes negative, exactly as many succeed as it can pay for, and the ledger sums match the balance.
 */

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

it('races 24 formations at a balance that covers 7', async () => {
  const tenant = await t.newTenant('Race Org');
  const user = await newUser(tenant);
  const price = wholesale('formation_tier_1') + stateFee('DE', 'Formation', 'LLC');
  const affordable = 7;
  const creditCents = price * affordable + price - 1; // one cent short of an eighth
  await credit(tenant, creditCents / 100);

  const results = await Promise.all(
    Array.from({ length: 24 }, () => tenant.api('POST', '/orders', formationBody(user.id, 'DE'))),
  );
  const statuses = results.map((r) => r.statusCode);
  expect(statuses.filter((s) => s === 201)).toHaveLength(affordable);
  expect(statuses.filter((s) => s === 402)).toHaveLength(24 - affordable);

  const balance = await balanceCents(tenant);
  expect(balance).toBe(creditCents - affordable * price);
  expect(balance).toBeGreaterThanOrEqual(0);

  const q = await t.ctx.pool.query(
    `SELECT COALESCE(sum(amount_cents) FILTER (WHERE type = 'credit'), 0)::bigint AS credits,
            COALESCE(-sum(amount_cents) FILTER (WHERE type = 'debit'), 0)::bigint AS debits,
            sum(amount_cents)::bigint AS net,
            min(balance_after_cents)::bigint AS lowest,
            (SELECT balance_cents FROM balances WHERE organization_id = $1 AND environment = 'test') AS cached,
            (SELECT count(*) FROM orders WHERE organization_id = $1)::int AS orders,
            (SELECT count(*) FROM companies WHERE organization_id = $1)::int AS companies
       FROM ledger_entries WHERE organization_id = $1 AND environment = 'test'`,
    [tenant.organizationId],
  );
  const r = q.rows[0];
  expect(Number(r.credits)).toBe(creditCents);
  expect(Number(r.debits)).toBe(affordable * price);
  expect(Number(r.net)).toBe(Number(r.credits) - Number(r.debits));
  expect(Number(r.net)).toBe(Number(r.cached));
  expect(Number(r.lowest)).toBeGreaterThanOrEqual(0);
  expect(r.orders).toBe(affordable);
  expect(r.companies).toBe(affordable);
  // The running balance_after of the entries is consistent with their order (no lost update).
  const entries = await t.ctx.pool.query(
    `SELECT amount_cents, balance_after_cents FROM ledger_entries WHERE organization_id = $1 ORDER BY id`,
    [tenant.organizationId],
  );
  let running = 0;
  for (const e of entries.rows) {
    running += Number(e.amount_cents);
    expect(Number(e.balance_after_cents)).toBe(running);
  }
});

it("writes a burst of one tenant's formations in fewer statements than orders, each answered as if alone", async () => {
  // ORD-17: formations that arrive while the tenant's statement runs are written together by the next one; an
  // unknown user, a repeated name and the others each still get their own answer.
  const tenant = await t.newTenant('Batch Org');
  const user = await newUser(tenant);
  const price = wholesale('formation_tier_1') + stateFee('DE', 'Formation', 'LLC');
  await credit(tenant, (price * 20) / 100);
  const bodies = Array.from({ length: 12 }, (_, i) =>
    formationBody(user.id, 'DE', {
      formation: { company: { ...formationBody(user.id).formation.company, legalName: `Burst ${i} LLC` } },
    }),
  );
  bodies[3] = formationBody('user_00000000000000000000000000', 'DE'); // not a user of the tenant
  bodies[7] = bodies[6]!; // the same name twice: the second gets the next free slug
  const { result: results, statements: sent } = await statementsDuring(() =>
    Promise.all(bodies.map((b) => tenant.api('POST', '/orders', b))),
  );
  const statements = sent.filter((text) => /place_order_groups/.test(text));
  expect(results.map((r) => r.statusCode)).toEqual(bodies.map((_, i) => (i === 3 ? 404 : 201)));
  expect(results[3]!.json().errors).toEqual([{ field: 'userId', message: expect.stringContaining('no user') }]);
  expect(statements.length).toBeGreaterThan(0);
  expect(statements.length).toBeLessThan(bodies.length);
  const slugs = await Promise.all(
    [6, 7].map(async (i) => (await tenant.api('GET', `/companies/${results[i]!.json().companyId}`)).json().slug),
  );
  expect(new Set(slugs).size).toBe(2);
  expect(await balanceCents(tenant)).toBe(price * 20 - price * 11);
  // Only the placed orders told of themselves, each once.
  const told = (await tenant.api('GET', '/events?type=filing.status_changed&limit=100')).json().data;
  const placedOrders = results.filter((r) => r.statusCode === 201).map((r) => r.json().items[0].orderId);
  expect(told.map((e: { data: { orderId: string } }) => e.data.orderId).sort()).toEqual(placedOrders.sort());
});

it('races EIN orders for one company: exactly one wins, the others are 409', async () => {
  const tenant = await t.newTenant('EIN race');
  await credit(tenant, 1_000);
  const { createCompany } = await import('./factories.js');
  const { einObject } = await import('./orders-fixtures.js');
  const { user, company } = await createCompany(tenant);
  const results = await Promise.all(
    Array.from({ length: 8 }, () =>
      tenant.api('POST', '/orders', { userId: user.id, companyId: company.id, filingState: 'DE', ein: einObject() }),
    ),
  );
  const statuses = results.map((r) => r.statusCode).sort();
  expect(statuses.filter((s) => s === 201)).toHaveLength(1);
  expect(statuses.filter((s) => s === 409)).toHaveLength(7);
  expect(await balanceCents(tenant)).toBe(100_000 - wholesale('ein'));
});

it('races formations of four tenants, one of which can pay for two of its six: each answered as if alone', async () => {
  // ORD-40: placements of several tenants waiting at once share one statement; the tenant that cannot pay makes such
  // a statement fail whole, and then each tenant's placements are written again on their own.
  const price = wholesale('formation_tier_1') + stateFee('DE', 'Formation', 'LLC');
  const tenants = await Promise.all(['Many A', 'Many B', 'Many C', 'Many D'].map((name) => t.newTenant(name)));
  const users = await Promise.all(tenants.map((tenant) => newUser(tenant)));
  const credits = [price * 6, price * 6, price * 6, price * 2];
  for (const [i, tenant] of tenants.entries()) await credit(tenant, credits[i]! / 100);
  // Six formations per tenant, the tenants taking turns; the second of tenant B's is for a user of another tenant.
  const requests = Array.from({ length: 24 }, (_, n) => {
    const i = n % 4;
    const userId = i === 1 && n === 5 ? users[0]!.id : users[i]!.id;
    const company = { ...formationBody(userId).formation.company, legalName: `Many ${n} LLC` };
    return { i, body: formationBody(userId, 'DE', { formation: { company } }) };
  });
  const { result: results, statements } = await statementsDuring(() =>
    Promise.all(requests.map(({ i, body }) => tenants[i]!.api('POST', '/orders', body))),
  );
  expect(statements.some((s) => /place_order_groups_of_tenants/.test(s))).toBe(true);
  const statuses = (i: number) => results.filter((_, n) => requests[n]!.i === i).map((r) => r.statusCode);
  expect(statuses(0)).toEqual([201, 201, 201, 201, 201, 201]);
  expect(statuses(1)).toEqual([201, 404, 201, 201, 201, 201]);
  expect(statuses(2)).toEqual([201, 201, 201, 201, 201, 201]);
  expect(statuses(3).filter((s) => s === 201)).toHaveLength(2);
  expect(statuses(3).filter((s) => s === 402)).toHaveLength(4);
  for (const [n, r] of results.entries()) {
    if (r.statusCode === 402) expect([n % 4, r.json().code]).toEqual([3, 'insufficient_balance']);
  }
  const placed = [6, 5, 6, 2];
  for (const [i, tenant] of tenants.entries()) {
    expect(await balanceCents(tenant)).toBe(credits[i]! - placed[i]! * price);
    const q = await t.ctx.pool.query(
      `SELECT sum(amount_cents)::bigint AS net,
              (SELECT balance_cents FROM balances WHERE organization_id = $1 AND environment = 'test') AS cached,
              (SELECT count(*) FROM order_groups WHERE organization_id = $1)::int AS groups,
              (SELECT count(*) FROM companies WHERE organization_id = $1)::int AS companies
         FROM ledger_entries WHERE organization_id = $1 AND environment = 'test'`,
      [tenant.organizationId],
    );
    const { net, cached, groups, companies } = q.rows[0];
    const left = credits[i]! - placed[i]! * price;
    expect([Number(net), Number(cached), groups, companies]).toEqual([left, left, placed[i], placed[i]]);
    // The running balance_after of each tenant's entries is consistent with their order (no lost update).
    const entries = await t.ctx.pool.query(
      'SELECT amount_cents, balance_after_cents FROM ledger_entries WHERE organization_id = $1 ORDER BY id',
      [tenant.organizationId],
    );
    let running = 0;
    for (const e of entries.rows) {
      running += Number(e.amount_cents);
      expect(Number(e.balance_after_cents)).toBe(running);
    }
  }
});

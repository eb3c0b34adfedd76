import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import { checkedOrderBody, placeOrder, quoteOrder } from '../src/modules/orders/orders.service.js';
import { createCompany } from './factories.js';
import { createTestApp, type TestApp, type TestTenant } from './harness.js';
import {
  balanceCents,
  counts,
  credit,
  einObject,
  formationBody,
  newUser,
  SPEC_EXPEDITED_FEES,
  stateFee,
  suppliedAgent,
  TEST_SSN,
  toCents,
  wholesale,
} from './orders-fixtures.js';

/*
 * POST /orders debits (BILL-1 to BILL-9; ORD-6, ORD-7, ORD-9). Every expected amount is computed here
 * from data/price-catalog.json, data/state-fees.json and the expedited fees of ORD-FORM-5.
 */

let t: TestApp;
beforeAll(async () => {
  // As a deployed service connects (SEC-3): its pools log in as fcs_app, with fcs_service's rights only.
  t = await createTestApp({ DATABASE_SERVICE_ROLE: 'fcs_service' });
});
afterAll(() => t.close());

interface Ledger {
  type: string;
  amount: number;
  lineType: string;
  orderId: string | null;
}

/** A tenant with `dollars` of test money and a user. */
async function funded(dollars = 10_000) {
  const tenant = await t.newTenant();
  if (dollars > 0) await credit(tenant, dollars);
  const user = await newUser(tenant);
  return { tenant, userId: user.id };
}

/** The debits of one order, as [lineType, cents charged], from GET /balance-transactions. */
async function debitsOf(tenant: TestTenant, orderId: string): Promise<Array<[string, number]>> {
  const res = await tenant.api('GET', '/balance-transactions?limit=100');
  expect(res.statusCode).toBe(200);
  return (res.json().data as Ledger[])
    .filter((e) => e.orderId === orderId && e.type === 'debit')
    .map((e) => [e.lineType, 0 - toCents(e.amount) || 0] as [string, number])
    .sort(([a], [b]) => a.localeCompare(b));
}

const sorted = (lines: Array<[string, number]>) => [...lines].sort(([a], [b]) => a.localeCompare(b));
const item = (res: { json(): any }, orderType: string) =>
  res.json().items.find((i: { orderType: string }) => i.orderType === orderType);

describe('billing rules', () => {
  it('formation alone: tier 1 wholesale + the LLC formation fee of filingState (BILL-5, BILL-9)', async () => {
    const { tenant, userId } = await funded();
    const before = await balanceCents(tenant);
    const res = await tenant.api('POST', '/orders', formationBody(userId, 'DE'));
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json();
    expect(body.companyId).toMatch(/^comp_/);
    expect(body.items).toHaveLength(1);
    const expected = wholesale('formation_tier_1') + stateFee('DE', 'Formation', 'LLC');
    expect(body.items[0]).toEqual({
      orderId: expect.stringMatching(/^order_/),
      orderType: 'formation',
      filingStatus: 'submitted',
      filingDate: null,
      subscriptionStatus: null,
      createdAt: expect.any(String),
      filingType: null,
      filingState: 'DE',
      amount: expected / 100,
    });
    expect(await debitsOf(tenant, body.items[0].orderId)).toEqual(
      sorted([
        ['formation_tier_1', wholesale('formation_tier_1')],
        ['state_fee', stateFee('DE', 'Formation', 'LLC')],
      ]),
    );
    expect(before - (await balanceCents(tenant))).toBe(expected);
  });

  it('a corporation pays the corporation formation fee', async () => {
    const { tenant, userId } = await funded();
    const res = await tenant.api('POST', '/orders', formationBody(userId, 'CA', { entityType: 'CORP' }));
    expect(res.statusCode, res.body).toBe(201);
    expect(await debitsOf(tenant, res.json().items[0].orderId)).toEqual(
      sorted([
        ['formation_tier_1', wholesale('formation_tier_1')],
        ['state_fee', stateFee('CA', 'Formation', 'CORP')],
      ]),
    );
  });

  it('formation + ein in one request: tier 2 wholesale and the EIN line at 0 (BILL-5)', async () => {
    const { tenant, userId } = await funded();
    const before = await balanceCents(tenant);
    const res = await tenant.api('POST', '/orders', formationBody(userId, 'TX', { extra: { ein: einObject() } }));
    expect(res.statusCode, res.body).toBe(201);
    const formation = item(res, 'formation');
    const ein = item(res, 'ein');
    expect(ein).toMatchObject({ filingStatus: 'submitted', subscriptionStatus: null, amount: 0 });
    const expected = wholesale('formation_tier_2') + stateFee('TX', 'Formation', 'LLC');
    expect(formation.amount).toBe(expected / 100);
    expect(await debitsOf(tenant, formation.orderId)).toEqual(
      sorted([
        ['formation_tier_2', wholesale('formation_tier_2')],
        ['state_fee', stateFee('TX', 'Formation', 'LLC')],
      ]),
    );
    expect(await debitsOf(tenant, ein.orderId)).toEqual([['ein', 0]]);
    expect(before - (await balanceCents(tenant))).toBe(expected);
  });

  it('an EIN ordered later is billed at the ein wholesale price (BILL-5)', async () => {
    const { tenant } = await funded();
    const { user, company } = await createCompany(tenant);
    const before = await balanceCents(tenant);
    const res = await tenant.api('POST', '/orders', {
      userId: user.id,
      companyId: company.id,
      filingState: 'DE',
      ein: einObject(),
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().companyId).toBe(company.id);
    expect(await debitsOf(tenant, res.json().items[0].orderId)).toEqual([['ein', wholesale('ein')]]);
    expect(before - (await balanceCents(tenant))).toBe(wholesale('ein'));
  });

  it('registered agent: its wholesale, no state fee, an active subscription (BILL-6, ORD-RA-5)', async () => {
    const { tenant, userId } = await funded();
    const res = await tenant.api('POST', '/orders', {
      userId,
      filingState: 'NY',
      formation: { company: formationBody(userId).formation.company },
      registeredAgent: { isChangeOfAgent: false },
    });
    expect(res.statusCode, res.body).toBe(201);
    const ra = item(res, 'registered_agent');
    expect(ra).toMatchObject({
      subscriptionStatus: 'active',
      filingType: null,
      filingStatus: 'submitted',
      amount: wholesale('registered_agent') / 100,
    });
    expect(await debitsOf(tenant, ra.orderId)).toEqual([['registered_agent', wholesale('registered_agent')]]);
    expect(await debitsOf(tenant, item(res, 'formation').orderId)).toEqual(
      sorted([
        ['formation_tier_1', wholesale('formation_tier_1')],
        ['state_fee', stateFee('NY', 'Formation', 'LLC')],
      ]),
    );
  });

  it('change of agent carries filingType change_of_agent in the item and the event', async () => {
    const { tenant } = await funded();
    const { user, company } = await createCompany(tenant);
    const res = await tenant.api('POST', '/orders', {
      userId: user.id,
      companyId: company.id,
      filingState: 'DE',
      registeredAgent: { isChangeOfAgent: true },
    });
    expect(res.statusCode, res.body).toBe(201);
    const ra = res.json().items[0];
    expect(ra).toMatchObject({
      orderType: 'registered_agent',
      filingType: 'change_of_agent',
      subscriptionStatus: 'active',
    });
    const event = await t.ctx.pool.query(`SELECT data FROM events WHERE data->>'orderId' = $1`, [ra.orderId]);
    expect(event.rows[0].data).toMatchObject({
      orderId: ra.orderId,
      filingType: 'change_of_agent',
      filingStatus: 'submitted',
    });
  });

  it('foreign qualification: its wholesale + the foreign fee for the company entity type (BILL-7)', async () => {
    for (const entityType of ['LLC', 'CORP'] as const) {
      const { tenant } = await funded();
      const { user, company } = await createCompany(
        tenant,
        'test',
        entityType === 'CORP' ? { entityType: 'CORP', formationState: 'DE' } : {},
      );
      const res = await tenant.api('POST', '/orders', {
        userId: user.id,
        companyId: company.id,
        filingState: 'CA',
        foreignQualification: { registeredAgent: suppliedAgent('CA') },
      });
      expect(res.statusCode, res.body).toBe(201);
      const fq = res.json().items[0];
      expect(fq).toMatchObject({ orderType: 'foreign_qualification', subscriptionStatus: null });
      expect(await debitsOf(tenant, fq.orderId)).toEqual(
        sorted([
          ['foreign_qualification', wholesale('foreign_qualification')],
          ['state_fee', stateFee('CA', 'ForeignQualification', entityType)],
        ]),
      );
    }
  });

  it('annual report: its wholesale + the report fee, an active subscription', async () => {
    const { tenant } = await funded();
    const { user, company } = await createCompany(tenant);
    const res = await tenant.api('POST', '/orders', {
      userId: user.id,
      companyId: company.id,
      filingState: 'DE',
      annualReport: { filingYear: 2025 },
    });
    expect(res.statusCode, res.body).toBe(201);
    const ar = res.json().items[0];
    expect(ar).toMatchObject({ orderType: 'annual_report', subscriptionStatus: 'active' });
    expect(await debitsOf(tenant, ar.orderId)).toEqual(
      sorted([
        ['annual_report', wholesale('annual_report')],
        ['state_fee', stateFee('DE', 'AnnualReport', 'LLC')],
      ]),
    );
  });

  it('expedited formation: the expedited state fee instead of the standard one, plus the expedited service charge', async () => {
    for (const [state, fee] of Object.entries(SPEC_EXPEDITED_FEES)) {
      const { tenant, userId } = await funded();
      const before = await balanceCents(tenant);
      const res = await tenant.api('POST', '/orders', formationBody(userId, state, { formation: { expedited: true } }));
      expect(res.statusCode, res.body).toBe(201);
      const expected: Array<[string, number]> = [
        ['expedited_formation', wholesale('expedited_formation')],
        ['formation_tier_1', wholesale('formation_tier_1')],
        ['state_fee', toCents(fee)],
      ];
      expect(await debitsOf(tenant, res.json().items[0].orderId)).toEqual(sorted(expected));
      expect(before - (await balanceCents(tenant))).toBe(expected.reduce((s, [, c]) => s + c, 0));
    }
  });

  it('the organization wholesale override is what API orders pay; retail prices never apply (BILL-1, PRICE-4)', async () => {
    const { tenant, userId } = await funded();
    const override = wholesale('formation_tier_1') + 1_100;
    const set = await t.admin('PUT', `/organizations/${tenant.organizationId}/wholesale-prices/formation_tier_1`, {
      wholesaleAmount: override / 100,
    });
    expect(set.statusCode, set.body).toBe(200);
    const retail = await tenant.api('PUT', '/organization/prices/formation_tier_1', {
      retailAmount: override / 100 + 500,
    });
    expect(retail.statusCode, retail.body).toBe(200);
    const res = await tenant.api('POST', '/orders', formationBody(userId, 'AL'));
    expect(await debitsOf(tenant, res.json().items[0].orderId)).toEqual(
      sorted([
        ['formation_tier_1', override],
        ['state_fee', stateFee('AL', 'Formation', 'LLC')],
      ]),
    );
  });

  it('the common bundle formation + ein + registered agent, and the ledger explains the balance line by line', async () => {
    const { tenant, userId } = await funded(2_000);
    const res = await tenant.api('POST', '/orders', {
      userId,
      filingState: 'FL',
      formation: { company: formationBody(userId).formation.company },
      ein: einObject(),
      registeredAgent: { isChangeOfAgent: false },
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(
      res
        .json()
        .items.map((i: { orderType: string }) => i.orderType)
        .sort(),
    ).toEqual(['ein', 'formation', 'registered_agent']);
    const total = wholesale('formation_tier_2') + stateFee('FL', 'Formation', 'LLC') + wholesale('registered_agent');
    expect(await balanceCents(tenant)).toBe(200_000 - total);
    const sums = await t.ctx.pool.query(
      `SELECT o.id, o.amount_cents, COALESCE(-sum(l.amount_cents), 0)::bigint AS debited FROM orders o LEFT JOIN ledger_entries l ON l.order_id = o.id WHERE o.organization_id = $1 GROUP BY o.id`,
      [tenant.organizationId],
    );
    for (const row of sums.rows) expect(Number(row.debited)).toBe(Number(row.amount_cents));
  });
});

describe('the order transaction', () => {
  it('writes a submitted history row (actor api) and a filing.status_changed event per order', async () => {
    const { tenant, userId } = await funded();
    const res = await tenant.api('POST', '/orders', formationBody(userId, 'DE', { extra: { ein: einObject() } }));
    for (const i of res.json().items) {
      const history = await t.ctx.pool.query(
        'SELECT from_status, to_status, actor FROM order_status_history WHERE order_id = $1',
        [i.orderId],
      );
      expect(history.rows).toEqual([{ from_status: null, to_status: 'submitted', actor: 'api' }]);
      const events = await t.ctx.pool.query(
        `SELECT type, data FROM events WHERE organization_id = $1 AND data->>'orderId' = $2`,
        [tenant.organizationId, i.orderId],
      );
      expect(events.rows).toHaveLength(1);
      expect(events.rows[0]).toMatchObject({
        type: 'filing.status_changed',
        data: { orderId: i.orderId, orderType: i.orderType, filingStatus: 'submitted', filingDate: null },
      });
    }
  });

  it('402 insufficient_balance when the balance cannot cover the WHOLE request, and nothing is written', async () => {
    const total = wholesale('formation_tier_2') + stateFee('DE', 'Formation', 'LLC') + wholesale('registered_agent');
    const { tenant, userId } = await funded((total - 1) / 100);
    const before = await counts(t, tenant.organizationId);
    const res = await tenant.api('POST', '/orders', {
      userId,
      filingState: 'DE',
      formation: { company: formationBody(userId).formation.company },
      ein: einObject(),
      registeredAgent: { isChangeOfAgent: false },
    });
    expect(res.statusCode).toBe(402);
    expect(res.json().code).toBe('insufficient_balance');
    expect(await counts(t, tenant.organizationId)).toEqual(before);
    expect(await balanceCents(tenant)).toBe(total - 1);

    const { user, company } = await createCompany(tenant);
    const mid = await counts(t, tenant.organizationId);
    const bigTotal =
      wholesale('ein') +
      wholesale('foreign_qualification') +
      stateFee('MA', 'ForeignQualification', 'LLC') +
      wholesale('annual_report') +
      stateFee('MA', 'AnnualReport', 'LLC');
    expect(bigTotal).toBeGreaterThan(total - 1);
    const big = await tenant.api('POST', '/orders', {
      userId: user.id,
      companyId: company.id,
      filingState: 'MA',
      ein: einObject(),
      foreignQualification: { registeredAgent: suppliedAgent('MA') },
      annualReport: { filingYear: 2025 },
    });
    expect(big.statusCode).toBe(402);
    expect(await counts(t, tenant.organizationId)).toEqual(mid);
  });

  it('an empty balance is 402 too; the live balance is separate from the test one', async () => {
    const { tenant, userId } = await funded(10_000);
    const liveUser = await newUser(tenant, 'live');
    const res = await tenant.api('POST', '/orders', formationBody(liveUser.id, 'DE'), { env: 'live' });
    expect(res.statusCode).toBe(402);
    expect((await tenant.api('POST', '/orders', formationBody(userId, 'DE'))).statusCode).toBe(201);
  });
});

describe('registered agent no-op (ORD-RA-4)', () => {
  it('returns the existing item, creates nothing and charges nothing', async () => {
    const { tenant } = await funded();
    const { user, company } = await createCompany(tenant);
    const body = {
      userId: user.id,
      companyId: company.id,
      filingState: 'DE',
      registeredAgent: { isChangeOfAgent: false },
    };
    const first = await tenant.api('POST', '/orders', body);
    expect(first.statusCode, first.body).toBe(201);
    const before = { balance: await balanceCents(tenant), counts: await counts(t, tenant.organizationId) };
    for (const again of [body, { ...body, registeredAgent: { isChangeOfAgent: true } }]) {
      const res = await tenant.api('POST', '/orders', again);
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json()).toEqual(first.json());
    }
    expect(await balanceCents(tenant)).toBe(before.balance);
    expect(await counts(t, tenant.organizationId)).toEqual(before.counts);

    // With another product: only that product is created and charged; the agent item is the existing one.
    const withEin = await tenant.api('POST', '/orders', { ...body, ein: einObject() });
    expect(withEin.statusCode, withEin.body).toBe(201);
    expect(item(withEin, 'registered_agent')).toEqual(first.json().items[0]);
    expect(before.balance - (await balanceCents(tenant))).toBe(wholesale('ein'));
    // Another state is a new service.
    const ny = await tenant.api('POST', '/orders', { ...body, filingState: 'NY' });
    expect(ny.statusCode).toBe(201);
    expect(ny.json().items[0].orderId).not.toBe(first.json().items[0].orderId);
  });

  it('a cancelled service does not count: ordering again creates a new one', async () => {
    const { tenant } = await funded();
    const { user, company } = await createCompany(tenant);
    const body = {
      userId: user.id,
      companyId: company.id,
      filingState: 'DE',
      registeredAgent: { isChangeOfAgent: false },
    };
    const first = await tenant.api('POST', '/orders', body);
    await tenant.api('POST', `/test_helpers/orders/${first.json().items[0].orderId}/advance`, {
      filingStatus: 'cancelled',
    });
    const again = await tenant.api('POST', '/orders', body);
    expect(again.statusCode).toBe(201);
    expect(again.json().items[0].orderId).not.toBe(first.json().items[0].orderId);
  });
});

describe('POST /orders/quote', () => {
  it('returns the priced lines and total in dollars and writes nothing', async () => {
    const { tenant, userId } = await funded();
    const body = {
      userId,
      filingState: 'WY',
      formation: { company: formationBody(userId).formation.company, expedited: true },
      ein: einObject(),
      registeredAgent: { isChangeOfAgent: false },
    };
    const before = { balance: await balanceCents(tenant), counts: await counts(t, tenant.organizationId) };
    const res = await tenant.api('POST', '/orders/quote', body);
    expect(res.statusCode, res.body).toBe(200);
    const quote = res.json();
    const lines = quote.lines
      .map((l: { type: string; amount: number; stateFee: boolean }) => [l.type, toCents(l.amount), l.stateFee])
      .sort();
    expect(lines).toEqual(
      [
        ['ein', 0, false],
        ['expedited_formation', wholesale('expedited_formation'), false],
        ['formation_tier_2', wholesale('formation_tier_2'), false],
        ['registered_agent', wholesale('registered_agent'), false],
        ['state_fee', toCents(SPEC_EXPEDITED_FEES.WY), true],
      ].sort(),
    );
    expect(toCents(quote.total)).toBe(lines.reduce((s: number, l: [string, number]) => s + l[1], 0));
    expect(quote).toMatchObject({ companyId: null, filingState: 'WY' });
    expect(await counts(t, tenant.organizationId)).toEqual(before.counts);
    expect(await balanceCents(tenant)).toBe(before.balance);
    const placed = await tenant.api('POST', '/orders', body);
    expect(before.balance - (await balanceCents(tenant))).toBe(toCents(quote.total));
    expect(placed.statusCode).toBe(201);
  });

  it('fails where the order would (400, 409) but never with 402', async () => {
    const { tenant, userId } = await funded(0);
    expect((await tenant.api('POST', '/orders/quote', formationBody(userId, 'DE'))).statusCode).toBe(200);
    const bad = await tenant.api(
      'POST',
      '/orders/quote',
      formationBody(userId, 'CA', { formation: { expedited: true } }),
    );
    expect(bad.statusCode).toBe(400);
    const { user, company } = await createCompany(tenant, 'test', { ein: '12-3456789' });
    expect(
      (
        await tenant.api('POST', '/orders/quote', {
          userId: user.id,
          companyId: company.id,
          filingState: 'DE',
          ein: einObject(),
        })
      ).statusCode,
    ).toBe(409);
  });
});

describe('the responsible party tax id', () => {
  it('is never returned, logged or stored in full', async () => {
    const { tenant, userId } = await funded();
    const res = await tenant.api('POST', '/orders', formationBody(userId, 'DE', { extra: { ein: einObject() } }));
    expect(res.statusCode).toBe(201);
    const digits = TEST_SSN.replace(/-/g, '');
    expect(res.body).not.toContain(TEST_SSN);
    expect(t.logs.join('')).not.toContain(TEST_SSN);
    const stored = await t.ctx.pool.query(
      `SELECT (SELECT string_agg(details::text, '') FROM orders WHERE organization_id = $1) AS orders,
              (SELECT string_agg(request::text, '') FROM order_groups WHERE organization_id = $1) AS groups,
              (SELECT string_agg(data::text, '') FROM events WHERE organization_id = $1) AS events`,
      [tenant.organizationId],
    );
    const all = Object.values(stored.rows[0]).join('');
    expect(all).not.toContain(TEST_SSN);
    expect(all).not.toContain(digits);
    expect(all).toContain('"taxIdLast4": "6789"');
  });
});

describe('no order-polling endpoint', () => {
  it('GET /orders/{id} does not exist', async () => {
    const { tenant, userId } = await funded();
    const res = await tenant.api('POST', '/orders', formationBody(userId, 'DE'));
    expect((await tenant.api('GET', `/orders/${res.json().items[0].orderId}`)).statusCode).toBe(404);
  });
});

describe('placeOrder for the dashboard (in-app checkout)', () => {
  const listPrice = (type: string) =>
    toCents(
      (
        JSON.parse(fs.readFileSync('data/price-catalog.json', 'utf8')).products as Array<{
          type: string;
          defaultAmount: number;
        }>
      ).find((p) => p.type === type)!.defaultAmount,
    );

  it('charges retail with the state fee as its own line, debits nothing, records retail and margin; tier 3 adds a DBA order', async () => {
    const { tenant, userId } = await funded(100);
    const tenantRef = { organizationId: tenant.organizationId, environment: 'test' as const };
    const body = checkedOrderBody({
      userId,
      filingState: 'DE',
      formation: { company: formationBody(userId).formation.company },
      ein: einObject(),
      registeredAgent: { isChangeOfAgent: false },
    });
    const options = {
      source: 'dashboard' as const,
      billing: 'checkout' as const,
      actor: 'dashboard',
      formationTier: 3 as const,
      dbaName: 'Acme Goods',
    };
    const quote = await quoteOrder(t.ctx.pool, tenantRef, body, options);
    const expectedTotal =
      listPrice('formation_tier_3') + stateFee('DE', 'Formation', 'LLC') + listPrice('registered_agent');
    expect(quote.totalCents).toBe(expectedTotal);
    const before = await balanceCents(tenant);
    const placed = await placeOrder(t.ctx, tenantRef, body, options);
    expect(placed.created).toBe(true);
    expect(placed.totalCents).toBe(expectedTotal);
    expect(placed.items.map((i) => i.orderType).sort()).toEqual(['dba', 'ein', 'formation', 'registered_agent']);
    expect(await balanceCents(tenant)).toBe(before);
    const rows = await t.ctx.pool.query(
      `SELECT order_type, billing, amount_cents, retail_cents, margin_cents FROM orders WHERE group_id = $1`,
      [placed.groupId],
    );
    const formation = rows.rows.find((r) => r.order_type === 'formation');
    expect(formation).toMatchObject({
      billing: 'checkout',
      amount_cents: listPrice('formation_tier_3') + stateFee('DE', 'Formation', 'LLC'),
      retail_cents: listPrice('formation_tier_3'),
      margin_cents: listPrice('formation_tier_3') - wholesale('formation_tier_3'),
    });
    const history = await t.ctx.pool.query(
      `SELECT DISTINCT actor FROM order_status_history h JOIN orders o ON o.id = h.order_id WHERE o.group_id = $1`,
      [placed.groupId],
    );
    expect(history.rows).toEqual([{ actor: 'dashboard' }]);
  });
});

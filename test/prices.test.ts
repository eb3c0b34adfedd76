import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp, type TestTenant } from './harness.js';

// Expected amounts come from the seed data file, never from the implementation.
interface CatalogEntry {
  type: string;
  name: string;
  description: string;
  defaultAmount: number;
  wholesaleAmount: number;
}
const catalog: CatalogEntry[] = JSON.parse(fs.readFileSync('data/price-catalog.json', 'utf8')).products;
const listed = (type: string) => catalog.find((p) => p.type === type)!;
const NINE = [
  'ein',
  'expedited_formation',
  'formation_tier_1',
  'formation_tier_2',
  'formation_tier_3',
  'annual_report',
  'registered_agent',
  'foreign_qualification',
  'certificate_of_good_standing',
];

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const priceOf = async (tenant: TestTenant, type: string, env: 'live' | 'test' = 'test') =>
  (await tenant.api('GET', '/organization/prices', undefined, { env }))
    .json()
    .data.find((r: { type: string }) => r.type === type);

describe('GET /organization/prices', () => {
  it('lists all nine products with list, wholesale and no retail price until one is set', async () => {
    const tenant = await t.newTenant();
    const res = await tenant.api('GET', '/organization/prices');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.object).toBe('list');
    expect(body.data.map((r: { type: string }) => r.type).sort()).toEqual([...NINE].sort());
    expect(body.data.map((r: { type: string }) => r.type)).toEqual(catalog.map((p) => p.type));
    for (const p of catalog) {
      expect(body.data.find((r: { type: string }) => r.type === p.type)).toEqual({
        type: p.type,
        name: p.name,
        description: p.description,
        defaultAmount: p.defaultAmount,
        wholesaleAmount: p.wholesaleAmount,
        retailAmount: null,
        enabled: true,
      });
    }
  });
});

describe('PUT /organization/prices/{type}', () => {
  it('sets a retail price at or above the wholesale floor, per environment', async () => {
    const tenant = await t.newTenant();
    const floor = listed('formation_tier_2').wholesaleAmount;
    const atFloor = await tenant.api('PUT', '/organization/prices/formation_tier_2', { retailAmount: floor });
    expect(atFloor.statusCode).toBe(200);
    expect(atFloor.json()).toMatchObject({
      type: 'formation_tier_2',
      retailAmount: floor,
      wholesaleAmount: floor,
      enabled: true,
    });
    const higher = await tenant.api('PUT', '/organization/prices/formation_tier_2', { retailAmount: floor + 100 });
    expect(higher.json().retailAmount).toBe(floor + 100);
    expect((await priceOf(tenant, 'formation_tier_2')).retailAmount).toBe(floor + 100);
    expect((await priceOf(tenant, 'formation_tier_2', 'live')).retailAmount).toBeNull();
  });

  it('refuses a price below the floor with 400 price_below_floor and minimumAmount in dollars', async () => {
    const tenant = await t.newTenant();
    const floor = listed('registered_agent').wholesaleAmount;
    const res = await tenant.api('PUT', '/organization/prices/registered_agent', { retailAmount: floor - 1 });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({
      code: 'price_below_floor',
      minimumAmount: floor,
      message: expect.stringContaining(`$${floor}.00`),
    });
    expect((await priceOf(tenant, 'registered_agent')).retailAmount).toBeNull();
  });

  it("uses the organization's wholesale override as the floor when one exists", async () => {
    const tenant = await t.newTenant();
    const base = listed('ein').wholesaleAmount;
    const raised = await t.admin('PUT', `/organizations/${tenant.organizationId}/wholesale-prices/ein`, {
      wholesaleAmount: base + 20,
    });
    expect(raised.statusCode).toBe(200);
    const refused = await tenant.api('PUT', '/organization/prices/ein', { retailAmount: base + 19 });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().minimumAmount).toBe(base + 20);
    expect((await priceOf(tenant, 'ein')).wholesaleAmount).toBe(base + 20);

    const discounted = await t.newTenant();
    await t.admin('PUT', `/organizations/${discounted.organizationId}/wholesale-prices/ein`, {
      wholesaleAmount: base - 10,
    });
    const ok = await discounted.api('PUT', '/organization/prices/ein', { retailAmount: base - 10 });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toMatchObject({ retailAmount: base - 10, wholesaleAmount: base - 10 });
  });

  it('accepts whole dollars only', async () => {
    const tenant = await t.newTenant();
    const res = await tenant.api('PUT', '/organization/prices/annual_report', {
      retailAmount: listed('annual_report').wholesaleAmount + 0.5,
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({
      code: 'validation_error',
      errors: [{ field: 'retailAmount', message: expect.stringContaining('whole dollars') }],
    });
    expect((await tenant.api('PUT', '/organization/prices/annual_report', { retailAmount: '120' })).statusCode).toBe(
      400,
    );
  });

  it('needs retailAmount or enabled and refuses unknown fields', async () => {
    const tenant = await t.newTenant();
    expect((await tenant.api('PUT', '/organization/prices/ein', {})).statusCode).toBe(400);
    const extra = await tenant.api('PUT', '/organization/prices/ein', { retailAmount: 500, wholesaleAmount: 1 });
    expect(extra.statusCode).toBe(400);
    expect(extra.json().errors).toContainEqual({ field: 'wholesaleAmount', message: 'is not a known field' });
  });

  it('accepts enabled false only for formation tiers', async () => {
    const tenant = await t.newTenant();
    for (const type of NINE.filter((x) => !x.startsWith('formation_tier_'))) {
      const res = await tenant.api('PUT', `/organization/prices/${type}`, { enabled: false });
      expect(res.statusCode, type).toBe(400);
      expect(res.json().errors[0].field).toBe('enabled');
    }
    expect((await tenant.api('PUT', '/organization/prices/ein', { enabled: true })).statusCode).toBe(200);
  });

  it('keeps at least one formation tier enabled', async () => {
    const tenant = await t.newTenant();
    expect((await tenant.api('PUT', '/organization/prices/formation_tier_1', { enabled: false })).json().enabled).toBe(
      false,
    );
    expect((await tenant.api('PUT', '/organization/prices/formation_tier_3', { enabled: false })).statusCode).toBe(200);
    const last = await tenant.api('PUT', '/organization/prices/formation_tier_2', { enabled: false });
    expect(last.statusCode).toBe(400);
    expect(last.json().message).toMatch(/at least one formation tier/);
    expect((await priceOf(tenant, 'formation_tier_2')).enabled).toBe(true);
    // The other environment has its own flags.
    expect(
      (await tenant.api('PUT', '/organization/prices/formation_tier_2', { enabled: false }, { env: 'live' }))
        .statusCode,
    ).toBe(200);
    // Re-enabling one tier lets another be disabled.
    await tenant.api('PUT', '/organization/prices/formation_tier_1', { enabled: true });
    expect((await tenant.api('PUT', '/organization/prices/formation_tier_2', { enabled: false })).statusCode).toBe(200);
  });

  it('never leaves zero tiers enabled under concurrent disables', async () => {
    const tenant = await t.newTenant();
    const results = await Promise.all(
      ['formation_tier_1', 'formation_tier_2', 'formation_tier_3'].map((type) =>
        tenant.api('PUT', `/organization/prices/${type}`, { enabled: false }),
      ),
    );
    expect(results.filter((r) => r.statusCode === 200)).toHaveLength(2);
    const rows = (await tenant.api('GET', '/organization/prices')).json().data;
    expect(
      rows.filter((r: { type: string; enabled: boolean }) => r.type.startsWith('formation_tier_') && r.enabled),
    ).toHaveLength(1);
  });

  it('answers 404 for an unknown type', async () => {
    const tenant = await t.newTenant();
    const res = await tenant.api('PUT', '/organization/prices/formation_tier_4', { retailAmount: 500 });
    expect(res.statusCode).toBe(404);
    expect(res.json().code).toBe('not_found');
  });
});

describe('DELETE /organization/prices/{type}', () => {
  it('reverts to the list price, and answers 404 when no custom price is set', async () => {
    const tenant = await t.newTenant();
    expect((await tenant.api('DELETE', '/organization/prices/foreign_qualification')).statusCode).toBe(404);
    await tenant.api('PUT', '/organization/prices/foreign_qualification', {
      retailAmount: listed('foreign_qualification').defaultAmount + 30,
    });
    const res = await tenant.api('DELETE', '/organization/prices/foreign_qualification');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      retailAmount: null,
      defaultAmount: listed('foreign_qualification').defaultAmount,
    });
    expect((await tenant.api('DELETE', '/organization/prices/foreign_qualification')).statusCode).toBe(404);
    expect((await tenant.api('DELETE', '/organization/prices/nope')).statusCode).toBe(404);
  });

  it('keeps a disabled tier disabled (enabled is not a price)', async () => {
    const tenant = await t.newTenant();
    await tenant.api('PUT', '/organization/prices/formation_tier_3', {
      enabled: false,
      retailAmount: listed('formation_tier_3').defaultAmount,
    });
    expect((await tenant.api('DELETE', '/organization/prices/formation_tier_3')).json()).toMatchObject({
      retailAmount: null,
      enabled: false,
    });
    expect((await tenant.api('DELETE', '/organization/prices/formation_tier_3')).statusCode).toBe(404);
  });
});

describe('operator wholesale prices and PRICE-7', () => {
  it('a new default floor above a retail price raises it, only for organizations without an override', async () => {
    const type = 'certificate_of_good_standing';
    const { wholesaleAmount: w, defaultAmount: d } = listed(type);
    const [low, high, overridden] = await Promise.all([
      t.newTenant('Low'),
      t.newTenant('High'),
      t.newTenant('Overridden'),
    ]);
    await low.api('PUT', `/organization/prices/${type}`, { retailAmount: w + 1 });
    await low.api('PUT', `/organization/prices/${type}`, { retailAmount: w + 2 }, { env: 'live' });
    await high.api('PUT', `/organization/prices/${type}`, { retailAmount: w + 50 });
    await t.admin('PUT', `/organizations/${overridden.organizationId}/wholesale-prices/${type}`, {
      wholesaleAmount: w,
    });
    await overridden.api('PUT', `/organization/prices/${type}`, { retailAmount: w + 1 });

    // The catalogue is shared by every test of this file: restored even when an assertion fails.
    try {
      const res = await t.admin('PUT', `/wholesale-prices/${type}`, {
        wholesaleAmount: w + 10,
        defaultAmount: Math.max(d, w + 10),
      });
      expect(res.statusCode).toBe(200);
      expect(res.json().price).toMatchObject({ type, wholesaleAmount: w + 10, defaultAmount: Math.max(d, w + 10) });
      expect(res.json().retailPricesRaised).toEqual(
        expect.arrayContaining([
          { organizationId: low.organizationId, environment: 'test', retailAmount: w + 10 },
          { organizationId: low.organizationId, environment: 'live', retailAmount: w + 10 },
        ]),
      );
      expect(await priceOf(low, type)).toMatchObject({ retailAmount: w + 10, wholesaleAmount: w + 10 });
      expect(await priceOf(low, type, 'live')).toMatchObject({ retailAmount: w + 10 });
      expect(await priceOf(high, type)).toMatchObject({ retailAmount: w + 50, wholesaleAmount: w + 10 });
      expect(await priceOf(overridden, type)).toMatchObject({ retailAmount: w + 1, wholesaleAmount: w });
      // A tenant without a custom price shows the new wholesale with no retail price.
      expect(await priceOf(await t.newTenant(), type)).toMatchObject({ retailAmount: null, wholesaleAmount: w + 10 });
    } finally {
      expect(
        (await t.admin('PUT', `/wholesale-prices/${type}`, { wholesaleAmount: w, defaultAmount: d })).statusCode,
      ).toBe(200);
    }
  });

  it('a per-organization override above a retail price raises it in both environments', async () => {
    const type = 'annual_report';
    const w = listed(type).wholesaleAmount;
    const tenant = await t.newTenant();
    const other = await t.newTenant();
    await tenant.api('PUT', `/organization/prices/${type}`, { retailAmount: w + 5 });
    await tenant.api('PUT', `/organization/prices/${type}`, { retailAmount: w + 40 }, { env: 'live' });
    await other.api('PUT', `/organization/prices/${type}`, { retailAmount: w + 5 });
    const res = await t.admin('PUT', `/organizations/${tenant.organizationId}/wholesale-prices/${type}`, {
      wholesaleAmount: w + 25,
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      organizationId: tenant.organizationId,
      type,
      wholesaleAmount: w + 25,
      defaultWholesaleAmount: w,
      overridden: true,
    });
    expect(res.json().retailPricesRaised).toEqual([
      { organizationId: tenant.organizationId, environment: 'test', retailAmount: w + 25 },
    ]);
    expect(await priceOf(tenant, type)).toMatchObject({ retailAmount: w + 25, wholesaleAmount: w + 25 });
    expect(await priceOf(tenant, type, 'live')).toMatchObject({ retailAmount: w + 40, wholesaleAmount: w + 25 });
    expect(await priceOf(other, type)).toMatchObject({ retailAmount: w + 5, wholesaleAmount: w });
  });

  it('removing a discount override raises retail prices below the default floor; removing none is 404', async () => {
    const type = 'registered_agent';
    const w = listed(type).wholesaleAmount;
    const tenant = await t.newTenant();
    await t.admin('PUT', `/organizations/${tenant.organizationId}/wholesale-prices/${type}`, {
      wholesaleAmount: w - 20,
    });
    await tenant.api('PUT', `/organization/prices/${type}`, { retailAmount: w - 10 });
    const res = await t.admin('DELETE', `/organizations/${tenant.organizationId}/wholesale-prices/${type}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ wholesaleAmount: w, overridden: false });
    expect(await priceOf(tenant, type)).toMatchObject({ retailAmount: w, wholesaleAmount: w });
    expect(
      (await t.admin('DELETE', `/organizations/${tenant.organizationId}/wholesale-prices/${type}`)).statusCode,
    ).toBe(404);
  });

  it('validates operator amounts and targets', async () => {
    const { wholesaleAmount: w, defaultAmount: d } = listed('ein');
    const cents = await t.admin('PUT', '/wholesale-prices/ein', { wholesaleAmount: w + 0.5 });
    expect(cents.statusCode).toBe(400);
    expect(cents.json().errors[0].field).toBe('wholesaleAmount');
    const inverted = await t.admin('PUT', '/wholesale-prices/ein', { defaultAmount: w - 1 });
    expect(inverted.statusCode).toBe(400);
    expect(inverted.json().errors[0].field).toBe('defaultAmount');
    expect((await t.admin('PUT', '/wholesale-prices/ein', {})).statusCode).toBe(400);
    expect((await t.admin('PUT', '/wholesale-prices/nope', { wholesaleAmount: 1 })).statusCode).toBe(404);
    expect(
      (await t.admin('PUT', '/organizations/org_missing/wholesale-prices/ein', { wholesaleAmount: 1 })).statusCode,
    ).toBe(404);
    const list = (await t.admin('GET', '/wholesale-prices')).json().data;
    expect(list.find((r: { type: string }) => r.type === 'ein')).toMatchObject({
      wholesaleAmount: w,
      defaultAmount: d,
    });
  });

  it('a wholesale price above the list price, sent alone, raises the list price too (PRICE-7)', async () => {
    const type = 'certificate_of_good_standing';
    const { wholesaleAmount: w, defaultAmount: d } = listed(type);
    const tenant = await t.newTenant();
    // The catalogue is shared by every test of this file: restored even when an assertion fails.
    try {
      const res = await t.admin('PUT', `/wholesale-prices/${type}`, { wholesaleAmount: d + 20 });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().price).toMatchObject({ wholesaleAmount: d + 20, defaultAmount: d + 20 });
      expect(await priceOf(tenant, type)).toMatchObject({
        wholesaleAmount: d + 20,
        defaultAmount: d + 20,
        retailAmount: null,
      });
    } finally {
      expect(
        (await t.admin('PUT', `/wholesale-prices/${type}`, { wholesaleAmount: w, defaultAmount: d })).statusCode,
      ).toBe(200);
    }
  });

  it('changes the list price alone', async () => {
    const { wholesaleAmount: w, defaultAmount: d } = listed('expedited_formation');
    // The catalogue is shared by every test of this file: restored even when an assertion fails.
    try {
      const res = await t.admin('PUT', '/wholesale-prices/expedited_formation', { defaultAmount: d + 1 });
      expect(res.json().price).toMatchObject({ defaultAmount: d + 1, wholesaleAmount: w });
      expect(await priceOf(await t.newTenant(), 'expedited_formation')).toMatchObject({
        defaultAmount: d + 1,
        wholesaleAmount: w,
      });
    } finally {
      expect(
        (await t.admin('PUT', '/wholesale-prices/expedited_formation', { defaultAmount: d, wholesaleAmount: w }))
          .statusCode,
      ).toBe(200);
    }
  });
});

describe('OpenAPI', () => {
  it('documents the price and balance routes and the test helper', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/test/v1/openapi.json' })).json();
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/organization/prices',
        '/organization/prices/{type}',
        '/balance-transactions',
        '/test_helpers/balance-credits',
      ]),
    );
    const put = doc.paths['/organization/prices/{type}'].put;
    expect(put.tags).toEqual(['Prices']);
    expect(Object.keys(put.responses)).toEqual(expect.arrayContaining(['200', '400', '404']));
    // The price list and its rows are named components (PriceList, PriceRow).
    const list =
      doc.components.schemas[
        doc.paths['/organization/prices'].get.responses['200'].content['application/json'].schema.$ref.split('/').pop()
      ];
    expect(JSON.stringify(doc.components.schemas[list.properties.data.items.$ref.split('/').pop()])).toContain(
      'wholesaleAmount',
    );
  });
});

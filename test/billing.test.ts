import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { many, one, withTransaction } from '../src/lib/db.js';
import { seedBilling } from '../src/modules/billing/billing.seed.js';
import { appendLedgerEntry, creditBalance, debitOrThrow, reverseOrderDebits } from '../src/modules/billing/ledger.js';
import { retailCents, stateFeeCents, wholesaleCents } from '../src/modules/billing/pricing.js';
import { runCli } from './cli-runner.js';
import { createOrderRow, tenantOf } from './factories.js';
import { createTestApp, type TestApp, type TestTenant } from './harness.js';

// Expected amounts come from the data files, converted here to cents.
const stateData = JSON.parse(fs.readFileSync('data/state-fees.json', 'utf8')).states as Record<
  string,
  Record<string, any>
>;
const expedited = JSON.parse(fs.readFileSync('data/expedited-formation-fees.json', 'utf8')).states as Record<
  string,
  number
>;
const catalog = JSON.parse(fs.readFileSync('data/price-catalog.json', 'utf8')).products as Array<{
  type: string;
  defaultAmount: number;
  wholesaleAmount: number;
}>;
const cents = (dollars: number) => Math.round(dollars * 100);
const listed = (type: string) => catalog.find((p) => p.type === type)!;

let t: TestApp;
beforeAll(async () => {
  // As a deployed service connects (SEC-3): its pools log in as fcs_app, with fcs_service's rights only.
  t = await createTestApp({ DATABASE_SERVICE_ROLE: 'fcs_service' });
});
afterAll(() => t.close());

const operatorCredit = (x: TestTenant, body: Record<string, unknown>) =>
  t.admin('POST', `/organizations/${x.organizationId}/balance-credits`, body);
const balanceOf = async (x: TestTenant, env: 'live' | 'test' = 'test') =>
  (await x.api('GET', '/organization', undefined, { env })).json().balance;
const ledgerCount = async (x: TestTenant) =>
  (await one<{ n: number }>(t.ctx.pool, 'SELECT count(*)::int AS n FROM ledger_entries WHERE organization_id = $1', [
    x.organizationId,
  ]))!.n;

describe('balance credits', () => {
  it('the test helper adds test money and answers the balance transaction', async () => {
    const tenant = await t.newTenant();
    const res = await tenant.api('POST', '/test_helpers/balance-credits', { amount: 150.25 });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({
      id: expect.stringMatching(/^txn_/),
      type: 'credit',
      amount: 150.25,
      balanceAfter: 150.25,
      orderId: null,
    });
    await tenant.api('POST', '/test_helpers/balance-credits', { amount: 0.75 });
    expect(await balanceOf(tenant)).toBe(151);
    expect(await balanceOf(tenant, 'live')).toBe(0);
  });

  it('the test helper refuses bad amounts and does not exist in live', async () => {
    const tenant = await t.newTenant();
    for (const amount of [0, -5, 1.234, '10']) {
      const res = await tenant.api('POST', '/test_helpers/balance-credits', { amount });
      expect(res.statusCode, String(amount)).toBe(400);
      expect(res.json().errors[0].field).toBe('amount');
    }
    expect(
      (await tenant.api('POST', '/test_helpers/balance-credits', { amount: 10 }, { env: 'live' })).statusCode,
    ).toBe(404);
    const noKey = await t.app.inject({
      method: 'POST',
      url: '/test/v1/test_helpers/balance-credits',
      payload: { amount: 10 },
    });
    expect(noKey.statusCode).toBe(401);
    expect(await balanceOf(tenant)).toBe(0);
  });

  it('the operator credits live or test money with a note', async () => {
    const tenant = await t.newTenant();
    const res = await operatorCredit(tenant, { environment: 'live', amount: 2500, note: 'Wire 2025-07-01' });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({
      type: 'credit',
      amount: 2500,
      balanceAfter: 2500,
      description: 'Wire 2025-07-01',
    });
    expect(await balanceOf(tenant, 'live')).toBe(2500);
    expect(await balanceOf(tenant, 'test')).toBe(0);
    expect((await t.admin('GET', `/organizations/${tenant.organizationId}`)).json().balances).toEqual({
      live: 2500,
      test: 0,
    });
    expect(
      (await t.admin('POST', '/organizations/org_missing/balance-credits', { environment: 'live', amount: 1 }))
        .statusCode,
    ).toBe(404);
    expect((await operatorCredit(tenant, { environment: 'staging', amount: 1 })).statusCode).toBe(400);
    expect((await operatorCredit(tenant, { environment: 'live', amount: 0.001 })).statusCode).toBe(400);
    // Within a millionth of a cent of 103.75 is still not 103.75: the amount as written has ten decimals (API-5).
    const nearly = await operatorCredit(tenant, { environment: 'live', amount: 103.7500000001 });
    expect(nearly.statusCode).toBe(400);
    expect(nearly.json().errors[0]).toMatchObject({
      field: 'amount',
      message: expect.stringContaining('two decimals'),
    });
    // Amounts whose binary form is inexact are still exact in cents.
    expect((await operatorCredit(tenant, { environment: 'test', amount: 0.29 })).statusCode).toBe(201);
  });

  it('bounds every operator amount, through the admin API and the CLI alike (LIM-3), changing nothing when refused', async () => {
    const tenant = await t.newTenant();
    const fieldsOf = (res: { json: () => any }) => res.json().errors.map((e: { field: string }) => e.field);
    const priced = async () => ({
      fees: await one(t.ctx.pool, `SELECT * FROM state_fees WHERE state = 'DE'`),
      catalog: await one(t.ctx.pool, `SELECT * FROM price_catalog WHERE type = 'ein'`),
    });
    const before = await priced();
    const credit = await operatorCredit(tenant, { environment: 'live', amount: 10_000_000.01 });
    expect(credit.statusCode).toBe(400);
    expect(fieldsOf(credit)).toEqual(['amount']);
    expect((await operatorCredit(tenant, { environment: 'live', amount: 10_000_000 })).statusCode).toBe(201);
    for (const [path, body, field] of [
      ['/wholesale-prices/ein', { wholesaleAmount: 100_001 }, 'wholesaleAmount'],
      ['/wholesale-prices/ein', { defaultAmount: 100_001 }, 'defaultAmount'],
      [`/organizations/${tenant.organizationId}/wholesale-prices/ein`, { wholesaleAmount: 100_001 }, 'wholesaleAmount'],
      ['/state-fees/DE', { llcFormation: 100_000.01 }, 'llcFormation'],
    ] as const) {
      const res = await t.admin('PUT', path, body);
      expect(res.statusCode, path).toBe(400);
      expect(fieldsOf(res), path).toEqual([field]);
    }

    const cli = async (...args: string[]) => {
      const res = await runCli(t, args);
      return { code: res.code, output: res.stdout + res.stderr };
    };
    const creditLive = (amount: string, ...args: string[]) =>
      cli('balance', 'credit', '--org', tenant.organizationId, '--environment', 'live', '--amount', amount, ...args);
    const cliCredit = await creditLive('10000000.01');
    expect(cliCredit.code).not.toBe(0);
    expect(cliCredit.output).toContain('amount: must be at most 10,000,000 dollars');
    const cliFee = await cli('fees', 'set', '--state', 'DE', '--llc-formation', '100001');
    expect(cliFee.code).not.toBe(0);
    expect(cliFee.output).toContain('at most 100,000 dollars');
    const cliWholesale = await cli('prices', 'wholesale', 'set', '--type', 'ein', '--wholesale', '100001');
    expect(cliWholesale.code).not.toBe(0);
    expect(cliWholesale.output).toContain('at most 100,000 dollars');
    // LIM-2: notes are bounded as in the admin API.
    const cliNote = await creditLive('5', '--note', 'n'.repeat(501));
    expect(cliNote.output).toContain('note: must be at most 500 characters');
    const cliFeeNote = await cli('fees', 'set', '--state', 'DE', '--llc-formation', '90', '--note', 'n'.repeat(1001));
    expect(cliFeeNote.output).toContain('note: must be at most 1000 characters');

    expect(await balanceOf(tenant, 'live')).toBe(10_000_000);
    expect(await priced()).toEqual(before);
  });
});

describe('GET /balance-transactions', () => {
  it('lists the ledger newest first with cursor pagination', async () => {
    const tenant = await t.newTenant();
    const ids: string[] = [];
    for (let i = 1; i <= 25; i++)
      ids.push((await tenant.api('POST', '/test_helpers/balance-credits', { amount: i })).json().id);
    const newestFirst = [...ids].reverse();

    const first = (await tenant.api('GET', '/balance-transactions?limit=10')).json();
    expect(first).toMatchObject({ object: 'list', hasMore: true });
    expect(first.data.map((e: { id: string }) => e.id)).toEqual(newestFirst.slice(0, 10));
    expect(first.data[0]).toMatchObject({
      type: 'credit',
      amount: 25,
      balanceAfter: (25 * 26) / 2,
      lineType: null,
      orderId: null,
      createdAt: expect.any(String),
    });

    const second = (await tenant.api('GET', `/balance-transactions?limit=10&startingAfter=${first.data[9].id}`)).json();
    expect(second.data.map((e: { id: string }) => e.id)).toEqual(newestFirst.slice(10, 20));
    const third = (await tenant.api('GET', `/balance-transactions?limit=10&startingAfter=${second.data[9].id}`)).json();
    expect(third.data.map((e: { id: string }) => e.id)).toEqual(newestFirst.slice(20));
    expect(third.hasMore).toBe(false);

    expect((await tenant.api('GET', '/balance-transactions')).json().data).toHaveLength(20);
    expect((await tenant.api('GET', '/balance-transactions?limit=101')).statusCode).toBe(400);
    expect((await tenant.api('GET', '/balance-transactions', undefined, { env: 'live' })).json().data).toEqual([]);
  });
});

describe('ledger functions (used by POST /orders and cancellation)', () => {
  it('debitOrThrow checks the whole sum and writes nothing when the balance is short (402)', async () => {
    const tenant = await t.newTenant();
    await creditBalance(t.ctx.pool, tenantOf(tenant), 10_000, 'seed', 'test');
    const before = await ledgerCount(tenant);
    const lines = [
      { amountCents: 6_000, lineType: 'formation_tier_1', description: 'Formation' },
      { amountCents: 4_001, lineType: 'state_fee', description: 'State fee' },
    ];
    const err = await withTransaction(t.ctx.pool, (tx) => debitOrThrow(tx, tenantOf(tenant), lines)).catch((e) => e);
    expect(err).toMatchObject({
      code: 'insufficient_balance',
      status: 402,
      extra: { shortfallAmount: 0.01, requiredAmount: 100.01, balance: 100 },
    });
    expect(err.message).toContain('$0.01');
    expect(await ledgerCount(tenant)).toBe(before);
    expect(await balanceOf(tenant)).toBe(100);

    const ok = await withTransaction(t.ctx.pool, (tx) =>
      debitOrThrow(tx, tenantOf(tenant), [
        { ...lines[0] },
        { ...lines[1], amountCents: 4_000 },
        { amountCents: 0, lineType: 'ein', description: 'EIN (bundled)' },
      ]),
    );
    expect(ok.map((e) => [e.amount_cents, e.balance_after_cents])).toEqual([
      [-6_000, 4_000],
      [-4_000, 0],
      [0, 0],
    ]);
    expect(await balanceOf(tenant)).toBe(0);
    const listed = (await tenant.api('GET', '/balance-transactions')).json().data;
    expect(listed.slice(0, 3).map((e: { amount: number; lineType: string }) => [e.amount, e.lineType])).toEqual([
      [0, 'ein'],
      [-40, 'state_fee'],
      [-60, 'formation_tier_1'],
    ]);
  });

  it('concurrent debits never take the balance below zero and never lose an entry', async () => {
    const tenant = await t.newTenant();
    await creditBalance(t.ctx.pool, tenantOf(tenant), 10_000, null, 'test');
    const attempts = await Promise.allSettled(
      Array.from({ length: 8 }, () =>
        withTransaction(t.ctx.pool, (tx) =>
          debitOrThrow(tx, tenantOf(tenant), [{ amountCents: 3_000, lineType: 'ein', description: 'EIN' }]),
        ),
      ),
    );
    expect(attempts.filter((a) => a.status === 'fulfilled')).toHaveLength(3);
    const sum = await one<{ s: number }>(
      t.ctx.pool,
      'SELECT sum(amount_cents)::int AS s FROM ledger_entries WHERE organization_id = $1 AND environment = $2',
      [tenant.organizationId, 'test'],
    );
    expect(sum!.s).toBe(1_000);
    expect(await balanceOf(tenant)).toBe(10);
  });

  it('reverseOrderDebits reverses each debit of an order once', async () => {
    const tenant = await t.newTenant();
    const tn = tenantOf(tenant);
    // Placed through the orders module's writer: the factory credits the lines' total, then debits each line.
    const { orderId } = await createOrderRow(t.ctx, tn, {
      debitLines: [
        { amountCents: 12_300, lineType: 'formation_tier_1' },
        { amountCents: 11_000, lineType: 'state_fee' },
      ],
    });
    await creditBalance(t.ctx.pool, tn, 26_700, null, 'test');
    expect(await balanceOf(tenant)).toBe(267);
    const reversed = await withTransaction(t.ctx.pool, (tx) => reverseOrderDebits(tx, tn, orderId, 'test'));
    expect(reversed.map((r) => [r.type, r.amount_cents, r.order_id])).toEqual([
      ['reversal', 12_300, orderId],
      ['reversal', 11_000, orderId],
    ]);
    expect(await balanceOf(tenant)).toBe(500);
    expect(await withTransaction(t.ctx.pool, (tx) => reverseOrderDebits(tx, tn, orderId, 'test'))).toEqual([]);
    expect(await balanceOf(tenant)).toBe(500);
    // The unique index refuses a second reversal of the same debit even when written directly.
    const debit = (
      await many<{ id: string; amount_cents: number }>(
        t.ctx.pool,
        `SELECT id, amount_cents FROM ledger_entries WHERE order_id = $1 AND type = 'debit'`,
        [orderId],
      )
    )[0];
    await expect(
      withTransaction(t.ctx.pool, (tx) =>
        appendLedgerEntry(tx, tn, {
          type: 'reversal',
          amountCents: -debit.amount_cents,
          description: 'again',
          reversesEntryId: debit.id,
        }),
      ),
    ).rejects.toThrow();
    expect(await balanceOf(tenant)).toBe(500);
  });
});

describe('state fees and price look-ups', () => {
  it('seeds every state from the data file and the expedited fees from their data file (BILL-16)', async () => {
    const res = await t.admin('GET', '/state-fees');
    expect(res.statusCode).toBe(200);
    const rows = res.json().data as Array<Record<string, any>>;
    expect(rows.map((r) => r.state).sort()).toEqual(Object.keys(stateData).sort());
    for (const r of rows) {
      const d = stateData[r.state];
      expect(r).toMatchObject({
        name: d.name,
        llcFormation: d.llcFormation,
        corpFormation: d.corpFormation,
        llcForeignQualification: d.llcForeignQualification,
        corpForeignQualification: d.corpForeignQualification,
        llcAnnualReport: d.llcAnnualReport,
        corpAnnualReport: d.corpAnnualReport,
        expeditedFormation: expedited[r.state] ?? null,
      });
      expect(r.source).toMatchObject({
        notes: d.notes,
        sources: d.sources,
        confidence: d.confidence,
        unverifiedFields: d.unverifiedFields,
      });
    }
  });

  it('stateFeeCents picks the fee by kind and entity type', async () => {
    const db = t.ctx.pool;
    for (const state of ['CA', 'TX', 'FL', 'NY']) {
      const d = stateData[state];
      expect(await stateFeeCents(db, state, 'formation', 'LLC')).toBe(cents(d.llcFormation));
      expect(await stateFeeCents(db, state, 'formation', 'CORP')).toBe(cents(d.corpFormation));
      expect(await stateFeeCents(db, state, 'foreign_qualification', 'LLC')).toBe(cents(d.llcForeignQualification));
      expect(await stateFeeCents(db, state, 'foreign_qualification', 'CORP')).toBe(cents(d.corpForeignQualification));
      expect(await stateFeeCents(db, state, 'annual_report', 'LLC')).toBe(cents(d.llcAnnualReport));
      expect(await stateFeeCents(db, state, 'annual_report', 'CORP')).toBe(cents(d.corpAnnualReport));
    }
    for (const [state, fee] of Object.entries(expedited))
      expect(await stateFeeCents(db, state, 'expedited_formation', 'LLC')).toBe(cents(fee));
  });

  it('expedited formation elsewhere fails with the ORD-FORM-5 message on formation.expedited', async () => {
    const message = 'Expedited formation is not available for the selected state and entity type';
    for (const [state, entity] of [
      ['DE', 'CORP'],
      ['CA', 'LLC'],
      ['TX', 'CORP'],
    ] as const) {
      const err = await stateFeeCents(t.ctx.pool, state, 'expedited_formation', entity).catch((e) => e);
      expect(err).toMatchObject({
        status: 400,
        code: 'validation_error',
        message,
        extra: { errors: [{ field: 'formation.expedited', message }] },
      });
    }
    await expect(stateFeeCents(t.ctx.pool, 'ZZ', 'formation', 'LLC')).rejects.toMatchObject({ status: 400 });
  });

  it('wholesaleCents and retailCents follow overrides and custom prices', async () => {
    const tenant = await t.newTenant();
    const base = listed('foreign_qualification');
    expect(await wholesaleCents(t.ctx.pool, tenant.organizationId, 'foreign_qualification')).toBe(
      cents(base.wholesaleAmount),
    );
    expect(await retailCents(t.ctx.pool, tenantOf(tenant), 'foreign_qualification')).toBe(cents(base.defaultAmount));
    await t.admin('PUT', `/organizations/${tenant.organizationId}/wholesale-prices/foreign_qualification`, {
      wholesaleAmount: base.wholesaleAmount + 7,
    });
    await tenant.api('PUT', '/organization/prices/foreign_qualification', { retailAmount: base.wholesaleAmount + 9 });
    expect(await wholesaleCents(t.ctx.pool, tenant.organizationId, 'foreign_qualification')).toBe(
      cents(base.wholesaleAmount + 7),
    );
    expect(await retailCents(t.ctx.pool, tenantOf(tenant), 'foreign_qualification')).toBe(
      cents(base.wholesaleAmount + 9),
    );
    expect(await retailCents(t.ctx.pool, tenantOf(tenant, 'live'), 'foreign_qualification')).toBe(
      cents(base.defaultAmount),
    );
  });

  it("the operator edits a state's fees; the change is used, recorded, and survives re-seeding", async () => {
    const d = stateData.DE;
    // The fee schedule is shared by every test of this file: restored even when an assertion fails.
    try {
      const res = await t.admin('PUT', '/state-fees/de', {
        llcFormation: d.llcFormation + 15,
        corpAnnualReport: 12.34,
        note: 'State raised fees',
      });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({
        state: 'DE',
        llcFormation: d.llcFormation + 15,
        corpAnnualReport: 12.34,
        corpFormation: d.corpFormation,
        updatedBy: 'operator',
      });
      expect(res.json().source.history.at(-1)).toMatchObject({
        by: 'operator',
        note: 'State raised fees',
        changes: {
          llcFormation: { from: d.llcFormation, to: d.llcFormation + 15 },
          corpAnnualReport: { from: d.corpAnnualReport, to: 12.34 },
        },
      });
      expect(await stateFeeCents(t.ctx.pool, 'DE', 'formation', 'LLC')).toBe(cents(d.llcFormation + 15));
      await seedBilling(t.ctx.pool);
      expect(await stateFeeCents(t.ctx.pool, 'DE', 'formation', 'LLC')).toBe(cents(d.llcFormation + 15));

      const off = await t.admin('PUT', '/state-fees/WY', { expeditedFormation: null });
      expect(off.json().expeditedFormation).toBeNull();
      await expect(stateFeeCents(t.ctx.pool, 'WY', 'expedited_formation', 'LLC')).rejects.toMatchObject({
        status: 400,
      });
    } finally {
      expect(
        (await t.admin('PUT', '/state-fees/DE', { llcFormation: d.llcFormation, corpAnnualReport: d.corpAnnualReport }))
          .statusCode,
      ).toBe(200);
      expect((await t.admin('PUT', '/state-fees/WY', { expeditedFormation: expedited.WY })).statusCode).toBe(200);
    }
    expect(await stateFeeCents(t.ctx.pool, 'WY', 'expedited_formation', 'LLC')).toBe(cents(expedited.WY));
  });

  it('refuses bad fee edits', async () => {
    expect((await t.admin('PUT', '/state-fees/ZZ', { llcFormation: 1 })).statusCode).toBe(404);
    expect((await t.admin('PUT', '/state-fees/DE', { llcFormation: 1.001 })).statusCode).toBe(400);
    expect((await t.admin('PUT', '/state-fees/DE', { llcFormation: -1 })).statusCode).toBe(400);
    expect((await t.admin('PUT', '/state-fees/DE', { llcFormation: null })).statusCode).toBe(400);
    expect((await t.admin('PUT', '/state-fees/DE', {})).statusCode).toBe(400);
    expect((await t.admin('PUT', '/state-fees/DE', { bogus: 1 })).statusCode).toBe(400);
  });
});

describe('CLI: balance credit, prices wholesale set, fees list/set', () => {
  // A data directory and secrets of its own: the CLI shares nothing with the app but the database.
  const run = async (...args: string[]) => {
    const res = await runCli(t, [...args, '--json'], {
      OPERATOR_TOKEN: 'cli-test-operator-token-0123456789',
      FILE_URL_SECRET: 'cli-test-file-url-secret-0123',
      DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'fcs-cli-')),
    });
    if (res.code !== 0) throw new Error(`cli ${args.join(' ')}: exit ${res.code}: ${res.stderr}`);
    return JSON.parse(res.stdout);
  };

  it('operates on the same database as the API', async () => {
    const tenant = await t.newTenant();
    const credit = await run(
      'balance',
      'credit',
      '--org',
      tenant.organizationId,
      '--environment',
      'live',
      '--amount',
      '99.99',
      '--note',
      'Invoice 42',
    );
    expect(credit).toMatchObject({ type: 'credit', amount: 99.99, description: 'Invoice 42' });
    expect(await balanceOf(tenant, 'live')).toBe(99.99);

    const w = listed('ein').wholesaleAmount;
    await tenant.api('PUT', '/organization/prices/ein', { retailAmount: w + 1 });
    const override = await run(
      'prices',
      'wholesale',
      'set',
      '--type',
      'ein',
      '--wholesale',
      String(w + 3),
      '--org',
      tenant.organizationId,
    );
    expect(override).toMatchObject({
      wholesaleAmount: w + 3,
      retailPricesRaised: [{ organizationId: tenant.organizationId, environment: 'test', retailAmount: w + 3 }],
    });

    const nm = stateData.NM;
    try {
      const fee = await run('fees', 'set', '--state', 'NM', '--llc-annual-report', '12.5', '--expedited', '40');
      expect(fee).toMatchObject({
        state: 'NM',
        llcAnnualReport: 12.5,
        expeditedFormation: 40,
        llcFormation: stateData.NM.llcFormation,
        updatedBy: 'cli',
      });
      const list = await run('fees', 'list');
      expect(list.find((r: { state: string }) => r.state === 'NM')).toMatchObject({ llcAnnualReport: 12.5 });
      expect(list).toHaveLength(Object.keys(stateData).length);
    } finally {
      // Shared by the file's other tests: NM's fees as seeded.
      expect(
        (
          await t.admin('PUT', '/state-fees/NM', {
            llcAnnualReport: nm.llcAnnualReport,
            expeditedFormation: expedited.NM ?? null,
          })
        ).statusCode,
      ).toBe(200);
    }
  }, 180_000); // four CLI processes, each booting on its own: slow on a busy machine
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerDifferences } from '../src/modules/ledger-audit/ledger-verify.js';
import { verifyLedgerTask } from '../src/modules/ledger-audit/verify-ledger.task.js';
import { cronItems } from '../src/tasks.js';
import { createOrderRow } from './factories.js';
import { runCli } from './cli-runner.js';
import { createTestApp, type TestApp, type TestTenant } from './harness.js';

let t: TestApp;
let tenant: TestTenant;
beforeAll(async () => {
  t = await createTestApp();
  tenant = await t.newTenant('Ledger Co');
  expect((await tenant.api('POST', '/test_helpers/balance-credits', { amount: 250 })).statusCode).toBe(201);
});
afterAll(() => t.close());

const cli = (...args: string[]) => runCli(t, args);

describe('append-only records', () => {
  it('the database refuses to change or remove ledger entries, status history and events', async () => {
    await createOrderRow(t.ctx, { organizationId: tenant.organizationId, environment: 'test' });
    const refused = [
      `UPDATE ledger_entries SET amount_cents = amount_cents * 2 WHERE organization_id = '${tenant.organizationId}'`,
      `DELETE FROM ledger_entries WHERE organization_id = '${tenant.organizationId}'`,
      'TRUNCATE ledger_entries CASCADE',
      `UPDATE order_status_history SET to_status = 'filed' WHERE organization_id = '${tenant.organizationId}'`,
      'DELETE FROM order_status_history',
      `UPDATE events SET data = '{}' WHERE organization_id = '${tenant.organizationId}'`,
      'DELETE FROM events',
    ];
    for (const sql of refused) await expect(t.ctx.pool.query(sql), sql).rejects.toThrow(/append-only/);
    const { rows } = await t.ctx.pool.query(
      'SELECT count(*)::int AS n FROM ledger_entries WHERE organization_id = $1',
      [tenant.organizationId],
    );
    expect(rows[0].n).toBeGreaterThan(0);
  });
});

describe('ledger verify', () => {
  it('finds every balance explained, then names a tenant whose balance no longer adds up (CLI, daily job, metric)', async () => {
    expect(cronItems).toContainEqual(expect.objectContaining({ task: verifyLedgerTask.name }));
    const clean = await cli('ledger', 'verify', '--json');
    expect(clean.code).toBe(0);
    expect(JSON.parse(clean.stdout)).toEqual({ ok: true, differences: [] });

    // Balances are a cache and stay writable: a bad write there is what the check exists to catch.
    await t.ctx.pool.query(
      `UPDATE balances SET balance_cents = balance_cents + 1 WHERE organization_id = $1 AND environment = 'test'`,
      [tenant.organizationId],
    );
    try {
      const broken = await cli('ledger', 'verify', '--json');
      expect(broken.code, broken.stdout).toBe(1);
      expect(JSON.parse(broken.stdout).differences).toEqual([
        expect.objectContaining({ organizationId: tenant.organizationId, environment: 'test' }),
      ]);
      const d = JSON.parse(broken.stdout).differences[0];
      expect(d.balanceCents - d.ledgerSumCents).toBe(1);
      await expect(verifyLedgerTask.handler(t.ctx)({}, {} as never)).rejects.toThrow(/1 tenant balance/);
      expect((await ledgerDifferences.get()).values[0]?.value).toBe(1);
      // BILL-18: every check's result is kept, the CLI's and the job's alike, for every process's metrics.
      const { rows: checks } = await t.ctx.pool.query('SELECT differences FROM ledger_checks ORDER BY id');
      expect(checks.map((c) => c.differences)).toEqual([0, 1, 1]);
    } finally {
      // Put right again: every test file ends with each balance explained by its ledger (test/ledger-check.setup.ts).
      await t.ctx.pool.query(
        `UPDATE balances SET balance_cents = balance_cents - 1 WHERE organization_id = $1 AND environment = 'test'`,
        [tenant.organizationId],
      );
    }
  });
});

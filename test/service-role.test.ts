import type { Runner } from 'graphile-worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { startWorker } from '../src/worker.js';
import { createTestApp, type TestApp } from './harness.js';
import { startReceiver, waitFor, type Receiver } from './webhook-receiver.js';

// The app here connects exactly as a deployed service does: its pools act as fcs_service.
let t: TestApp;
let worker: Runner;
let r: Receiver;
beforeAll(async () => {
  t = await createTestApp({ DATABASE_SERVICE_ROLE: 'fcs_service' });
  worker = await startWorker(t.ctx);
  r = await startReceiver();
});
afterAll(async () => {
  await worker?.stop();
  await r?.close();
  await t?.close();
});

describe("the service's database role", () => {
  it('is the default, and `none` keeps the connecting user', () => {
    expect(loadConfig({}).databaseServiceRole).toBe('fcs_service');
    expect(loadConfig({ DATABASE_SERVICE_ROLE: 'none' }).databaseServiceRole).toBeNull();
    expect(() => loadConfig({ DATABASE_SERVICE_ROLE: 'x; DROP' })).toThrow(/DATABASE_SERVICE_ROLE/);
  });

  it('every pooled connection acts as fcs_service', async () => {
    const { rows } = await t.ctx.pool.query('SELECT current_user AS role');
    expect(rows[0].role).toBe('fcs_service');
  });

  it('cannot drop, alter or truncate the ledger, nor update or delete its entries, nor delete orders or balances', async () => {
    const tenant = await t.newTenant();
    expect((await tenant.api('POST', '/test_helpers/balance-credits', { amount: 25 })).statusCode).toBe(201);
    const refused = [
      'DROP TABLE ledger_entries',
      'DROP TABLE ledger_entries CASCADE',
      'ALTER TABLE ledger_entries ADD COLUMN note2 text',
      'ALTER TABLE ledger_entries DISABLE TRIGGER ALL',
      'DROP TRIGGER ledger_entries_append_only ON ledger_entries',
      'TRUNCATE ledger_entries',
      `UPDATE ledger_entries SET amount_cents = amount_cents * 2 WHERE organization_id = '${tenant.organizationId}'`,
      `DELETE FROM ledger_entries WHERE organization_id = '${tenant.organizationId}'`,
      `UPDATE events SET data = '{}' WHERE organization_id = '${tenant.organizationId}'`,
      'DELETE FROM order_status_history',
      `DELETE FROM orders WHERE organization_id = '${tenant.organizationId}'`,
      `DELETE FROM balances WHERE organization_id = '${tenant.organizationId}'`,
      'CREATE TABLE sneaky (id int)',
      'ALTER TABLE balances DROP CONSTRAINT IF EXISTS balances_pkey',
      'DROP TABLE graphile_worker._private_jobs',
    ];
    for (const sql of refused)
      await expect(t.ctx.pool.query(sql), sql).rejects.toThrow(/permission denied|must be owner/);
    const { rows } = await t.ctx.pool.query(
      'SELECT count(*)::int AS n FROM ledger_entries WHERE organization_id = $1',
      [tenant.organizationId],
    );
    expect(rows[0].n).toBe(1);
  });

  it('serves requests and runs background jobs through that role', async () => {
    const tenant = await t.newTenant();
    const user = await tenant.api('POST', '/users', {
      fullName: 'Role Tester',
      email: `role.${Date.now()}@example.com`,
      phoneNumber: '+14155550123',
    });
    expect(user.statusCode, user.body).toBe(201);
    const ep = await tenant.api('POST', '/webhook-endpoints', { url: r.url, eventTypes: ['document.uploaded'] });
    expect(ep.statusCode, ep.body).toBe(201);
    const sent = await tenant.api('POST', `/webhook-endpoints/${ep.json().id}/test`);
    expect(
      sent.statusCode,
      t.logs
        .filter((l) => l.includes('error'))
        .join('\n')
        .slice(0, 3000),
    ).toBe(202);
    await waitFor('the test webhook', () => r.requests.some((q) => q.event.type === 'webhook.test'));
    const delivery = await waitFor('the attempt to be recorded', async () => {
      const d = (await tenant.api('GET', `/webhook-deliveries/${sent.json().id}`)).json();
      return d.status === 'succeeded' ? d : null;
    });
    expect(delivery.attemptCount).toBe(1);
  });
});

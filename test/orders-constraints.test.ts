import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../src/lib/ids.js';
import { createOrderRow } from './factories.js';
import { createTestApp, type TestApp, type TestTenant } from './harness.js';

let t: TestApp;
let tenant: TestTenant;
beforeAll(async () => {
  t = await createTestApp();
  tenant = await t.newTenant('Constraints Co');
});
afterAll(() => t.close());

describe('the database keeps the orders of a group on its company and state (ORD-4)', () => {
  it('refuses an order whose company or filing state differs from its group, and one without a group', async () => {
    const scope = { organizationId: tenant.organizationId, environment: 'test' as const };
    const a = await createOrderRow(t.ctx, scope, { filingState: 'DE' });
    const b = await createOrderRow(t.ctx, scope, { filingState: 'DE', userId: a.userId });
    const insert = (groupId: string, companyId: string, filingState: string) =>
      t.ctx.pool.query(
        `INSERT INTO orders (id, organization_id, environment, group_id, company_id, user_id, order_type, filing_state,
                             filing_status, billing, amount_cents, details)
         VALUES ($1, $2, 'test', $3, $4, $5, 'ein', $6, 'submitted', 'balance', 0, '{}')`,
        [newId('order'), tenant.organizationId, groupId, companyId, a.userId, filingState],
      );
    await expect(insert(a.groupId, b.companyId, 'DE'), 'another company').rejects.toThrow(/orders_group_fkey/);
    await expect(insert(a.groupId, a.companyId, 'CA'), 'another state').rejects.toThrow(/orders_group_fkey/);
    await expect(insert(newId('orderGroup'), a.companyId, 'DE'), 'no such group').rejects.toThrow(/orders_group_fkey/);
    const { rows } = await t.ctx.pool.query('SELECT count(*)::int AS n FROM orders WHERE group_id = ANY($1)', [
      [a.groupId, b.groupId],
    ]);
    expect(rows[0].n).toBe(2);
  });
});

describe('what a placement writes refers to rows that exist, checked once per statement (ORD-18)', () => {
  const scope = () => ({ organizationId: tenant.organizationId, environment: 'test' as const });
  const refusal = (constraint: string) => expect.objectContaining({ code: '23503', constraint });

  it('refuses a history row, a ledger entry, a company admin or an order group that refers to a missing row', async () => {
    const a = await createOrderRow(t.ctx, scope());
    const missingOrder = newId('order');
    const db = t.ctx.pool;
    await expect(
      db.query(
        `INSERT INTO order_status_history (id, order_id, organization_id, environment, from_status, to_status, actor)
         VALUES ($1, $2, $3, 'test', NULL, 'submitted', 'api'), ($4, $5, $3, 'test', NULL, 'submitted', 'api')`,
        [newId('statusChange'), a.orderId, tenant.organizationId, newId('statusChange'), missingOrder],
      ),
      'one of two history rows without its order',
    ).rejects.toEqual(refusal('order_status_history_order_id_fkey'));
    const entry = (orderId: string | null, organizationId: string) =>
      db.query(
        `INSERT INTO ledger_entries (id, organization_id, environment, type, amount_cents, balance_after_cents,
                                     line_type, description, order_id, created_by)
         VALUES ($1, $2, 'test', 'debit', 0, 0, 'ein', 'guard test', $3, 'api')`,
        [newId('ledgerEntry'), organizationId, orderId],
      );
    await expect(entry(missingOrder, tenant.organizationId), 'no such order').rejects.toEqual(
      refusal('ledger_entries_order_id_fkey'),
    );
    await expect(entry(null, newId('organization')), 'a tenant without a balance').rejects.toEqual(
      refusal('ledger_entries_balance_fkey'),
    );
    const admin = (companyId: string, userId: string) =>
      db.query(
        `INSERT INTO company_admins (company_id, user_id, organization_id, environment) VALUES ($1, $2, $3, 'test')`,
        [companyId, userId, tenant.organizationId],
      );
    await expect(admin(newId('company'), a.userId), 'no such company').rejects.toEqual(
      refusal('company_admins_company_id_fkey'),
    );
    await expect(admin(a.companyId, newId('user')), 'no such user').rejects.toEqual(
      refusal('company_admins_user_id_fkey'),
    );
    await expect(
      db.query(
        `INSERT INTO order_groups (id, organization_id, environment, user_id, company_id, filing_state, source, billing,
                                   request, total_cents)
         VALUES ($1, $2, 'test', $3, $4, 'DE', 'api', 'balance', '{}', 0)`,
        [newId('orderGroup'), tenant.organizationId, a.userId, newId('company')],
      ),
      'a group without its company',
    ).rejects.toEqual(refusal('order_groups_company_id_fkey'));
    const { rows } = await db.query(
      `SELECT (SELECT count(*)::int FROM order_status_history WHERE order_id = $1) AS history,
              (SELECT count(*)::int FROM ledger_entries WHERE description = 'guard test') AS entries`,
      [a.orderId],
    );
    expect(rows[0]).toEqual({ history: 1, entries: 0 });
  });

  it('checks each distinct key of a statement of many rows, the last one too', async () => {
    const a = await createOrderRow(t.ctx, scope(), { filingState: 'DE' });
    const db = t.ctx.pool;
    const orders = (second: { groupId: string; filingState: string }) =>
      db.query(
        `INSERT INTO orders (id, organization_id, environment, group_id, company_id, user_id, order_type, filing_state,
                             filing_status, billing, amount_cents, details)
         VALUES ($1, $2, 'test', $3, $4, $5, 'annual_report', 'DE', 'submitted', 'balance', 0, '{}'),
                ($6, $2, 'test', $3, $4, $5, 'annual_report', 'DE', 'submitted', 'balance', 0, '{}'),
                ($7, $2, 'test', $8, $4, $5, 'annual_report', $9, 'submitted', 'balance', 0, '{}')`,
        [
          newId('order'),
          tenant.organizationId,
          a.groupId,
          a.companyId,
          a.userId,
          newId('order'),
          newId('order'),
          second.groupId,
          second.filingState,
        ],
      );
    await expect(orders({ groupId: a.groupId, filingState: 'CA' }), 'the third in another state').rejects.toEqual(
      refusal('orders_group_fkey'),
    );
    await expect(
      orders({ groupId: newId('orderGroup'), filingState: 'DE' }),
      'the third without a group',
    ).rejects.toEqual(refusal('orders_group_fkey'));
    const entries = (orderIds: Array<string | null>, organizationIds: string[]) =>
      db.query(
        `INSERT INTO ledger_entries (id, organization_id, environment, type, amount_cents, balance_after_cents,
                                     line_type, description, order_id, created_by)
         SELECT 'txn_guard_' || n, o, 'test', 'debit', 0, 0, 'ein', 'guard test', r, 'api'
           FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS x(r, o, n)`,
        [orderIds, organizationIds],
      );
    const own = tenant.organizationId;
    await expect(
      entries([a.orderId, a.orderId, newId('order')], [own, own, own]),
      'the last of three entries without its order',
    ).rejects.toEqual(refusal('ledger_entries_order_id_fkey'));
    await expect(
      entries([a.orderId, null, null], [own, own, newId('organization')]),
      'the last of three entries in a tenant without a balance',
    ).rejects.toEqual(refusal('ledger_entries_balance_fkey'));
    const { rows } = await db.query(
      `SELECT (SELECT count(*)::int FROM orders WHERE group_id = $1) AS orders,
              (SELECT count(*)::int FROM ledger_entries WHERE description = 'guard test') AS entries`,
      [a.groupId],
    );
    expect(rows[0]).toEqual({ orders: 1, entries: 0 });
  });

  it('never removes a row others refer to, nor changes its key', async () => {
    const a = await createOrderRow(t.ctx, scope());
    const db = t.ctx.pool;
    const removals: Array<[string, string]> = [
      ['DELETE FROM orders WHERE id = $1', a.orderId],
      ['DELETE FROM order_groups WHERE id = $1', a.groupId],
      ['DELETE FROM companies WHERE id = $1', a.companyId],
      ['DELETE FROM users WHERE id = $1', a.userId],
      ['DELETE FROM balances WHERE organization_id = $1', tenant.organizationId],
    ];
    for (const [sql, id] of removals)
      await expect(db.query(sql, [id]), sql).rejects.toEqual(expect.objectContaining({ code: '23001' }));
    // The other four are also held by the foreign keys that still point at them; balances by the trigger alone.
    await expect(db.query('TRUNCATE balances'), 'TRUNCATE balances').rejects.toEqual(
      expect.objectContaining({ code: '23001' }),
    );
    const changes: Array<[string, string]> = [
      [`UPDATE orders SET filing_state = 'CA' WHERE id = $1`, a.orderId],
      [`UPDATE orders SET group_id = 'ordgrp_other' WHERE id = $1`, a.orderId],
      [`UPDATE order_groups SET company_id = 'comp_other' WHERE id = $1`, a.groupId],
      [`UPDATE companies SET id = 'comp_other' WHERE id = $1`, a.companyId],
      [`UPDATE users SET id = 'user_other' WHERE id = $1`, a.userId],
      [`UPDATE company_admins SET user_id = 'user_other' WHERE company_id = $1`, a.companyId],
      [
        `UPDATE balances SET environment = 'live' WHERE organization_id = $1 AND environment = 'test'`,
        tenant.organizationId,
      ],
    ];
    for (const [sql, id] of changes)
      await expect(db.query(sql, [id]), sql).rejects.toEqual(expect.objectContaining({ code: '23001' }));
    // Naming a key column with its own value changes nothing and is let through.
    await db.query('UPDATE orders SET company_id = company_id, updated_at = now() WHERE id = $1', [a.orderId]);
    const { rows } = await db.query('SELECT count(*)::int AS n FROM orders WHERE id = $1 AND group_id = $2', [
      a.orderId,
      a.groupId,
    ]);
    expect(rows[0].n).toBe(1);
  });
});

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

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp, type TestTenant } from './harness.js';
import { balanceCents, credit, formationBody, newUser } from './orders-fixtures.js';

let t: TestApp;
let tenant: TestTenant;
let userId: string;
beforeAll(async () => {
  t = await createTestApp();
  tenant = await t.newTenant('Expiring Keys');
  userId = (await newUser(tenant)).id;
  await credit(tenant, 10_000);
});
afterAll(() => t.close());

const withKey = (key: string) => ({ headers: { 'idempotency-key': key } });

/** Moves everything the key left behind (the remembered answer and the order group) back by `hours`. */
async function age(key: string, hours: number): Promise<void> {
  await t.ctx.pool.query(
    `UPDATE idempotency_keys SET created_at = created_at - make_interval(hours => $2) WHERE organization_id = $1 AND key = $3`,
    [tenant.organizationId, hours, key],
  );
  await t.ctx.pool.query(
    `UPDATE order_groups SET created_at = created_at - make_interval(hours => $2) WHERE organization_id = $1 AND idempotency_key = $3`,
    [tenant.organizationId, hours, key],
  );
}

describe("an order group's Idempotency-Key", () => {
  it('within 24 hours replays the order placed; after 24 hours the same key and body place a new order and charge again', async () => {
    const body = formationBody(userId, 'DE');
    const first = await tenant.api('POST', '/orders', body, withKey('order-expiring-1'));
    expect(first.statusCode, first.body).toBe(201);
    const charged = await balanceCents(tenant);

    await age('order-expiring-1', 23);
    const replay = await tenant.api('POST', '/orders', body, withKey('order-expiring-1'));
    expect(replay.json()).toEqual(first.json());
    expect(await balanceCents(tenant)).toBe(charged);

    await age('order-expiring-1', 2);
    const again = await tenant.api('POST', '/orders', body, withKey('order-expiring-1'));
    expect(again.statusCode, again.body).toBe(201);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    const ids = (r: typeof first) => JSON.stringify(r.json()).match(/order_[0-9a-z]+/g);
    expect(ids(again)).not.toEqual(ids(first));
    expect(await balanceCents(tenant)).toBeLessThan(charged);
    // Both groups are kept; only the new one holds the key now.
    const { rows } = await t.ctx.pool.query(
      `SELECT count(*)::int AS n, count(idempotency_key)::int AS keyed FROM order_groups WHERE organization_id = $1`,
      [tenant.organizationId],
    );
    expect(rows[0]).toEqual({ n: 2, keyed: 1 });
  });
});

import { afterAll, beforeAll, expect, it } from 'vitest';
import { StreamTenants } from '../src/modules/events/stream-tenants.js';
import { tenantOf } from './factories.js';
import { createTestApp, type TestApp } from './harness.js';
import { waitFor } from './webhook-receiver.js';

// The rows of event_stream_tenants a process keeps for the tenants it streams (OPS-6), with the refresh shortened.

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

/** The tenant's rows that a placement would see now (not lapsed), by hub. */
async function liveRows(organizationId: string): Promise<number> {
  const { rows } = await t.ctx.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM event_stream_tenants WHERE organization_id = $1 AND expires_at > now()`,
    [organizationId],
  );
  return rows[0]!.n;
}

it('keeps a streamed tenant recorded past its first lifetime while it is streamed, and not after (OPS-6)', async () => {
  const tenant = tenantOf(await t.newTenant('Streamed Org'));
  const streamed = new StreamTenants(t.ctx.pool, t.ctx.log, { refreshMs: 200, ttlSeconds: 1 });
  try {
    await streamed.add('a', tenant);
    expect(await liveRows(tenant.organizationId)).toBe(1);
    // Three lifetimes later the refreshes have kept it.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect(await liveRows(tenant.organizationId)).toBe(1);
    // Its last stream closed: removed at once, and no refresh brings it back.
    streamed.remove('a');
    await waitFor('the row removed', async () => (await liveRows(tenant.organizationId)) === 0, 3000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await liveRows(tenant.organizationId)).toBe(0);
  } finally {
    await streamed.close();
  }
});

it('removes every row of its process at shutdown, and only those (OPS-6)', async () => {
  const one = tenantOf(await t.newTenant('Streamed One'));
  const two = tenantOf(await t.newTenant('Streamed Two'));
  const mine = new StreamTenants(t.ctx.pool, t.ctx.log);
  const other = new StreamTenants(t.ctx.pool, t.ctx.log);
  try {
    await mine.add('one', one);
    await mine.add('two', two);
    await other.add('one', one);
    await mine.close();
    expect(await liveRows(one.organizationId)).toBe(1); // the other process's
    expect(await liveRows(two.organizationId)).toBe(0);
  } finally {
    await other.close();
  }
  expect(await liveRows(one.organizationId)).toBe(0);
});

import { afterAll, beforeAll, expect, it, vi } from 'vitest';
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

/**
 * When the tenant's row lapses (its latest end, by the database's clock), in microseconds since 1970, or null when it
 * has none. Microseconds, not a Date: two refreshes a fraction of a millisecond apart would give equal Dates.
 */
async function endOf(organizationId: string): Promise<number | null> {
  // bigint comes back as a number (src/lib/db.ts); microseconds since 1970 stay far below 2^53.
  const { rows } = await t.ctx.pool.query<{ end: number | null }>(
    `SELECT (extract(epoch FROM max(expires_at)) * 1000000)::bigint AS end
       FROM event_stream_tenants WHERE organization_id = $1`,
    [organizationId],
  );
  return rows[0]!.end;
}

it('keeps a streamed tenant recorded past its first lifetime while it is streamed, and not after (OPS-6)', async () => {
  // The refreshes are driven by a fake interval, so a loaded machine cannot make one late: each tick must push the
  // row's end to a full lifetime after the refresh (the database's clock), and three lifetimes of ticks keep it
  // recorded beyond the end it was first given.
  vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
  const tenant = tenantOf(await t.newTenant('Streamed Org'));
  const streamed = new StreamTenants(t.ctx.pool, t.ctx.log, { refreshMs: 200, ttlSeconds: 1 });
  try {
    await streamed.add('a', tenant);
    expect(await liveRows(tenant.organizationId)).toBe(1);
    const firstEnd = await endOf(tenant.organizationId);
    // The row as if its first lifetime were over, unless a refresh pushes it back.
    await t.ctx.pool.query(
      `UPDATE event_stream_tenants SET expires_at = now() - interval '1 second' WHERE organization_id = $1`,
      [tenant.organizationId],
    );
    expect(await liveRows(tenant.organizationId)).toBe(0);
    for (let tick = 0; tick < 15; tick++) {
      const before = await endOf(tenant.organizationId);
      await vi.advanceTimersByTimeAsync(200);
      await waitFor(`refresh ${tick + 1} written`, async () => (await endOf(tenant.organizationId))! > before!);
    }
    expect(await liveRows(tenant.organizationId)).toBe(1);
    expect(await endOf(tenant.organizationId)).toBeGreaterThan(firstEnd!);
    // Its last stream closed: removed at once, and no later tick brings it back.
    streamed.remove('a');
    await waitFor('the row removed', async () => (await endOf(tenant.organizationId)) === null);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(await endOf(tenant.organizationId)).toBeNull();
  } finally {
    await streamed.close();
    vi.useRealTimers();
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

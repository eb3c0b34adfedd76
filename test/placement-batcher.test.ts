import pg from 'pg';
import { expect, it } from 'vitest';
import type { Tenant } from '../src/context.js';
import type { PlacementWrite } from '../src/modules/orders/orders.repo.js';
import { writePlacement } from '../src/modules/orders/placement-batcher.js';

// The tenant queue of ORD-17 against a pool whose placement statements answer only when the test says so: what goes
// to the database, and when each placement is answered, is then in the test's hands.

/**
 * A pool that never connects: each statement is logged with its number of placements when it would go on the wire,
 * and held until answered. pg-pool hands a query to an idle connection in a `process.nextTick`, so a statement reaches
 * the database only once the microtasks then queued (the answered requests' continuations) have run; the fake does
 * the same.
 */
function heldPool(log: string[]): { pool: pg.Pool; held: Array<() => void> } {
  const pool = new pg.Pool({ max: 1 });
  const held: Array<() => void> = [];
  // The placement statement is the only query the queue sends.
  pool.query = ((config: { values: [string] }) => {
    const placements = (JSON.parse(config.values[0]) as { groups: unknown[] }).groups.length;
    process.nextTick(() => log.push(`statement of ${placements}`));
    return new Promise((resolve) => {
      held.push(() =>
        resolve({
          rows: [{ r: { outcomes: Array(placements).fill('placed'), created_at: new Date().toISOString() } }],
        }),
      );
    });
  }) as unknown as pg.Pool['query'];
  return { pool, held };
}

const tenant: Tenant = { organizationId: 'org_batcher', environment: 'test' };

/** A placement for an existing company with no orders: enough for the queue, which only passes it on. */
function placement(i: number): PlacementWrite {
  return {
    rows: {
      company: null,
      group: {
        id: `og_${i}`,
        userId: 'user_1',
        companyId: 'comp_1',
        filingState: 'DE',
        source: 'api',
        billing: 'balance',
        request: {},
        totalCents: 0,
      },
      orders: [],
      actor: 'api',
    },
    history: [],
    events: [],
    debits: [],
    minBalanceCents: 0,
  };
}

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !condition(); i++) await new Promise((resolve) => setImmediate(resolve));
  expect(condition()).toBe(true);
}

it("sends a tenant's next batch before it answers the placements whose statement just came back (ORD-17)", async () => {
  const log: string[] = [];
  const { pool, held } = heldPool(log);
  try {
    const placed = [writePlacement(pool, tenant, placement(1)).then(() => log.push('placement 1 answered'))];
    await until(() => log.length === 1);
    // Three more arrive while the first statement runs: they wait for it, then go together.
    for (const i of [2, 3, 4])
      placed.push(writePlacement(pool, tenant, placement(i)).then(() => log.push(`placement ${i} answered`)));
    expect(log).toEqual(['statement of 1']);

    held[0]!();
    await until(() => log.includes('placement 1 answered'));
    // The database already has the next batch when the first placement's request goes on with its answer.
    expect(log).toEqual(['statement of 1', 'statement of 3', 'placement 1 answered']);

    held[1]!();
    await Promise.all(placed);
    expect(log.slice(3).sort()).toEqual(['placement 2 answered', 'placement 3 answered', 'placement 4 answered']);
  } finally {
    await pool.end();
  }
});

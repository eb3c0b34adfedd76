import pg from 'pg';
import { expect, it } from 'vitest';
import type { Tenant } from '../src/context.js';
import type { PlacementWrite } from '../src/modules/orders/orders.repo.js';
import { writePlacement } from '../src/modules/orders/placement-batcher.js';
import { waitFor } from './webhook-receiver.js';

// The tenant queue of ORD-17 against a pool whose placement statements answer only when the test says so: what goes
// to the database, and when each placement is answered, is then in the test's hands.

/**
 * A pool that never connects: each statement is logged with its number of placements when it would go on the wire,
 * and held until answered. pg-pool hands a query to an idle connection in a `process.nextTick`, so a statement reaches
 * the database only once the microtasks then queued (the answered requests' continuations) have run; the fake does
 * the same. `held[i]()` answers statement i; `held[i](err)` fails it with `err`.
 */
function heldPool(log: string[]): { pool: pg.Pool; held: Array<(err?: Error) => void> } {
  const pool = new pg.Pool({ max: 1 });
  const held: Array<(err?: Error) => void> = [];
  // The placement statement is the only query the queue sends.
  pool.query = ((config: { values: [string] }) => {
    const placements = (JSON.parse(config.values[0]) as { groups: unknown[] }).groups.length;
    process.nextTick(() => log.push(`statement of ${placements}`));
    return new Promise((resolve, reject) => {
      held.push((err) =>
        err
          ? reject(err)
          : resolve({
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

it("sends a tenant's next batch before it answers the placements whose statement just came back (ORD-17)", async () => {
  const log: string[] = [];
  const { pool, held } = heldPool(log);
  try {
    const placed = [writePlacement(pool, tenant, placement(1)).then(() => log.push('placement 1 answered'))];
    await waitFor('the first statement', () => log.length === 1);
    // Three more arrive while the first statement runs: they wait for it, then go together.
    for (const i of [2, 3, 4])
      placed.push(writePlacement(pool, tenant, placement(i)).then(() => log.push(`placement ${i} answered`)));
    expect(log).toEqual(['statement of 1']);

    held[0]!();
    await waitFor('the first answer', () => log.includes('placement 1 answered'));
    // The database already has the next batch when the first placement's request goes on with its answer.
    expect(log).toEqual(['statement of 1', 'statement of 3', 'placement 1 answered']);

    held[1]!();
    await Promise.all(placed);
    expect(log.slice(3).sort()).toEqual(['placement 2 answered', 'placement 3 answered', 'placement 4 answered']);
  } finally {
    await pool.end();
  }
});

it('sends the next batch before it answers a placement whose statement failed alone, as a 402 does (ORD-17)', async () => {
  const log: string[] = [];
  const { pool, held } = heldPool(log);
  try {
    const refused = writePlacement(pool, tenant, placement(1)).catch((err: Error) =>
      log.push(`refused: ${err.message}`),
    );
    await waitFor('the first statement', () => log.length === 1);
    const placed = [2, 3].map((i) => writePlacement(pool, tenant, placement(i)));
    held[0]!(new Error('insufficient balance'));
    await waitFor('the refusal', () => log.some((l) => l.startsWith('refused')));
    expect(log).toEqual(['statement of 1', 'statement of 2', 'refused: insufficient balance']);
    held[1]!();
    await Promise.all([refused, ...placed]);
  } finally {
    await pool.end();
  }
});

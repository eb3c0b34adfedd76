import { EventEmitter } from 'node:events';
import pg from 'pg';
import { expect, it } from 'vitest';
import type { Tenant } from '../src/context.js';
import type { PlacementWrite } from '../src/modules/orders/placements.repo.js';
import { writePlacement } from '../src/modules/orders/placement-batcher.js';
import { waitFor } from './webhook-receiver.js';

// The placement queue of ORD-17 against a pool whose placement statements answer only when the test says so: what goes
// to the database, and when each placement is answered, is then in the test's hands.

/**
 * A pool whose connections never reach a database: each statement is logged with its number of placements as it is
 * sent (a pg client writes a query to its socket before `query` returns), and held until answered. `held[i]()`
 * answers statement i; `held[i](err)` fails it with `err`. `pipeline` is the connections' pg option (createPool sets
 * it); each connection the pool hands out is kept in `clients`, and its return to the pool is logged.
 */
function heldPool(
  log: string[],
  pipeline = true,
): { pool: pg.Pool; held: Array<(err?: Error) => void>; clients: EventEmitter[] } {
  const pool = new pg.Pool({ max: 1 });
  const held: Array<(err?: Error) => void> = [];
  // The placement statements are the only queries the queue sends: place_order_groups_of_tenants, an array of one
  // part per tenant (a single part is taken too).
  const query = (config: { values: [string] }) => {
    type Payload = { groups: unknown[]; organization_id: string };
    const parsed = JSON.parse(config.values[0]) as Payload | Payload[];
    const payloads = Array.isArray(parsed) ? parsed : [parsed];
    // Logged by size, another tenant's placements also by its organization: "statement of 2 for org_other + 1".
    const parts = payloads.map(
      (p) => `${p.groups.length}${p.organization_id === tenant.organizationId ? '' : ` for ${p.organization_id}`}`,
    );
    log.push(`statement of ${parts.join(' + ')}`);
    const answer = (p: Payload) => ({
      outcomes: Array(p.groups.length).fill('placed'),
      created_at: new Date().toISOString(),
    });
    return new Promise((resolve, reject) => {
      held.push((err) =>
        err ? reject(err) : resolve({ rows: [{ r: Array.isArray(parsed) ? parsed.map(answer) : answer(parsed) }] }),
      );
    });
  };
  // A statement sent on the pool itself (pool.query) is held the same way.
  pool.query = query as unknown as pg.Pool['query'];
  const clients: EventEmitter[] = [];
  pool.connect = (() => {
    const client = Object.assign(new EventEmitter(), {
      pipeline,
      query,
      release: (err?: Error) => log.push(err ? `connection dropped: ${err.message}` : 'connection released'),
    });
    clients.push(client);
    return Promise.resolve(client);
  }) as unknown as pg.Pool['connect'];
  return { pool, held, clients };
}

/**
 * Runs `test` with a log, a {@link heldPool} writing to it (pipelined unless `pipeline` is false) and that pool's
 * handles, and ends the pool afterwards whatever the test did.
 */
async function withHeldPool(
  test: (h: ReturnType<typeof heldPool> & { log: string[] }) => Promise<void>,
  { pipeline = true } = {},
): Promise<void> {
  const log: string[] = [];
  const held = heldPool(log, pipeline);
  try {
    await test({ log, ...held });
  } finally {
    await held.pool.end();
  }
}

const tenant: Tenant = { organizationId: 'org_batcher', environment: 'test' };

/** A placement for an existing company with no orders: enough for the queue, which only passes it on. */
function placement(i: number, idempotencyKey: string | null = null): PlacementWrite {
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
        idempotencyKey,
      },
      orders: [],
      actor: 'api',
    },
    historyIds: [],
    events: [],
    debits: [],
    minBalanceCents: 0,
  };
}

it("sends a tenant's next batch before it answers the placements whose statement just came back (ORD-17)", () =>
  withHeldPool(async ({ log, pool, held }) => {
    const placed = [writePlacement(pool, tenant, placement(1)).then(() => log.push('placement 1 answered'))];
    await waitFor('the first statement', () => log.length === 1);
    // Two more arrive while the first statement runs: too few to send behind it, so they wait for it, then go together.
    for (const i of [2, 3])
      placed.push(writePlacement(pool, tenant, placement(i)).then(() => log.push(`placement ${i} answered`)));
    await new Promise((resolve) => setImmediate(resolve));
    expect(log).toEqual(['statement of 1']);

    held[0]!();
    await waitFor('the first answer', () => log.includes('placement 1 answered'));
    // The database already has the next batch when the first placement's request goes on with its answer.
    expect(log).toEqual(['statement of 1', 'statement of 2', 'placement 1 answered']);

    held[1]!();
    await Promise.all(placed);
    expect(log.slice(3).sort()).toEqual(['connection released', 'placement 2 answered', 'placement 3 answered']);
  }));

it("writes the waiting placements of several tenants in one statement, on the pool's one connection (ORD-40)", () =>
  withHeldPool(async ({ log, pool, held, clients }) => {
    const other: Tenant = { organizationId: 'org_other', environment: 'test' };
    const placed = [writePlacement(pool, tenant, placement(1))];
    await waitFor('the first statement', () => log.length === 1);
    // Both tenants' placements arrive while it runs, interleaved: three wait, as many as it carries and more, so they
    // go out behind it in one statement, each tenant's together, the tenants in the order of their first.
    placed.push(
      writePlacement(pool, other, placement(2)),
      writePlacement(pool, tenant, placement(3)),
      writePlacement(pool, other, placement(4)),
    );
    await waitFor('the second statement', () => log.length === 2);
    expect(log).toEqual(['statement of 1', 'statement of 2 for org_other + 1']);
    held[0]!();
    held[1]!();
    await expect(Promise.all(placed)).resolves.toEqual(Array(4).fill(expect.objectContaining({ outcome: 'placed' })));
    // Never side by side: both statements went out on the one connection the queue held.
    expect(clients).toHaveLength(1);
    expect(log.filter((l) => l.startsWith('statement'))).toEqual([
      'statement of 1',
      'statement of 2 for org_other + 1',
    ]);
  }));

it("writes each tenant's placements again on their own when a statement of several tenants fails (ORD-40)", () =>
  withHeldPool(async ({ log, pool, held }) => {
    const other: Tenant = { organizationId: 'org_other', environment: 'test' };
    const placed = [writePlacement(pool, tenant, placement(1))];
    await waitFor('the first statement', () => log.length === 1);
    const answers = [
      writePlacement(pool, other, placement(2)),
      writePlacement(pool, tenant, placement(3)),
      writePlacement(pool, other, placement(4)),
    ].map((p) =>
      p.then(
        ({ outcome }) => outcome,
        (err: Error) => err.message,
      ),
    );
    await waitFor('the second statement', () => log.length === 2);
    held[0]!();
    // The other tenant's balance is short: the statement of both tenants fails whole.
    held[1]!(new Error('insufficient balance'));
    await waitFor("each tenant's own statement", () => log.length === 3);
    expect(log.at(-1)).toBe('statement of 2 for org_other');
    // Its statement fails too, so its placements are written one at a time: the first placed, the second refused.
    held[2]!(new Error('insufficient balance'));
    await waitFor('the first alone', () => log.length === 4);
    held[3]!();
    await waitFor('the second alone', () => log.length === 5);
    held[4]!(new Error('insufficient balance'));
    await waitFor("the first tenant's own statement", () => log.length === 6);
    held[5]!();
    await Promise.all(placed);
    expect(await Promise.all(answers)).toEqual(['placed', 'placed', 'insufficient balance']);
    expect(log.filter((l) => l.startsWith('statement'))).toEqual([
      'statement of 1',
      'statement of 2 for org_other + 1',
      'statement of 2 for org_other',
      'statement of 1 for org_other',
      'statement of 1 for org_other',
      'statement of 1',
    ]);
  }));

it("sends a busy tenant's next batch behind the running statement once as many wait as it carries (ORD-17)", () =>
  withHeldPool(async ({ log, pool, held }) => {
    const placed = [1, 2, 3, 4].map((i) => writePlacement(pool, tenant, placement(i)));
    await waitFor('the first statement', () => log.length === 1);
    expect(log).toEqual(['statement of 4']);
    // Three arrive while it runs: fewer than it carries, so they wait.
    placed.push(...[5, 6, 7].map((i) => writePlacement(pool, tenant, placement(i))));
    await new Promise((resolve) => setImmediate(resolve));
    expect(log).toEqual(['statement of 4']);
    // The fourth makes as many as the running statement carries: all four go out behind it, unanswered as it is.
    placed.push(writePlacement(pool, tenant, placement(8)));
    await waitFor('the second statement', () => log.length === 2);
    expect(log).toEqual(['statement of 4', 'statement of 4']);
    // Two statements are out: whatever arrives now waits for one of them to answer, however many.
    placed.push(...[9, 10, 11, 12, 13].map((i) => writePlacement(pool, tenant, placement(i))));
    await new Promise((resolve) => setImmediate(resolve));
    expect(log).toHaveLength(2);
    held[0]!();
    await waitFor('the third statement', () => log.length === 3);
    expect(log[2]).toBe('statement of 5');
    held[1]!();
    held[2]!();
    await Promise.all(placed);
    expect(log.filter((l) => l === 'connection released')).toHaveLength(1);
  }));

it('never sends behind a running statement on a connection that is not pipelined (ORD-17)', () =>
  withHeldPool(
    async ({ log, pool, held }) => {
      const placed = [writePlacement(pool, tenant, placement(1))];
      await waitFor('the first statement', () => log.length === 1);
      placed.push(...[2, 3, 4, 5, 6].map((i) => writePlacement(pool, tenant, placement(i))));
      await new Promise((resolve) => setImmediate(resolve));
      expect(log).toEqual(['statement of 1']);
      held[0]!();
      await waitFor('the second statement', () => log.length === 2);
      expect(log[1]).toBe('statement of 5');
      held[1]!();
      await Promise.all(placed);
    },
    { pipeline: false },
  ));

it('sends the next batch before it answers a placement whose statement failed alone, as a 402 does (ORD-17)', () =>
  withHeldPool(async ({ log, pool, held }) => {
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
  }));

it('takes a new connection once the statements sent on a lost one have failed (ORD-17)', () =>
  withHeldPool(async ({ log, pool, held, clients }) => {
    const lost = [1, 2, 3].map((i) => writePlacement(pool, tenant, placement(i)).catch((err: Error) => err.message));
    await waitFor('the first statement', () => log.length === 1);
    // The server goes away: pg reports it on the connection and fails the statement sent on it.
    clients[0]!.emit('error', new Error('terminating connection'));
    const later = writePlacement(pool, tenant, placement(4));
    held[0]!(new Error('Connection terminated unexpectedly'));
    // The batch is tried again one placement at a time, each on a fresh connection of the pool (held here as well).
    for (let i = 1; i <= 3; i++) {
      await waitFor(`placement ${i} tried again`, () => held.length === 1 + i);
      held[i]!(new Error('Connection terminated unexpectedly'));
    }
    expect(await Promise.all(lost)).toEqual(Array(3).fill('Connection terminated unexpectedly'));
    // What waited goes out on a new connection; the lost one went back to the pool to be dropped.
    await waitFor('the next statement', () => held.length === 5);
    expect(log).toContain('connection dropped: placement connection lost');
    expect(clients).toHaveLength(2);
    held[4]!();
    await expect(later).resolves.toMatchObject({ outcome: 'placed' });
  }));

it('never puts two placements with one Idempotency-Key in one statement: the second goes in a later one (ORD-17)', () =>
  withHeldPool(async ({ log, pool, held }) => {
    const placed = [writePlacement(pool, tenant, placement(1))];
    await waitFor('the first statement', () => log.length === 1);
    // Three wait, two of them with one key: the statement sent behind the first takes the key once.
    placed.push(
      writePlacement(pool, tenant, placement(2, 'key-a')),
      writePlacement(pool, tenant, placement(3, 'key-a')),
      writePlacement(pool, tenant, placement(4, 'key-b')),
    );
    await waitFor('the second statement', () => log.length === 2);
    expect(log).toEqual(['statement of 1', 'statement of 2']);
    // The one left waits like any placement: it goes out once a statement answers and nothing of the tenant runs.
    held[0]!();
    held[1]!();
    await waitFor('the third statement', () => log.length >= 3);
    expect(log[2]).toBe('statement of 1');
    held[2]!();
    await Promise.all(placed);
  }));

it("refuses, before sending anything, an order planned on another user or state than its group's (ORD-4)", () =>
  withHeldPool(async ({ log, pool, held }) => {
    const order = (changes: Record<string, string>) => {
      const p = placement(1);
      p.rows.orders.push({
        id: 'order_1',
        company_id: 'comp_1',
        user_id: 'user_1',
        order_type: 'ein',
        filing_state: 'DE',
        filing_type: null,
        subscription_status: null,
        details: {},
        billing: 'balance',
        amount_cents: 0,
        retail_cents: null,
        margin_cents: null,
        ...changes,
      });
      p.historyIds.push('fsc_1');
      return p;
    };
    // The statement takes these from the group: an order that differs would silently become its group's.
    await expect(writePlacement(pool, tenant, order({ user_id: 'user_2' }))).rejects.toThrow(/user_id differs/);
    await expect(writePlacement(pool, tenant, order({ filing_state: 'CA' }))).rejects.toThrow(/filing_state differs/);
    expect(log.filter((l) => l.startsWith('statement'))).toEqual([]);
    // The same order as its group's is sent.
    const placed = writePlacement(pool, tenant, order({}));
    await waitFor('the statement', () => log.includes('statement of 1'));
    expect(log.filter((l) => l.startsWith('statement'))).toEqual(['statement of 1']);
    held[0]!();
    await placed;
  }));

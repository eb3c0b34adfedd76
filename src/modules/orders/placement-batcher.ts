import pg from 'pg';
import type { Tenant } from '../../context.js';
import type { Db } from '../../lib/db.js';
import {
  insertPlacements,
  insertPlacementsOfTenants,
  type PlacementOutcome,
  type PlacementWrite,
} from './placements.repo.js';

/*
 * Group commit for placements (ORD-17, ORD-40). Orders of one tenant all end on the same balance row, which each
 * placement locks for its debit until its commit is on disk; placed one statement each, concurrent orders of a busy
 * tenant queue on that lock and pay a statement, a commit and a wake-up each. So placements written on a pool go
 * through one queue per pool: a placement that finds the queue idle is written at once (no added latency), and those
 * that arrive while a statement is running are written by later ones, each statement carrying the waiting placements,
 * up to MAX_BATCH, in arrival order and of whichever tenants they are, all written by place_order_groups_of_tenants in one
 * transaction (every tenant's rows by one INSERT per table, the balances posted last in one posting): with many tenants, each with an order or two waiting, a statement of one tenant's carried about one placement and
 * every order paid a statement and a commit's flush (docs/performance.md, "Many tenants").
 *
 * While the queue is not empty, its statements go out on ONE connection, taken from the pool for that time and
 * pipelined (pg's `pipeline` option, see createPool): the next batch is sent while the statement before it is still
 * running, once at least as many placements wait as that statement carries (and PIPELINE_MIN_BATCH), so the
 * database starts it the moment the previous one commits instead of waiting for this process to read that answer
 * and send the next. The statements of one connection run one after another, so the balance lock is never queued
 * for by the process's own connections, and the process's placement statements never run beside each other: two
 * tenants' statements running side by side on two connections cost the database about half as much CPU again per
 * order as the same statements one after another (ORD-17).
 *
 * A batch is all or nothing in the database. When it fails (a balance cannot cover all of it, or anything else), each
 * tenant's placements are written again in a statement of their own when it held several tenants', and a tenant's
 * statement that fails is written again one placement at a time in arrival order, so each gets the answer it would
 * have had alone: only the placements their own balance cannot cover answer 402.
 */

/** Most placements one statement writes. Bounds the statement's size and the time a balance row stays locked. */
const MAX_BATCH = 32;
/**
 * Statements sent and not yet answered. Two: one running and the next waiting on the wire behind it.
 * More would only split the waiting placements into smaller statements, each paying the statement's fixed part.
 */
const PIPELINE_DEPTH = 2;
/**
 * Fewest placements sent behind a running statement. Measured with ten concurrent clients of one tenant (alternating
 * 3 s windows, two server processes): pipelining placed 5-15 % more orders per second than waiting for each answer
 * in three comparisons; 3 made batches of about four, 1 of about 3.9, with no clear difference between them.
 */
const PIPELINE_MIN_BATCH = 3;

interface Waiting {
  tenant: Tenant;
  /** The placement to write; null once its batch is answered (see forgetAnswered). */
  write: PlacementWrite | null;
  resolve(outcome: PlacementOutcome): void;
  reject(err: unknown): void;
}

interface PlacementQueue {
  waiting: Waiting[];
  /** The connection the queue's statements go out on while it is busy; null until it is connected. */
  client: pg.PoolClient | null;
  connecting: boolean;
  /** The connection failed (the server went away): it is replaced once its statements have settled. */
  broken: boolean;
  /** The batches sent and not yet answered, oldest first (a failed batch's placements written again count as it). */
  sent: Waiting[][];
  /** Marks the connection broken; listens to it while the queue holds it. */
  onError?: () => void;
}

/** The placement queue of one pool. */
class PlacementBatcher {
  private readonly q: PlacementQueue = { waiting: [], client: null, connecting: false, broken: false, sent: [] };

  constructor(private readonly pool: pg.Pool) {}

  place(tenant: Tenant, write: PlacementWrite): Promise<PlacementOutcome> {
    return new Promise((resolve, reject) => {
      this.q.waiting.push({ tenant, write, resolve, reject });
      this.pump();
    });
  }

  /** Sends what may be sent now; gives the connection back once nothing waits or runs. */
  private pump(): void {
    const { q } = this;
    if (q.client && q.broken) {
      // pg fails every statement sent on a lost connection; a new one is taken once they have all come back.
      if (q.sent.length) return;
      this.release(new Error('placement connection lost'));
    }
    if (!q.client) {
      if (q.waiting.length) this.connect();
      return;
    }
    while (q.waiting.length && maySendNext(q, q.client)) this.send(q.client);
    if (!q.sent.length && !q.waiting.length) this.release();
  }

  /** Gives the queue's connection back to the pool (`err`: the pool drops it instead of reusing it). */
  private release(err?: Error): void {
    const { q } = this;
    q.client!.off('error', q.onError!);
    q.client!.release(err);
    q.client = null;
    q.broken = false;
  }

  private connect(): void {
    const { q } = this;
    if (q.connecting) return;
    q.connecting = true;
    this.pool.connect().then(
      (client) => {
        q.connecting = false;
        q.client = client;
        q.onError ??= () => {
          q.broken = true;
        };
        client.on('error', q.onError);
        this.pump();
      },
      (err: unknown) => {
        q.connecting = false;
        for (const w of q.waiting.splice(0)) w.reject(err);
      },
    );
  }

  /**
   * Sends the next batch on `client`. Once its statement answers, what waits is sent before the answered placements
   * are handed back: their requests' remaining work (views, response bodies, socket writes) then runs while the
   * database works, instead of leaving the queue's statements waiting for it.
   */
  private send(client: pg.PoolClient): void {
    const { q } = this;
    const batch = takeBatch(q.waiting);
    q.sent.push(batch);
    void this.writeBatch(client, batch).then((settle) => {
      // Not always the oldest: a failed batch is written again one placement at a time while later ones answer.
      q.sent.splice(q.sent.indexOf(batch), 1);
      // pump writes what waits to the connection's socket before it returns; then the answers go back.
      this.pump();
      settle();
      forgetAnswered(batch);
    });
  }

  /**
   * Writes `batch` and returns what hands its outcomes back: the placements' outcomes, or a lone placement's error
   * (a 402 of a busy tenant, say). A larger batch that failed has already been written again (see `writeAgain`) and
   * answered as it went.
   */
  private async writeBatch(client: pg.PoolClient, batch: Waiting[]): Promise<() => void> {
    const tenants = byTenant(batch);
    try {
      const outcomes =
        tenants.length === 1
          ? [await insertPlacements(client, batch[0]!.tenant, batch.map(writeOf))]
          : await insertPlacementsOfTenants(
              client,
              tenants.map((own) => ({ tenant: own[0]!.tenant, writes: own.map(writeOf) })),
            );
      return () => {
        for (const [t, own] of tenants.entries()) for (const [i, w] of own.entries()) w.resolve(outcomes[t]![i]!);
      };
    } catch (err) {
      if (batch.length === 1) return () => batch[0]!.reject(err);
      for (const own of tenants.length > 1 ? tenants : batch.map((w) => [w])) await this.writeAgain(client, own);
      return noop;
    }
  }

  /**
   * Writes again, in a statement of their own, placements of ONE tenant from a batch that failed, and answers them:
   * when that fails too, one at a time in arrival order, each answered with its own outcome or error. On a lost
   * connection, each statement goes on a fresh connection of the pool (its own transaction, as on the queue's).
   */
  private async writeAgain(client: pg.PoolClient, own: Waiting[]): Promise<void> {
    try {
      const outcomes = await insertPlacements(this.q.broken ? this.pool : client, own[0]!.tenant, own.map(writeOf));
      for (const [i, w] of own.entries()) w.resolve(outcomes[i]!);
    } catch (err) {
      if (own.length === 1) own[0]!.reject(err);
      else for (const w of own) await this.writeAgain(client, [w]);
    }
  }
}

/** The placements of `batch` by tenant: each tenant's in arrival order, the tenants in the order of their first. */
function byTenant(batch: Waiting[]): Waiting[][] {
  const tenants = new Map<string, Waiting[]>();
  for (const w of batch) {
    const key = tenantKey(w.tenant);
    const own = tenants.get(key);
    if (own) own.push(w);
    else tenants.set(key, [w]);
  }
  return [...tenants.values()];
}

function tenantKey(tenant: Tenant): string {
  return `${tenant.organizationId}\u0000${tenant.environment}`;
}

/**
 * Whether the next batch may go out now: at once when nothing runs; behind a running statement only on
 * a pipelined connection, below PIPELINE_DEPTH, and once at least as many placements wait as the last statement sent
 * carries (and PIPELINE_MIN_BATCH), so that pipelining does not split a busy tenant's orders into smaller statements.
 */
function maySendNext(q: PlacementQueue, client: pg.PoolClient): boolean {
  if (!q.sent.length) return true;
  if (!client.pipeline || q.sent.length >= PIPELINE_DEPTH) return false;
  return q.waiting.length >= Math.max(PIPELINE_MIN_BATCH, q.sent[q.sent.length - 1]!.length);
}

function noop(): void {}

// Only answered placements are forgotten, and an answered placement is never written again.
function writeOf(w: Waiting): PlacementWrite {
  if (!w.write) throw new Error('a placement was written after its answer');
  return w.write;
}

/**
 * Drops an answered batch's references to its placements and their requests' continuations. Should the batch or a
 * placement have reached the old generation, these would otherwise keep every request of the batch alive until a
 * major GC: a young collection counts every old object as alive, so whatever a dead old object points at is promoted
 * in turn (docs/architecture.md, "Request path: POST /orders").
 */
function forgetAnswered(batch: Waiting[]): void {
  for (const w of batch) {
    w.write = null;
    w.resolve = noop;
    w.reject = noop;
  }
  batch.length = 0;
}

/**
 * The next batch, in arrival order: up to MAX_BATCH waiting placements of any tenants (ORD-40), with distinct
 * Idempotency-Keys within each tenant (two placements with one key in one statement would both find no earlier group
 * and violate the key's uniqueness together; the second waits for a later statement, which runs after the first's
 * commit and finds its group).
 */
function takeBatch(waiting: Waiting[]): Waiting[] {
  const batch: Waiting[] = [];
  const keys = new Set<string>();
  for (let i = 0; i < waiting.length && batch.length < MAX_BATCH; ) {
    const key = writeOf(waiting[i]!).rows.group.idempotencyKey;
    const tenantAndKey = key ? `${tenantKey(waiting[i]!.tenant)}\u0000${key}` : null;
    if (tenantAndKey && keys.has(tenantAndKey)) {
      i += 1;
      continue;
    }
    if (tenantAndKey) keys.add(tenantAndKey);
    batch.push(...waiting.splice(i, 1));
  }
  return batch;
}

const batchers = new WeakMap<pg.Pool, PlacementBatcher>();

/**
 * Writes one placement (ORD-13): on a pool, through the pool's queue, possibly in one statement with other
 * placements, of the tenant or of others, that arrived meanwhile (ORD-17, ORD-40); on a transaction's client, alone
 * in that transaction.
 * @returns its outcome (see `insertPlacements`). @throws AppError insufficient_balance (402) when the balance cannot
 * cover it (nothing of it written); any database error of its own statement, or the pool's when no connection can
 * be had (`DATABASE_CONNECT_TIMEOUT_MS`).
 */
export async function writePlacement(db: Db, tenant: Tenant, write: PlacementWrite): Promise<PlacementOutcome> {
  if (db instanceof pg.Pool) {
    let batcher = batchers.get(db);
    if (!batcher) {
      batcher = new PlacementBatcher(db);
      batchers.set(db, batcher);
    }
    return batcher.place(tenant, write);
  }
  return (await insertPlacements(db, tenant, [write]))[0]!;
}

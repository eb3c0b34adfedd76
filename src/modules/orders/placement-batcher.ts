import pg from 'pg';
import type { Tenant } from '../../context.js';
import type { Db } from '../../lib/db.js';
import { insertPlacements, type PlacementOutcome, type PlacementWrite } from './orders.repo.js';

/*
 * Group commit for placements (ORD-17). Orders of one tenant all end on the same balance row, which each placement
 * locks for its debit until its commit is on disk; placed one statement each, concurrent orders of a busy tenant
 * queue on that lock and pay a statement, a commit and a wake-up each. So placements written on a pool go through
 * a per-tenant queue: a placement that finds the tenant's writer idle is written at once (no added latency), and
 * those that arrive while a statement is running are written together by the next one, up to MAX_BATCH. At most
 * WRITERS_PER_TENANT statements per tenant run at a time in a process, so the balance lock is never queued for by
 * the process's own connections; other tenants' placements run beside them on other connections.
 *
 * A batch is all or nothing in the database. When it fails (the balance cannot cover all of it, or anything
 * else), its placements are written again one at a time in arrival order, so each gets the answer it would have
 * had alone: only the placements the balance cannot cover answer 402.
 */

/** Most placements one statement writes. Bounds the statement's size and the time the balance row stays locked. */
const MAX_BATCH = 32;
/**
 * Statements of one tenant in flight at once in one process. One: measured with ten concurrent clients of one tenant,
 * two writers made batches half as large, cost a third more database CPU per order (their debits wait on each other's
 * commits) and placed no more orders per second.
 */
const WRITERS_PER_TENANT = 1;

interface Waiting {
  write: PlacementWrite;
  resolve(outcome: PlacementOutcome): void;
  reject(err: unknown): void;
}

interface TenantQueue {
  tenant: Tenant;
  waiting: Waiting[];
  writers: number;
}

/** The per-tenant placement queues of one pool. */
class PlacementBatcher {
  private readonly queues = new Map<string, TenantQueue>();

  constructor(private readonly pool: pg.Pool) {}

  place(tenant: Tenant, write: PlacementWrite): Promise<PlacementOutcome> {
    const key = `${tenant.organizationId}:${tenant.environment}`;
    let queue = this.queues.get(key);
    if (!queue) {
      queue = { tenant, waiting: [], writers: 0 };
      this.queues.set(key, queue);
    }
    const q = queue;
    return new Promise((resolve, reject) => {
      q.waiting.push({ write, resolve, reject });
      if (q.writers < WRITERS_PER_TENANT) void this.drain(key, q);
    });
  }

  /**
   * Writes the queue's batches one after another. Once a statement answers, the next batch is sent before the
   * answered placements are handed back: their requests' remaining work (views, response bodies, socket writes)
   * then runs while the database works on the next statement, instead of leaving the tenant's writer idle.
   */
  private async drain(key: string, queue: TenantQueue): Promise<void> {
    queue.writers += 1;
    try {
      let running = this.writeBatch(queue.tenant, takeBatch(queue.waiting));
      for (;;) {
        const settle = await running;
        const more = queue.waiting.length > 0;
        if (more) running = this.writeBatch(queue.tenant, takeBatch(queue.waiting));
        // pg-pool hands the statement to an idle connection in a process.nextTick, which runs only once the microtask
        // queue is empty: answered here, the requests' continuations would all run first. setImmediate comes after.
        setImmediate(settle);
        if (!more) break;
      }
    } finally {
      queue.writers -= 1;
      if (!queue.writers && !queue.waiting.length) this.queues.delete(key);
    }
  }

  /**
   * Writes `batch` and returns what hands its outcomes back: the placements' outcomes, or a lone placement's error
   * (a 402 of a busy tenant's queue, say). A larger batch that failed has already been written again one at a time and
   * answered as it went.
   */
  private async writeBatch(tenant: Tenant, batch: Waiting[]): Promise<() => void> {
    try {
      const outcomes = await insertPlacements(
        this.pool,
        tenant,
        batch.map((w) => w.write),
      );
      return () => {
        for (const [i, w] of batch.entries()) w.resolve(outcomes[i]!);
      };
    } catch (err) {
      if (batch.length === 1) return () => batch[0]!.reject(err);
      for (const w of batch) {
        try {
          w.resolve((await insertPlacements(this.pool, tenant, [w.write]))[0]!);
        } catch (alone) {
          w.reject(alone);
        }
      }
      return noop;
    }
  }
}

function noop(): void {}

/**
 * The next batch, in arrival order: up to MAX_BATCH placements with distinct Idempotency-Keys (two placements with
 * one key in one statement would both find no earlier group and violate the key's uniqueness together; the
 * second waits for the next batch, where it finds the first's group).
 */
function takeBatch(waiting: Waiting[]): Waiting[] {
  const batch: Waiting[] = [];
  const keys = new Set<string>();
  for (let i = 0; i < waiting.length && batch.length < MAX_BATCH; ) {
    const key = waiting[i]!.write.rows.group.idempotencyKey;
    if (key && keys.has(key)) {
      i += 1;
      continue;
    }
    if (key) keys.add(key);
    batch.push(...waiting.splice(i, 1));
  }
  return batch;
}

const batchers = new WeakMap<pg.Pool, PlacementBatcher>();

/**
 * Writes one placement (ORD-13): on a pool, through the tenant's queue, possibly in one statement with other
 * placements of the tenant that arrived meanwhile (ORD-17); on a transaction's client, alone in that transaction.
 * @returns its outcome (see `insertPlacements`). @throws AppError insufficient_balance (402) when the balance cannot
 * cover it (nothing of it written); any database error of its own statement.
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

import pg from 'pg';

/*
 * Wake-up notifications (LISTEN/NOTIFY) sent AFTER a transaction commits, never inside it (OPS-5).
 *
 * PostgreSQL serialises every committing transaction that issued a NOTIFY: at commit it takes one lock for the
 * whole server and keeps it until the commit record is on disk. Put in the transactions that write events (every
 * order, every status change), that lock made them commit one at a time, each waiting for its own disk flush,
 * about four times fewer commits per second than without it. So a writer only marks its transaction
 * ({@link signalAtCommit}); once COMMIT has returned, {@link withTransaction} hands the marks to its pool's
 * sender, which sends them in one small statement of its own and merges whatever arrives while that statement
 * runs into the next one. A transaction that rolls back signals nothing.
 *
 * A signal says only "look again": listeners (webhook dispatchers, event streams) read the rows themselves and
 * also look on a timer, so a signal lost with its process (killed between COMMIT and the signal) costs latency,
 * never an event.
 */

/** Channel and payload parts marked on a transaction, merged per channel. */
type Marks = Map<string, Set<string>>;

const marked = new WeakMap<object, Marks>();
const callbacks = new WeakMap<object, Array<() => void>>();
const senders = new WeakMap<pg.Pool, SignalSender>();

/** Longest payload PostgreSQL takes is 8000 bytes; a longer list of parts is sent as '*' (everyone looks). */
const MAX_PAYLOAD = 7900;

/**
 * Marks the transaction running on `tx` to send `part` on `channel` once it commits; parts of one channel are
 * joined by ',' (e.g. the tenants that got events). When `tx` is a pool, the statement that made the change ran
 * on its own and has already committed: the signal goes at once.
 */
export function signalAtCommit(tx: object, channel: string, part: string): void {
  if (tx instanceof pg.Pool) {
    sendSignals(tx, new Map([[channel, new Set([part])]]));
    return;
  }
  let marks = marked.get(tx);
  if (!marks) {
    marks = new Map();
    marked.set(tx, marks);
  }
  const parts = marks.get(channel) ?? new Set<string>();
  parts.add(part);
  marks.set(channel, parts);
}

/**
 * Runs `fn` in this process once the transaction running on `tx` has committed (at once when `tx` is a pool; never
 * on rollback), e.g. to drop cached rows the transaction changed before this process serves another request.
 */
export function onCommit(tx: object, fn: () => void): void {
  if (tx instanceof pg.Pool) {
    fn();
    return;
  }
  const list = callbacks.get(tx) ?? [];
  list.push(fn);
  callbacks.set(tx, list);
}

/**
 * Removes the marks and callbacks of the transaction on `client`, runs the callbacks when it `committed`, and returns
 * the marks to send (undefined: none).
 */
export function takeSignals(client: object, committed = true): Marks | undefined {
  const marks = marked.get(client);
  if (marks) marked.delete(client);
  const fns = callbacks.get(client);
  if (fns) {
    callbacks.delete(client);
    if (committed) for (const fn of fns) fn();
  }
  return committed ? marks : undefined;
}

/** Sends `marks` through `pool`, merged with any other signals waiting there (never throws; see the module note). */
export function sendSignals(pool: pg.Pool, marks: Marks): void {
  let sender = senders.get(pool);
  if (!sender) {
    sender = new SignalSender(pool);
    senders.set(pool, sender);
  }
  sender.add(marks);
}

/**
 * At most one NOTIFY statement in flight per pool; what arrives meanwhile goes out together in the next one. The
 * first signal after a quiet spell waits for the end of the current turn of the event loop, so the signals of
 * everything answered in that turn (the placements of one batch, ORD-17, each marking its tenant) share one
 * statement: a wake-up is a round trip, and on a busy tenant there were two of them per placement statement.
 */
class SignalSender {
  private queued: Marks = new Map();
  private sending = false;

  constructor(private readonly pool: pg.Pool) {}

  add(marks: Marks): void {
    for (const [channel, parts] of marks) {
      const queued = this.queued.get(channel) ?? new Set<string>();
      for (const p of parts) queued.add(p);
      this.queued.set(channel, queued);
    }
    if (!this.sending) {
      this.sending = true;
      setImmediate(() => void this.drain());
    }
  }

  private async drain(): Promise<void> {
    try {
      while (this.queued.size) {
        const batch = this.queued;
        this.queued = new Map();
        const params: string[] = [];
        for (const [channel, parts] of batch) {
          const payload = [...parts].join(',');
          params.push(channel, payload.length <= MAX_PAYLOAD ? payload : '*');
        }
        const calls = [...batch.keys()].map((_, i) => `pg_notify($${2 * i + 1}, $${2 * i + 2})`).join(', ');
        // The statement is its own transaction, and a wake-up needs no disk flush: committing it asynchronously
        // (local to this transaction) delivers it at once instead of after an fsync. A failure (database down, pool
        // closed) is dropped on purpose: the listeners' timers find the rows.
        // Named by its number of channels: parsed once per connection, as a wake-up follows most commits.
        await this.pool
          .query({
            name: `commit_signals_${batch.size}`,
            text: `SELECT set_config('synchronous_commit', 'off', true), ${calls}`,
            values: params,
          })
          .catch(() => undefined);
      }
    } finally {
      this.sending = false;
    }
  }
}

import type { Db } from '../../lib/db.js';
import { addCounts, deleteExpiredCounters, type CounterDelta, type CounterRead } from './rate-limits.repo.js';

/** A counter's state for the current window: hits seen by every process (as far as this one knows), ms to the window's end. */
export interface CounterState {
  current: number;
  ttlMs: number;
}

interface Entry {
  windowStart: number;
  windowMs: number;
  /** Total of every process for this window, as the database answered at the last sync (our synced hits included). */
  synced: number;
  /** Hits of this process not yet sent. */
  pending: number;
  /** Hits of this process sent by the sync under way. */
  inFlight: number;
  /** Looked at (peek) since the last sync: the next sync reads its total even when this process has no hits to send. */
  watched: boolean;
}

/**
 * Fixed-window counters (windows aligned to the epoch, so every process agrees on them) counted in process
 * memory and shared through PostgreSQL: a request costs a Map lookup, never a round trip. Every `syncMs` the
 * hits of all counters touched since the last sync go to the database in ONE statement, which answers each
 * counter's total over all processes.
 *
 * A counter a process only looks at ({@link peek}: failed authentications, AUTH-14) is read by the next sync too, in
 * the same statement, so a process that has counted nothing for it still learns what the others counted.
 *
 * Tolerance: one process alone enforces a limit exactly. With several, each learns the others' hits at its next
 * sync, so a client spreading requests over N processes may get up to the requests the other N-1 processes
 * admit within one sync interval (plus one round trip) beyond the limit.
 */
export class SharedCounters {
  private readonly entries = new Map<string, Entry>();
  /** Unsent hits of windows that ended before they could be sent (they still count for other processes' views). */
  private carried: CounterDelta[] = [];
  private timer: NodeJS.Timeout | null = null;
  private syncing: Promise<void> | null = null;
  private lastPurge = 0;

  /**
   * @param db where counters are shared (the HTTP pool: one short statement per interval).
   * @param syncMs interval between syncs, in ms.
   * @param onError told about a failed sync (the hits are kept and sent with the next one).
   */
  constructor(
    private readonly db: Db,
    private readonly syncMs: number,
    private readonly onError: (err: unknown) => void = () => undefined,
  ) {}

  /** Counts one hit on `bucket` in its current window of `windowMs` and returns the new state. */
  hit(bucket: string, windowMs: number, now = Date.now()): CounterState {
    const entry = this.entryFor(bucket, windowMs, now);
    entry.pending += 1;
    return { current: entry.synced + entry.inFlight + entry.pending, ttlMs: entry.windowStart + windowMs - now };
  }

  /**
   * The state of `bucket` in its current window without counting a hit, as far as this process knows; the next sync
   * reads the total of every process for it.
   */
  peek(bucket: string, windowMs: number, now = Date.now()): CounterState {
    const entry = this.entryFor(bucket, windowMs, now);
    entry.watched = true;
    return { current: entry.synced + entry.inFlight + entry.pending, ttlMs: entry.windowStart + windowMs - now };
  }

  /** Starts syncing every `syncMs` (the timer never keeps the process alive). */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.sync(), this.syncMs);
    this.timer.unref();
  }

  /** Stops the timer and sends what is left (best effort). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.sync();
  }

  /**
   * Sends every unsent hit in one statement and takes in the totals; a sync already under way is awaited
   * instead of starting a second one. Never throws (failures go to onError and are retried next time).
   */
  async sync(now = Date.now()): Promise<void> {
    if (this.syncing) return this.syncing;
    this.syncing = this.syncOnce(now).finally(() => {
      this.syncing = null;
    });
    return this.syncing;
  }

  private async syncOnce(now: number): Promise<void> {
    const sending: Array<[string, Entry]> = [];
    const reading: Array<[string, Entry]> = [];
    const deltas: CounterDelta[] = this.carried;
    this.carried = [];
    for (const [bucket, entry] of this.entries) {
      if (entry.windowStart + entry.windowMs <= now) {
        // A window that ended: its unsent hits still go out; the entry itself is no longer needed.
        if (entry.pending)
          deltas.push({ bucket, windowStart: entry.windowStart, windowMs: entry.windowMs, hits: entry.pending });
        if (!entry.inFlight) this.entries.delete(bucket);
        continue;
      }
      if (!entry.pending) {
        if (entry.watched && !entry.inFlight) reading.push([bucket, entry]);
        entry.watched = false;
        continue;
      }
      entry.watched = false;
      entry.inFlight = entry.pending;
      entry.pending = 0;
      deltas.push({ bucket, windowStart: entry.windowStart, windowMs: entry.windowMs, hits: entry.inFlight });
      sending.push([bucket, entry]);
    }
    try {
      if (deltas.length || reading.length) {
        const reads: CounterRead[] = reading.map(([bucket, e]) => ({ bucket, windowStart: e.windowStart }));
        const totals = await addCounts(this.db, deltas, reads);
        for (const [bucket, entry] of sending) {
          const total = totals.get(`${bucket}\u0000${entry.windowStart}`);
          if (total !== undefined) entry.synced = Math.max(entry.synced + entry.inFlight, total);
          else entry.synced += entry.inFlight;
          entry.inFlight = 0;
        }
        for (const [bucket, entry] of reading)
          entry.synced = Math.max(entry.synced, totals.get(`${bucket}\u0000${entry.windowStart}`) ?? 0);
      }
      if (now - this.lastPurge > 60_000) {
        this.lastPurge = now;
        await deleteExpiredCounters(this.db);
      }
    } catch (err) {
      // Nothing is lost: what was in flight is sent again with the next sync.
      for (const [, entry] of sending) {
        entry.pending += entry.inFlight;
        entry.inFlight = 0;
      }
      this.carried.push(
        ...deltas.filter((d) => !sending.some(([b, e]) => b === d.bucket && e.windowStart === d.windowStart)),
      );
      this.onError(err);
    }
  }

  private entryFor(bucket: string, windowMs: number, now: number): Entry {
    const start = now - (now % windowMs);
    const entry = this.entries.get(bucket);
    if (entry && entry.windowStart === start) return entry;
    if (entry && (entry.pending || entry.inFlight)) {
      // The old window's unsent hits are carried to the next sync; hits in flight are already on their way.
      if (entry.pending)
        this.carried.push({ bucket, windowStart: entry.windowStart, windowMs: entry.windowMs, hits: entry.pending });
    }
    const fresh: Entry = { windowStart: start, windowMs, synced: 0, pending: 0, inFlight: 0, watched: false };
    this.entries.set(bucket, fresh);
    return fresh;
  }
}

import type pg from 'pg';
import type { Logger } from 'pino';
import { forgetApiKeyInProcess } from '../organizations/api-key-cache.js';
import { findActiveKeyHashes } from '../organizations/api-keys.repo.js';

/*
 * EVT-9: an event stream lives only as long as the API key it was opened with resolves. The open streams of this
 * process are kept by the hash of their key; a key is looked up again when a change to its api_keys row is announced
 * (`api_key_changed`, heard on the stream hub's connection), for every key when that connection (re)opens (it may
 * have missed announcements), for a new stream once it listens (a revocation may have committed between its
 * authentication and then), and for every key every `intervalMs` (a key can stop resolving without any row change,
 * e.g. once an expiry passes). The look-up is the one requests authenticate with (findActiveKeyHashes), so whatever
 * stops a key there ends its streams here. Looks asked for while one runs are merged into the next: one query
 * however many keys changed.
 */

/** The streams of this process by the SHA-256 hex of their API key, and what ends each. */
export class StreamKeys {
  private readonly byKey = new Map<string, Set<() => void>>();
  private queued = new Set<string>();
  private queuedAll = false;
  private checking = false;
  private timer: NodeJS.Timeout | null = null;

  /**
   * @param db the service's pool, which reads the keys.
   * @param intervalMs how often every key is looked up again while a stream is open (the stream heartbeat, ms).
   */
  constructor(
    private readonly db: pg.Pool,
    private readonly log: Pick<Logger, 'info' | 'warn'>,
    private readonly intervalMs: number,
  ) {}

  /** Open streams of the key `keyHash` in this process. */
  count(keyHash: string): number {
    return this.byKey.get(keyHash)?.size ?? 0;
  }

  /**
   * Keeps a stream opened with the key `keyHash`; `end` ends it cleanly (its key stopped resolving, or the server
   * closes). @returns the function that forgets it (idempotent).
   */
  add(keyHash: string, end: () => void): () => void {
    const ends = this.byKey.get(keyHash) ?? new Set<() => void>();
    ends.add(end);
    this.byKey.set(keyHash, ends);
    if (!this.timer) {
      this.timer = setInterval(() => this.recheck('*'), this.intervalMs);
      this.timer.unref();
    }
    return () => {
      ends.delete(end);
      if (!ends.size && this.byKey.get(keyHash) === ends) this.byKey.delete(keyHash);
      if (!this.byKey.size) this.stopTimer();
    };
  }

  /**
   * Looks up `keyHash` again soon (every key with '*' or ''), and ends the streams of each key that no longer
   * resolves. A key with no stream here costs nothing. Never throws: a failed look-up is logged and made again at
   * the next interval.
   */
  recheck(keyHash: string): void {
    if (keyHash === '*' || keyHash === '') this.queuedAll = true;
    else if (this.byKey.has(keyHash)) this.queued.add(keyHash);
    else return;
    if (this.checking) return;
    this.checking = true;
    setImmediate(() => void this.drain());
  }

  /** Ends every stream (server shutdown) and stops the interval. */
  endAll(): void {
    this.stopTimer();
    for (const ends of [...this.byKey.values()]) for (const end of [...ends]) end();
    this.byKey.clear();
  }

  private async drain(): Promise<void> {
    try {
      while (this.queuedAll || this.queued.size) {
        const hashes = this.queuedAll ? [...this.byKey.keys()] : [...this.queued].filter((h) => this.byKey.has(h));
        this.queuedAll = false;
        this.queued = new Set();
        if (hashes.length) await this.check(hashes);
      }
    } finally {
      this.checking = false;
    }
  }

  private async check(hashes: string[]): Promise<void> {
    let resolving: Set<string>;
    try {
      resolving = new Set(await findActiveKeyHashes(this.db, hashes));
    } catch (err) {
      this.log.warn({ err }, 'could not check the API keys of the open event streams; checking again shortly');
      return;
    }
    for (const hash of hashes) {
      if (resolving.has(hash)) continue;
      // Found gone in the database: no request of this process may still pass with it from the key cache.
      forgetApiKeyInProcess(hash);
      const ends = [...(this.byKey.get(hash) ?? [])];
      if (!ends.length) continue;
      this.log.info({ streams: ends.length }, 'ending the event streams of an API key that no longer resolves');
      for (const end of ends) end();
    }
  }

  private stopTimer(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}

import pg from 'pg';
import type { Logger } from 'pino';

/** Settings of a {@link NotifiedCache}. */
export interface NotifiedCacheOptions {
  /** Its connection settings are used for the listening connection. */
  pool: pg.Pool;
  /** The NOTIFY channel that announces changes; payload: one key to drop, or '*' / '' to drop everything. */
  channel: string;
  /** Longest life of an entry, ms; 0 turns the cache off (every read goes to the loader). */
  ttlMs: number;
  log: Pick<Logger, 'warn'>;
  /** Said in the warning when the notifications are lost, e.g. 'API key'. */
  what: string;
  /** Entries kept at most; the oldest go first, so random keys cannot grow the cache without bound. Default 10,000. */
  maxEntries?: number;
  /** Wait before opening the listening connection again after it broke, ms. Default 1000. */
  reconnectMs?: number;
  /**
   * Told of every change: the key a notification (or a local `forget`) names, and '*' when everything is dropped
   * (a '*' notification, the notifications lost, or heard again). For what a cache keeps beside its entries.
   */
  onChange?: (key: string) => void;
}

interface Entry<V> {
  value: V;
  expiresAt: number;
}

/**
 * Values read from the database kept in process memory, correct across processes (AUTH-12, BILL-19): every change
 * to the rows behind them is announced at commit with NOTIFY on `channel`, heard on a connection of the cache's own,
 * and drops the entries it names at once. Entries are served only while that connection listens: while it is down
 * nothing is cached (every read goes to the loader), the cache is emptied, and the connection is retried every
 * `reconnectMs`; so a change is seen within the notification's delivery time, never after a stale entry. A read
 * that overlapped a notification is returned but not kept, since it may predate the change.
 */
export class NotifiedCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private client: pg.Client | null = null;
  private listening = false;
  private stopped = false;
  private retry: NodeJS.Timeout | null = null;
  /** Bumped by every notification: a read that overlapped one is not stored. */
  private changes = 0;
  private readonly maxEntries: number;
  private readonly reconnectMs: number;

  constructor(private readonly options: NotifiedCacheOptions) {
    this.maxEntries = options.maxEntries ?? 10_000;
    this.reconnectMs = options.reconnectMs ?? 1000;
  }

  /** The value of `key`: from memory when known and fresh, else from `load` (kept when the cache may keep it). */
  async get(key: string, load: () => Promise<V>, now = Date.now()): Promise<V> {
    const hit = this.entries.get(key);
    if (hit && hit.expiresAt > now && this.listening) return hit.value;
    const changesBefore = this.changes;
    const value = await load();
    if (this.listening && this.options.ttlMs > 0 && this.changes === changesBefore) {
      this.entries.delete(key);
      if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(key, { value, expiresAt: now + this.options.ttlMs });
    }
    return value;
  }

  /** Drops one entry (all of them with '*'), and keeps a read under way from storing what it read. */
  forget(key: string): void {
    this.changes += 1;
    if (key === '*' || key === '') this.entries.clear();
    else this.entries.delete(key);
    this.options.onChange?.(key || '*');
  }

  /** Opens the listening connection (no-op when the cache is off). Resolves once listening or after the first failure. */
  async start(): Promise<void> {
    if (this.options.ttlMs <= 0 || this.stopped) return;
    await this.connect();
  }

  /** Closes the listening connection; the cache is off from then on. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.listening = false;
    this.entries.clear();
    if (this.retry) clearTimeout(this.retry);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }

  /** True while changes are being heard (entries are served only then). */
  get isListening(): boolean {
    return this.listening;
  }

  private async connect(): Promise<void> {
    const { pool, channel, log, what } = this.options;
    const client = new pg.Client({ ...pool.options, connectionTimeoutMillis: pool.options.connectionTimeoutMillis });
    const lost = (err?: unknown) => {
      if (this.client !== client) return;
      this.client = null;
      this.listening = false;
      this.entries.clear();
      this.options.onChange?.('*');
      if (!this.stopped) {
        if (err) log.warn({ err }, `${what} change notifications lost; reading from the database until they are back`);
        this.retry = setTimeout(() => void this.connect(), this.reconnectMs);
        this.retry.unref();
      }
      void client.end().catch(() => undefined);
    };
    this.client = client;
    client.on('error', lost);
    client.on('end', () => lost(new Error('connection ended')));
    client.on('notification', (n) => {
      if (n.channel === channel) this.forget(n.payload ?? '*');
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${channel}`);
      if (this.client !== client || this.stopped) return void client.end().catch(() => undefined);
      this.forget('*');
      this.listening = true;
    } catch (err) {
      lost(err);
    }
  }
}

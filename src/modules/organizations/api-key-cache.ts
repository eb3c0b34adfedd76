import pg from 'pg';
import type { Logger } from 'pino';
import type { Environment } from '../../context.js';
import { findActiveKeyByHash } from './organizations.repo.js';

/** The active key a hash resolves to (null: unknown or revoked). */
export type CachedKey = { id: string; organization_id: string; environment: Environment } | null;

interface Entry {
  key: CachedKey;
  expiresAt: number;
}

/** Every started cache of this process (one per app instance). */
const running = new Set<ApiKeyCache>();

/**
 * Drops `keyHash` from every cache of this process at once (a revocation made here, e.g. by the admin API, is then
 * refused by this process's next request even before the NOTIFY of its commit comes back).
 */
export function forgetApiKeyInProcess(keyHash: string): void {
  for (const cache of running) cache.forget(keyHash);
}

/** The channel `migrations/021` notifies on when an api_keys row changes; the payload is its key_hash, or `*`. */
export const API_KEY_CHANNEL = 'api_key_changed';

/**
 * API keys resolved in process memory (AUTH-12): in the steady state an API request costs no database round trip
 * for its key. Entries (found and not-found alike) live `ttlMs` at most; a revocation — any change to an api_keys
 * row — reaches every process at commit through LISTEN/NOTIFY on a connection of its own, and the entry is dropped
 * at once. While that connection is down nothing is cached (every request reads the key), the cache is emptied, and
 * the connection is retried every `reconnectMs`; so a revoked key is refused within the notification's delivery time,
 * never after a stale entry. At most `maxEntries` entries are kept (the oldest go first), so random keys sent by
 * strangers cannot grow it without bound.
 */
export class ApiKeyCache {
  private readonly entries = new Map<string, Entry>();
  private client: pg.Client | null = null;
  private listening = false;
  private stopped = false;
  private retry: NodeJS.Timeout | null = null;
  /** Bumped by every notification: a read that overlapped one is not stored (it may predate the change). */
  private changes = 0;

  /**
   * @param pool the HTTP pool: its connection settings are used for the listening connection, and it serves misses.
   * @param ttlMs longest life of an entry, ms; 0 turns the cache off (every request reads its key).
   */
  constructor(
    private readonly pool: pg.Pool,
    private readonly ttlMs: number,
    private readonly log: Pick<Logger, 'warn'>,
    private readonly maxEntries = 10_000,
    private readonly reconnectMs = 1000,
  ) {}

  /** The active key of `keyHash` (SHA-256 hex of the key), from memory when known, else from the database. */
  async find(keyHash: string, now = Date.now()): Promise<CachedKey> {
    const hit = this.entries.get(keyHash);
    if (hit && hit.expiresAt > now && this.listening) return hit.key;
    const changesBefore = this.changes;
    const key = await findActiveKeyByHash(this.pool, keyHash);
    // Only while listening, so any later change to the row drops the entry; and not when a change was heard while
    // reading, since the row read may be the one before that change.
    if (this.listening && this.ttlMs > 0 && this.changes === changesBefore) {
      this.entries.delete(keyHash);
      if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(keyHash, { key, expiresAt: now + this.ttlMs });
    }
    return key;
  }

  /** Drops one key's entry, and keeps a read under way from storing it. */
  forget(keyHash: string): void {
    this.changes += 1;
    this.entries.delete(keyHash);
  }

  /** Opens the listening connection (no-op when the cache is off). Resolves once listening or after the first failure. */
  async start(): Promise<void> {
    if (this.ttlMs <= 0 || this.stopped) return;
    running.add(this);
    await this.connect();
  }

  /** Closes the listening connection; the cache is off from then on. */
  async stop(): Promise<void> {
    this.stopped = true;
    running.delete(this);
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
    const client = new pg.Client({ ...this.pool.options, connectionTimeoutMillis: this.pool.options.connectionTimeoutMillis });
    const lost = (err?: unknown) => {
      if (this.client !== client) return;
      this.client = null;
      this.listening = false;
      this.entries.clear();
      if (!this.stopped) {
        if (err) this.log.warn({ err }, 'API key change notifications lost; reading keys from the database until they are back');
        this.retry = setTimeout(() => void this.connect(), this.reconnectMs);
        this.retry.unref();
      }
      void client.end().catch(() => undefined);
    };
    this.client = client;
    client.on('error', lost);
    client.on('end', () => lost(new Error('connection ended')));
    client.on('notification', (n) => {
      if (n.channel !== API_KEY_CHANNEL) return;
      this.changes += 1;
      if (!n.payload || n.payload === '*') this.entries.clear();
      else this.entries.delete(n.payload);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${API_KEY_CHANNEL}`);
      if (this.client !== client || this.stopped) return void client.end().catch(() => undefined);
      this.entries.clear();
      this.changes += 1;
      this.listening = true;
    } catch (err) {
      lost(err);
    }
  }
}

import type pg from 'pg';
import type { Logger } from 'pino';
import type { Environment } from '../../context.js';
import { NotifiedCache } from '../../lib/notified-cache.js';
import { findActiveKeyByHash } from './api-keys.repo.js';
import { UncheckedKeyHashes } from './unchecked-keys.js';

/**
 * The active key a hash resolves to (null: unknown, revoked or ended). `expires_at`: the end a roll gave it
 * (PORTAL-12), which no notification announces, so whoever reads a cached entry checks it.
 */
export type CachedKey = {
  id: string;
  organization_id: string;
  environment: Environment;
  expires_at: Date | null;
} | null;

/** Every started cache of this process (one per app instance). */
const running = new Set<ApiKeyCache>();

/**
 * Drops `keyHash` from every cache of this process at once (a revocation made here, e.g. by the admin API, is then
 * refused by this process's next request even before the NOTIFY of its commit comes back).
 */
export function forgetApiKeyInProcess(keyHash: string): void {
  for (const cache of running) cache.forget(keyHash);
}

/**
 * The channel `migrations/repeatable/notify_api_key_change.sql` notifies on when an api_keys row changes; the payload is
 * its key_hash, or `*`.
 */
export const API_KEY_CHANNEL = 'api_key_changed';

/**
 * API keys resolved in process memory (AUTH-12): in the steady state an API request costs no database round trip
 * for its key. Entries (found and not-found alike) live `ttlMs` at most; a revocation — any change to an api_keys
 * row — reaches every process at commit through LISTEN/NOTIFY ({@link NotifiedCache}) and the entry is dropped at
 * once; while the notifications are not heard nothing is cached. At most `maxEntries` entries are kept (the oldest
 * go first), so random keys sent by strangers cannot grow it without bound.
 */
export class ApiKeyCache {
  private readonly cache: NotifiedCache<CachedKey>;
  private readonly unchecked: UncheckedKeyHashes;

  /**
   * @param pool the HTTP pool: its connection settings are used for the listening connection, and it serves misses.
   * @param ttlMs longest life of an entry, ms; 0 turns the cache off (every request reads its key).
   */
  constructor(
    private readonly pool: pg.Pool,
    ttlMs: number,
    log: Pick<Logger, 'warn'>,
    maxEntries = 10_000,
    reconnectMs = 1000,
  ) {
    this.unchecked = new UncheckedKeyHashes(pool, () => this.cache.isListening);
    this.cache = new NotifiedCache<CachedKey>({
      pool,
      channel: API_KEY_CHANNEL,
      ttlMs,
      log,
      what: 'API key',
      maxEntries,
      reconnectMs,
      // A '*' may announce a key issued without a checksum (migration 104), or changes missed: read them again.
      onChange: (key) => {
        if (key === '*') this.unchecked.invalidate();
      },
    });
  }

  /** The active key of `keyHash` (SHA-256 hex of the key), from memory when known, else from the database. */
  find(keyHash: string, now = Date.now()): Promise<CachedKey> {
    return this.cache.get(keyHash, () => findActiveKeyByHash(this.pool, keyHash), now);
  }

  /**
   * Whether a key of AUTH-1's shape WITHOUT a valid checksum may be looked up: only when `keyHash` is the hash of an
   * active key issued before keys carried one (AUTH-3). Answered from memory ({@link UncheckedKeyHashes}).
   */
  isUncheckedKey(keyHash: string, now = Date.now()): Promise<boolean> {
    return this.unchecked.has(keyHash, now);
  }

  /** Drops one key's entry, and keeps a read under way from storing it. */
  forget(keyHash: string): void {
    this.cache.forget(keyHash);
  }

  /** Opens the listening connection (no-op when the cache is off). Resolves once listening or after the first failure. */
  async start(): Promise<void> {
    running.add(this);
    await this.cache.start();
  }

  /** Closes the listening connection; the cache is off from then on. */
  async stop(): Promise<void> {
    running.delete(this);
    await this.cache.stop();
  }

  /** True while changes are being heard (entries are served only then). */
  get isListening(): boolean {
    return this.cache.isListening;
  }
}

import pg from 'pg';
import type { Logger } from 'pino';
import type { Tenant } from '../../context.js';
import { listenOn } from '../../lib/db.js';
import { API_KEY_CHANNEL } from '../organizations/api-key-cache.js';
import { StreamTenants } from './stream-tenants.js';

/** The channel signalled after events commit (eventsWritten): payload 'org_…:live,org_…:test' or '*'. */
export const EVENTS_CHANNEL = 'events_inserted';

/** How long to wait before opening the LISTEN connection again after it broke (ms). */
const RECONNECT_DELAY_MS = 1000;
/**
 * How long after a tenant's first stream is recorded its streams look once more (ms): a placement statement that
 * started before the record was committed did not see it and sends no wake-up (OPS-6); it has committed by then.
 */
const SETTLE_MS = 1000;

/** A woken subscriber looks for new rows itself; the hub only says "something may have changed". */
type Wake = () => void;

/** Told the SHA-256 hex of an API key whose row changed, or '*' when any may have changed unheard (EVT-9). */
type KeyChanged = (keyHash: string) => void;

/**
 * One LISTEN connection per process for every open event stream. A notification wakes the streams of the
 * tenants it names; the streams then read the rows themselves, so a lost notification costs latency, never an
 * event. The same connection hears changes to API keys (`api_key_changed`) and passes them to `keyChanged`, so the
 * streams of a revoked key end (EVT-9). When the connection breaks, every stream is woken (it may have missed
 * notifications) and the connection is opened again while anyone listens; once it is open again every key is looked
 * up anew. The connection is opened on the first subscriber only: a process that serves no stream holds no extra
 * database connection.
 */
export class EventStreamHub {
  private readonly subscribers = new Map<string, Set<Wake>>();
  private client: pg.Client | null = null;
  private connecting: Promise<void> | null = null;
  private retry: NodeJS.Timeout | null = null;
  private closed = false;
  private readonly streamed: StreamTenants;

  /**
   * @param pool the service's pool: its connection settings are the LISTEN connection's, and it records the tenants
   * streamed (OPS-6).
   * @param keyChanged told of every change to an API key heard, and '*' whenever the connection (re)opens (EVT-9).
   */
  constructor(
    private readonly pool: pg.Pool,
    private readonly log: Logger,
    private readonly keyChanged: KeyChanged,
  ) {
    this.streamed = new StreamTenants(pool, log);
  }

  /** Number of subscribed streams (all tenants). */
  get size(): number {
    let n = 0;
    for (const set of this.subscribers.values()) n += set.size;
    return n;
  }

  /**
   * Calls `wake` whenever events of `tenant` may have been committed. Resolves once the LISTEN connection is up and
   * the tenant is recorded as streamed (OPS-6), so rows committed after that are always followed by a wake; rows of a
   * placement that was running meanwhile, by the wake SETTLE_MS later. @returns the function that unsubscribes.
   */
  async subscribe(tenant: Tenant, wake: Wake): Promise<() => void> {
    const key = tenantKey(tenant);
    const first = !this.subscribers.has(key);
    const set = this.subscribers.get(key) ?? new Set<Wake>();
    set.add(wake);
    this.subscribers.set(key, set);
    if (first) await this.streamed.add(key, tenant);
    setTimeout(wake, SETTLE_MS).unref();
    await this.ensureListening().catch((err) =>
      this.log.warn({ err }, 'event stream LISTEN connection failed; retrying'),
    );
    return () => {
      set.delete(wake);
      if (!set.size && this.subscribers.get(key) === set) {
        this.subscribers.delete(key);
        this.streamed.remove(key);
      }
      if (!this.size) this.stopListening();
    };
  }

  /** Ends the LISTEN connection and forgets every subscriber (at server close). */
  async close(): Promise<void> {
    this.closed = true;
    this.subscribers.clear();
    this.stopListening();
    await this.streamed.close();
  }

  private ensureListening(): Promise<void> {
    if (this.client || this.closed) return Promise.resolve();
    this.connecting ??= this.connect().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  private async connect(): Promise<void> {
    const client = new pg.Client(this.pool.options as pg.ClientConfig);
    client.on('notification', (msg) =>
      msg.channel === API_KEY_CHANNEL ? this.keyChanged(msg.payload || '*') : this.notify(msg.payload ?? '*'),
    );
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client, null));
    try {
      await client.connect();
      await listenOn(client, [EVENTS_CHANNEL, API_KEY_CHANNEL]);
    } catch (err) {
      client.end().catch(() => undefined);
      this.scheduleReconnect();
      throw err;
    }
    if (this.closed || !this.size) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    // Rows may have committed, and keys changed, while no connection listened: every stream looks again.
    this.wakeAll();
    this.keyChanged('*');
  }

  private notify(payload: string): void {
    if (payload === '*') {
      this.wakeAll();
      return;
    }
    for (const key of payload.split(',')) for (const wake of this.subscribers.get(key) ?? []) wake();
  }

  private wakeAll(): void {
    for (const set of this.subscribers.values()) for (const wake of set) wake();
  }

  private lost(client: pg.Client, err: Error | null): void {
    if (this.client !== client) return;
    this.client = null;
    if (err) this.log.warn({ err }, 'event stream LISTEN connection lost; reconnecting');
    client.end().catch(() => undefined);
    this.wakeAll();
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.retry || this.closed || !this.size) return;
    this.retry = setTimeout(() => {
      this.retry = null;
      this.ensureListening().catch(() => undefined);
    }, RECONNECT_DELAY_MS);
    this.retry.unref();
  }

  private stopListening(): void {
    if (this.retry) clearTimeout(this.retry);
    this.retry = null;
    const client = this.client;
    this.client = null;
    client?.end().catch(() => undefined);
  }
}

/** The notification's name of a tenant: 'org_…:live' (the payload parts of {@link EVENTS_CHANNEL}). */
export function tenantKey(tenant: Tenant): string {
  return `${tenant.organizationId}:${tenant.environment}`;
}

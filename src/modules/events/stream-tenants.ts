import { randomBytes } from 'node:crypto';
import os from 'node:os';
import type pg from 'pg';
import type { Logger } from 'pino';
import type { Tenant } from '../../context.js';
import { dropStreamTenants, keepStreamTenants } from './event-stream.repo.js';

/*
 * The tenants this process streams, as rows of `event_stream_tenants` (OPS-6): the order placement reads them to
 * decide whether its commit must wake the event streams. A row is written before the tenant's first stream starts
 * reading, pushed back every REFRESH_MS while a stream of the tenant is open, and removed when the last one closes;
 * one whose process went away without removing it lapses TTL_SECONDS after its last refresh.
 */

/** How often the rows of the tenants still streamed are pushed back (ms). */
const REFRESH_MS = 10_000;
/** How long a row outlives its last refresh (seconds): three refreshes may fail before other processes stop waking. */
const TTL_SECONDS = 30;

/** The stream tenants of one process (one per event stream hub). */
export class StreamTenants {
  /** Tells this process's rows from another's, so that each keeps and removes its own. */
  private readonly hubId = `${os.hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private readonly tenants = new Map<string, Tenant>();
  private timer: NodeJS.Timeout | null = null;

  /** @param timing how often rows are pushed back (ms) and how long one outlives its last refresh (s); tests shorten them. */
  constructor(
    private readonly db: pg.Pool,
    private readonly log: Logger,
    private readonly timing = { refreshMs: REFRESH_MS, ttlSeconds: TTL_SECONDS },
  ) {}

  /**
   * Records that this process streams `tenant` under `key`; resolves once the row is committed, so a placement
   * statement that starts afterwards wakes the streams. Never throws: a failure is logged and the row is written
   * again at the next refresh (meanwhile the streams still look at every heartbeat).
   */
  async add(key: string, tenant: Tenant): Promise<void> {
    this.tenants.set(key, tenant);
    if (!this.timer) {
      this.timer = setInterval(() => void this.refresh(), this.timing.refreshMs);
      this.timer.unref();
    }
    await keepStreamTenants(this.db, this.hubId, [tenant], this.timing.ttlSeconds).catch((err: unknown) =>
      this.log.warn({ err }, 'could not record a streamed tenant; trying again at the next refresh'),
    );
  }

  /** Forgets `key`'s tenant (its last stream closed) and removes its row, without waiting for it. */
  remove(key: string): void {
    const tenant = this.tenants.get(key);
    if (!tenant) return;
    this.tenants.delete(key);
    if (!this.tenants.size) this.stopRefreshing();
    dropStreamTenants(this.db, this.hubId, [tenant]).catch(() => undefined); // lapses by itself otherwise
  }

  /** Removes every row of this process (server shutdown). Never throws. */
  async close(): Promise<void> {
    this.stopRefreshing();
    this.tenants.clear();
    await dropStreamTenants(this.db, this.hubId, null).catch(() => undefined);
  }

  private async refresh(): Promise<void> {
    if (!this.tenants.size) return;
    await keepStreamTenants(this.db, this.hubId, [...this.tenants.values()], this.timing.ttlSeconds).catch(
      (err: unknown) =>
        this.log.warn({ err }, 'could not refresh the streamed tenants; trying again at the next refresh'),
    );
  }

  private stopRefreshing(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}

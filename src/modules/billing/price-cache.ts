import type pg from 'pg';
import type { Logger } from 'pino';
import type { Tenant } from '../../lib/tenant.js';
import { onCommit } from '../../lib/commit-signals.js';
import type { Db } from '../../lib/db.js';
import { NotifiedCache } from '../../lib/notified-cache.js';
import { findStateFees, loadTenantPriceMap, type ProductType, type StateFeeRow, type TenantPrice } from './pricing.js';

/**
 * The channel the triggers of migrations/repeatable/notify_pricing_changed.sql notify on any change to prices or state
 * fees (payload '*').
 */
const PRICING_CHANNEL = 'pricing_changed';

/** Longest life of a cached price or fee row, ms: a safety net only, changes are heard at once (BILL-19). */
const PRICE_CACHE_TTL_MS = 60_000;

/** Every started cache of this process. */
const running = new Set<PriceCache>();

/**
 * Marks the caller's transaction as changing prices or state fees: once it commits, every cache of this process
 * forgets what it holds, before this process answers anything else (the other processes hear the triggers' NOTIFY).
 */
export function pricesChanged(tx: Db): void {
  onCommit(tx, () => {
    for (const cache of running) cache.forgetAll();
  });
}

/** A tenant's prices keyed by product type, and the fee row of a state (null: none), all amounts in cents. */
export interface PriceInputs {
  prices: Record<ProductType, TenantPrice>;
  fees: StateFeeRow | null;
}

/**
 * A tenant's prices and the state fee schedule kept in process memory (BILL-19), so quoting and placing an order
 * read no price or fee from the database in the steady state. Any change to the price catalogue, an organization's
 * wholesale or retail prices, or a state's fees drops every entry of every process at commit (NOTIFY from the
 * tables' triggers; at once in the process that made the change). Values are shared: callers must not change them.
 */
export class PriceCache {
  private readonly cache: NotifiedCache<unknown>;

  /** @param pool serves misses; its connection settings are used for the listening connection. */
  constructor(
    private readonly pool: pg.Pool,
    log: Pick<Logger, 'warn'>,
  ) {
    this.cache = new NotifiedCache({ pool, channel: PRICING_CHANNEL, ttlMs: PRICE_CACHE_TTL_MS, log, what: 'Price' });
  }

  /** The tenant's prices and the fees of `state` (two-letter code, any case). */
  async inputs(tenant: Tenant, state: string): Promise<PriceInputs> {
    const code = state.toUpperCase();
    const [prices, fees] = await Promise.all([
      this.cache.get(`prices:${tenant.organizationId}:${tenant.environment}`, () =>
        loadTenantPriceMap(this.pool, tenant),
      ),
      this.cache.get(`fees:${code}`, () => findStateFees(this.pool, code)),
    ]);
    return { prices: prices as PriceInputs['prices'], fees: fees as StateFeeRow | null };
  }

  /** Drops every entry. */
  forgetAll(): void {
    this.cache.forget('*');
  }

  /** Starts hearing changes (entries are kept only while it does). */
  async start(): Promise<void> {
    running.add(this);
    await this.cache.start();
  }

  /** Stops hearing changes; every read goes to the database from then on. */
  async stop(): Promise<void> {
    running.delete(this);
    await this.cache.stop();
  }
}

/**
 * The prices and fees a quote or placement needs: from `cache` when the process has one (the HTTP server does),
 * else read now (CLI, jobs, tests that build services without the app).
 */
export async function loadPriceInputs(
  db: Db,
  cache: PriceCache | undefined,
  tenant: Tenant,
  state: string,
): Promise<PriceInputs> {
  if (cache) return cache.inputs(tenant, state);
  const [prices, fees] = await Promise.all([loadTenantPriceMap(db, tenant), findStateFees(db, state)]);
  return { prices, fees };
}

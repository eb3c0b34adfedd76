import type pg from 'pg';
import type { Logger } from 'pino';
import type { Config } from './config-types.js';
import type { Keyring } from './lib/secret-box.js';
import type { Environment } from './lib/tenant.js';
import type { PriceCache } from './modules/billing/price-cache.js';

/**
 * What every route plugin, service and task is handed: configuration, the database pool and a logger.
 * Passed explicitly: there is no dependency-injection container (docs/architecture.md, "Code layout").
 */
export interface AppContext {
  config: Config;
  pool: pg.Pool;
  log: Logger;
  /** Secrets resolved at boot (generated and kept in DATA_DIR when not configured). */
  secrets: {
    operatorToken: string;
    fileUrlSecret: string;
    /** Seals webhook signing secrets at rest (SEC-2): DATA_ENCRYPTION_KEY (+ _PREVIOUS), or the key kept in DATA_DIR. */
    dataKeys: Keyring;
  };
  /**
   * Looks up the TXT records of a DNS name (each record as its character-strings), as `dns.promises.resolveTxt`
   * does; white-label domains are verified through it. Unset: the system resolver. Tests put a fake here.
   */
  resolveTxt?: (name: string) => Promise<string[][]>;
  /** Prices and state fees kept in memory (BILL-19); set by the HTTP app. Unset: read from the database each time. */
  prices?: PriceCache;
}

export type { Environment, Tenant } from './lib/tenant.js';

/** Options every integrator route plugin receives: the context and the environment it is mounted for. */
export interface ApiPluginOptions {
  ctx: AppContext;
  environment: Environment;
}

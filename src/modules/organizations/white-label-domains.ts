import type pg from 'pg';
import type { Logger } from 'pino';
import { NotifiedCache } from '../../lib/notified-cache.js';
import { findVerifiedDomainOwner, listVerifiedDomains } from './organizations.repo.js';

/**
 * The channel of migrations/repeatable/notify_white_label_domains_changed.sql: an organization's verified white-label
 * domain may have changed.
 */
const WHITE_LABEL_DOMAINS_CHANNEL = 'white_label_domains_changed';

/** Longest life of the domain list in memory, ms: a safety net only, changes are heard at once (ORG-6). */
const DOMAINS_TTL_MS = 60_000;

/** The one entry of the cache: every verified domain at once. */
const ALL = 'verified';

declare module 'fastify' {
  interface FastifyInstance {
    /** The verified white-label domains in memory (ORG-6); built, started and stopped by buildApp. */
    whiteLabelDomains: WhiteLabelDomains;
  }
}

/** Every started list of this process (one per app instance). */
const running = new Set<WhiteLabelDomains>();

/**
 * Drops the domain list of every app of this process, so a domain verified, changed or taken out of use here is
 * seen by this process's next request even before the NOTIFY of its commit comes back. Call it after the commit.
 */
export function forgetWhiteLabelDomainsInProcess(): void {
  for (const domains of running) domains.forget();
}

/**
 * The verified white-label domains, all kept in process memory (DASH-1, ORG-6): they are few, so a request to a
 * host that is neither ours nor a verified domain is answered without a database round trip. Any change to an
 * organization's verified domain reaches every process at commit through LISTEN/NOTIFY ({@link NotifiedCache}) and
 * the list is read again at the next request; while the notifications are not heard, each request asks the
 * database for its own host instead (one indexed look-up), so a stale list is never served.
 */
export class WhiteLabelDomains {
  private readonly cache: NotifiedCache<Map<string, string>>;

  /** @param pool serves the reads; its connection settings are used for the listening connection. */
  constructor(
    private readonly pool: pg.Pool,
    log: Pick<Logger, 'warn'>,
    reconnectMs = 1000,
  ) {
    this.cache = new NotifiedCache({
      pool,
      channel: WHITE_LABEL_DOMAINS_CHANNEL,
      ttlMs: DOMAINS_TTL_MS,
      log,
      what: 'White-label domain',
      reconnectMs,
    });
  }

  /** The id of the organization whose verified domain `hostname` (lower case, no port) is, or null. */
  async organizationOf(hostname: string): Promise<string | null> {
    if (!this.cache.isListening) return findVerifiedDomainOwner(this.pool, hostname);
    const domains = await this.cache.get(ALL, () => listVerifiedDomains(this.pool));
    return domains.get(hostname) ?? null;
  }

  /** Drops the list, and keeps a read under way from storing what it read. */
  forget(): void {
    this.cache.forget('*');
  }

  /** Starts hearing changes (the list is kept only while it does). */
  async start(): Promise<void> {
    running.add(this);
    await this.cache.start();
  }

  /** Stops hearing changes; every request asks the database from then on. */
  async stop(): Promise<void> {
    running.delete(this);
    await this.cache.stop();
  }
}

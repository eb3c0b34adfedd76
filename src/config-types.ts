import type { DataKey } from './lib/secret-box.js';
import type { TrustProxy } from './lib/proxy-trust.js';

/**
 * Request limits per window of `windowSeconds` (fixed windows shared by every process through PostgreSQL;
 * see src/modules/rate-limits/shared-counters.ts for the sync and its tolerance).
 */
export interface RateLimitConfig {
  windowSeconds: number;
  /** Per API key, every integrator route (RATE_LIMIT_API_REQUESTS, default 1200). */
  apiRequests: number;
  /** Per client address, the admin API (RATE_LIMIT_ADMIN_REQUESTS, default 300). */
  adminRequests: number;
  /** Per client address, failed operator-token checks; beyond it the admin API answers 429 without checking (default 10). */
  adminAuthFailures: number;
  /**
   * Per client address, failed authentications on the integrator API (401s) and failed dashboard and console session
   * cookies, counted together; beyond it those requests answer 429 before any look-up (RATE_LIMIT_AUTH_FAILURES,
   * default 20; AUTH-14).
   */
  authFailures: number;
  /** Per dashboard session, signed-in dashboard requests (RATE_LIMIT_DASHBOARD_REQUESTS, default 120; AUTH-6). */
  dashboardRequests: number;
  /** Per client address, console sign-in attempts (RATE_LIMIT_SIGN_IN_ATTEMPTS, default 10). */
  signInAttempts: number;
  /** Per client address, magic links opened (RATE_LIMIT_MAGIC_LINK_OPENS, default 30). */
  magicLinkOpens: number;
  /** ms between two syncs of the counters with PostgreSQL (RATE_LIMIT_SYNC_MS, default 250). */
  syncMs: number;
  /** Per tenant (organization and environment), POST /webhook-endpoints/{id}/test per minute (RATE_LIMIT_WEBHOOK_TESTS, default 10). */
  webhookTestsPerMinute: number;
  /** Per tenant, POST /webhook-deliveries/{id}/resend per minute (RATE_LIMIT_WEBHOOK_RESENDS, default 60). */
  webhookResendsPerMinute: number;
}

/** An S3-compatible bucket for document files (OPS-25). */
export interface ObjectStorageConfig {
  bucket: string;
  /** Prepended to every key: empty, or ending in `/`. */
  prefix: string;
  /** S3_ENDPOINT without a trailing slash; null: AWS S3 in `region`. */
  endpoint: string | null;
  region: string;
  forcePathStyle: boolean;
  /** From AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (/ AWS_SESSION_TOKEN); null: the AWS SDK's default chain. */
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string } | null;
}

/** The validated, typed configuration. Durations carry their unit in the name. */
export interface Config {
  port: number;
  host: string;
  /** null: start the embedded PostgreSQL from node_modules with its data in `dataDir/pg`. */
  databaseUrl: string | null;
  /** null: generated on first start and kept in `dataDir/operator-token`. */
  operatorToken: string | null;
  liveBaseUrl: string;
  testBaseUrl: string;
  dashboardBaseUrl: string;
  consoleBaseUrl: string;
  /** The partner portal's public address (PORTAL_BASE_URL, PORTAL-1): invitation and reset links start with it. */
  portalBaseUrl: string;
  logLevel: string;
  dataDir: string;
  /** Where document files live on the local disk (STORAGE_DIR, default `dataDir/files`) when objectStorage is null. */
  storageDir: string;
  /** Documents in S3-compatible object storage (STORAGE_URL, OPS-25); null: on the local disk under storageDir. */
  objectStorage: ObjectStorageConfig | null;
  /** null: generated once and kept in `dataDir/file-url-secret`. */
  fileUrlSecret: string | null;
  /**
   * Seals webhook signing secrets at rest (DATA_ENCRYPTION_KEY, SEC-2). null only on the embedded default: then
   * generated once into `dataDir/data-encryption-key` (mode 0600). Required whenever DATABASE_URL is set.
   */
  dataEncryptionKey: DataKey | null;
  /** Older keys that still open values sealed before a rotation (DATA_ENCRYPTION_KEY_PREVIOUS, comma-separated). */
  dataEncryptionKeysPrevious: DataKey[];
  smtpUrl: string | null;
  emailFrom: string;
  webhookTimeoutMs: number;
  /** Delay before each retry, in seconds (WH-5; the public API leaves retries open). */
  webhookRetryScheduleSeconds: number[];
  webhookDisableAfterHours: number;
  webhookAllowPrivateNetworks: boolean;
  /** Webhook endpoints (not deleted) one tenant may have (WEBHOOK_ENDPOINTS_MAX, default 20; SEC-4). */
  webhookEndpointsMax: number;
  workerConcurrency: number;
  /** Webhook attempts in flight at once in one worker process, all endpoints together (WEBHOOK_CONCURRENCY, default 100; WH-17). */
  webhookConcurrency: number;
  /** Webhook attempts in flight at once to one endpoint from one worker process (WEBHOOK_ENDPOINT_CONCURRENCY, default 10; WH-17). */
  webhookEndpointConcurrency: number;
  /**
   * Webhook attempts in flight at once for one organization (all its endpoints, both environments) from one worker
   * process (WEBHOOK_ORGANIZATION_CONCURRENCY, default a quarter of WEBHOOK_CONCURRENCY, at least 1; WH-17).
   */
  webhookOrganizationConcurrency: number;
  /** ms a claimed delivery stays with the claiming process without a renewal; a dead process's rows return after it (WEBHOOK_LEASE_MS, default 5000; WH-16). */
  webhookLeaseMs: number;
  /**
   * The proxies trusted to report the client (TRUST_PROXY, default `false`; SEC-8, LIM-8): a hop count or their addresses.
   * The client address is the first untrusted hop from the right of X-Forwarded-For; X-Forwarded-Proto/-Host count
   * only when the socket's peer is a trusted proxy.
   */
  trustProxy: TrustProxy;
  embeddedPgPort: number;
  /**
   * The role whose rights both pools have (DATABASE_SERVICE_ROLE, default `fcs_service`; SEC-3): rows only, no schema
   * changes, the append-only records insert-only, balances moved only by the ledger's functions. null (`none`): the
   * pools connect with DATABASE_URL itself and have its user's own rights. Migrations always run as that user.
   */
  databaseServiceRole: string | null;
  /**
   * The login role both pools connect as (DATABASE_APP_ROLE, default `fcs_app`; SEC-3): a member of
   * databaseServiceRole and of nothing else, so no statement can take the pools back to the owner's rights. They
   * connect to DATABASE_URL's server and database with this user name. Unused when databaseServiceRole is null.
   */
  databaseAppRole: string;
  /**
   * The login role's password (DATABASE_APP_PASSWORD; SEC-3). null: on the embedded database one generated into
   * `DATA_DIR/database-app-password`; with DATABASE_URL none is sent (a server that trusts the login, such as a
   * development machine's).
   */
  databaseAppPassword: string | null;
  /** Connections of the pool that serves HTTP requests (DATABASE_POOL_SIZE, default 10). */
  databasePoolSize: number;
  /**
   * Longest life of an API key kept in a process's memory, in seconds (API_KEY_CACHE_SECONDS, default 60; 0: every
   * request reads its key). Revocations reach every process at once through LISTEN/NOTIFY whatever this is.
   */
  apiKeyCacheSeconds: number;
  /** Connections of the pool of background work: webhook deliveries, jobs, sweeps (WORKER_DATABASE_POOL_SIZE, default 10). */
  workerDatabasePoolSize: number;
  /** null: metrics only at GET /metrics behind the operator token; a port: also served there without authentication. */
  metricsPort: number | null;
  /**
   * The address the METRICS_PORT listener binds to (METRICS_HOST, default 127.0.0.1: this machine only, whatever HOST
   * says), since it serves without authentication.
   */
  metricsHost: string;
  /** Whether the HTTP server process also runs the background worker (START_WORKER, default true). */
  startWorker: boolean;
  /** How long SIGTERM/SIGINT wait for in-flight requests and running jobs before cutting them, in ms (default 10000). */
  shutdownTimeoutMs: number;
  /**
   * Days an EIN order's sealed tax id is kept after the order is filed or cancelled, then destroyed by the daily
   * maintenance job or `cli orders purge-tax-ids` (TAX_ID_RETENTION_DAYS, default 30, 0 to 9999; ORD-EIN-9).
   */
  taxIdRetentionDays: number;
  /** Longest time to receive a whole request, body included, in ms (default 30000); the client then gets 408. */
  httpRequestTimeoutMs: number;
  /** Longest time to receive a request's headers, in ms (default 10000; at most httpRequestTimeoutMs). */
  httpHeadersTimeoutMs: number;
  /**
   * How long an idle keep-alive connection stays open, in ms (default 65000: longer than the 60 s idle timeout of
   * common load balancers, so the proxy, not the service, closes idle connections and never reuses a closed one).
   */
  httpKeepAliveTimeoutMs: number;
  /**
   * Longest silence while a request's body is being read, in ms (HTTP_BODY_IDLE_TIMEOUT_MS, default 5000): a body
   * that stops arriving for this long is answered 408 and its connection closed, so a stalled client is answered well
   * within the 15 s of OPS-7 instead of at HTTP_REQUEST_TIMEOUT_MS.
   */
  httpBodyIdleTimeoutMs: number;
  /**
   * Longest wait for a database connection (a new one, or a free one from the pool), in ms (default 5000). While the
   * database is down, requests fail with 503 within this time instead of hanging.
   */
  databaseConnectTimeoutMs: number;
  /** Concurrent GET /events/stream connections one API key may hold per server process (EVENT_STREAM_MAX_PER_KEY, default 5). */
  eventStreamMaxPerKey: number;
  /** Seconds between keep-alive comments on an idle event stream, which also re-check for missed events (default 15). */
  eventStreamHeartbeatSeconds: number;
  rateLimits: RateLimitConfig;
  /**
   * Console password hashes computed at once (argon2id, 46 MiB and tens of ms each; PASSWORD_HASH_CONCURRENCY,
   * default 2); with two or more, one of them is kept for sign-ins from clean addresses (AUTH-8).
   */
  passwordHashConcurrency: number;
  /**
   * Sign-ins that may wait for a password check (PASSWORD_HASH_QUEUE, default 8); up to `passwordHashHeld` more are
   * held beyond them, all in one line, clean addresses first (AUTH-8).
   */
  passwordHashQueue: number;
  /**
   * Longest a sign-in waits for its password check to start (ms; PASSWORD_HASH_HOLD_MS, default 2500; one from an
   * address that is not clean, a random time between half and all of it), and never so long that its check could not
   * end within SIGN_IN_ANSWER_MS (4 s) of its arrival; then 503. 0: a sign-in that cannot start at once is refused
   * (AUTH-8).
   */
  passwordHashHoldMs: number;
  /**
   * Longest a console sign-in takes from its arrival to its answer (ms; SIGN_IN_ANSWER_MS, default 4000): one whose
   * password check has not ended by then is answered 503. The default keeps every answer within the 5 s promised to
   * clients, leaving a second for a busy event loop and the network (AUTH-8).
   */
  signInAnswerMs: number;
  /** Sign-ins held beyond the queue at most; with the line full the last in it is refused with 503 (PASSWORD_HASH_HELD, default 1000). */
  passwordHashHeld: number;
  /**
   * Share of one core's time (percent, 1-100) password checks may take (PASSWORD_HASH_CPU_PERCENT, default 10), over
   * windows of 20 s: checks run back to back until they used that share of 20 s beyond it, then at that share; the
   * second half of the allowance is kept for sign-ins from clean addresses. It keeps hashing's CPU and memory traffic
   * (tens of MiB streamed per hash, which slows every process sharing the caches) to this share of a core (AUTH-8).
   */
  passwordHashCpuPercent: number;
  /**
   * Live card payments at dashboard checkout (PAY-1): the Stripe secret key, the webhook signing secret and the API
   * address (STRIPE_API_BASE_URL, default https://api.stripe.com). null when STRIPE_SECRET_KEY and
   * STRIPE_WEBHOOK_SECRET are not both set: live customer-billed checkout then says card payment is unavailable.
   */
  stripe: { secretKey: string; webhookSecret: string; apiBaseUrl: string } | null;
  /** Smallest and largest amount of one balance top-up, in cents (TOP_UP_MIN / TOP_UP_MAX in dollars, 10 and 50000; FUND-3). */
  topUps: { minCents: number; maxCents: number };
}

import path from 'node:path';
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { rememberSecrets } from './lib/logger.js';
import { parseDataKey, type DataKey } from './lib/secret-box.js';

const Bool = Type.Union([Type.Literal('true'), Type.Literal('false')]);
const Int = Type.String({ pattern: '^[0-9]+$' });

/** Environment variables the service reads; every one is optional and has a documented default. */
const EnvSchema = Type.Object({
  PORT: Type.Optional(Int),
  HOST: Type.Optional(Type.String({ minLength: 1 })),
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  // At least MIN_OPERATOR_TOKEN_LENGTH characters (checked below with a message of its own).
  OPERATOR_TOKEN: Type.Optional(Type.String({ minLength: 1 })),
  LIVE_BASE_URL: Type.Optional(Type.String({ pattern: '^https?://' })),
  TEST_BASE_URL: Type.Optional(Type.String({ pattern: '^https?://' })),
  DASHBOARD_BASE_URL: Type.Optional(Type.String({ pattern: '^https?://' })),
  CONSOLE_BASE_URL: Type.Optional(Type.String({ pattern: '^https?://' })),
  LOG_LEVEL: Type.Optional(
    Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l))),
  ),
  DATA_DIR: Type.Optional(Type.String({ minLength: 1 })),
  STORAGE_DIR: Type.Optional(Type.String({ minLength: 1 })),
  FILE_URL_SECRET: Type.Optional(Type.String({ minLength: 16 })),
  // 32 bytes as base64 or hex; checked below with a message of its own (SEC-2).
  DATA_ENCRYPTION_KEY: Type.Optional(Type.String({ minLength: 1 })),
  // Comma-separated keys that may still open older sealed values during a key rotation.
  DATA_ENCRYPTION_KEY_PREVIOUS: Type.Optional(Type.String({ minLength: 1 })),
  SMTP_URL: Type.Optional(Type.String({ pattern: '^smtps?://' })),
  EMAIL_FROM: Type.Optional(Type.String({ minLength: 3 })),
  WEBHOOK_TIMEOUT_MS: Type.Optional(Int),
  // Seconds, comma-separated; fractions (0.5) and spaces after commas are accepted.
  WEBHOOK_RETRY_SCHEDULE: Type.Optional(
    Type.String({ pattern: '^\\s*[0-9]+(\\.[0-9]+)?(\\s*,\\s*[0-9]+(\\.[0-9]+)?)*\\s*$' }),
  ),
  WEBHOOK_DISABLE_AFTER_HOURS: Type.Optional(Type.String({ pattern: '^[0-9]+(\\.[0-9]+)?$' })),
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: Type.Optional(Bool),
  WORKER_CONCURRENCY: Type.Optional(Int),
  WEBHOOK_CONCURRENCY: Type.Optional(Type.String({ pattern: '^[1-9][0-9]*$' })),
  WEBHOOK_ENDPOINT_CONCURRENCY: Type.Optional(Type.String({ pattern: '^[1-9][0-9]*$' })),
  WEBHOOK_LEASE_MS: Type.Optional(Type.String({ pattern: '^[1-9][0-9]*$' })),
  TRUST_PROXY: Type.Optional(Bool),
  EMBEDDED_PG_PORT: Type.Optional(Int),
  // The role the pools act as (SEC-3): fcs_service (created by the migrations), another existing role, or none.
  DATABASE_SERVICE_ROLE: Type.Optional(Type.String({ pattern: '^[a-z_][a-z0-9_]{0,62}$' })),
  DATABASE_POOL_SIZE: Type.Optional(Type.String({ pattern: '^[1-9][0-9]*$' })),
  API_KEY_CACHE_SECONDS: Type.Optional(Type.String({ pattern: '^[0-9]+$' })),
  WORKER_DATABASE_POOL_SIZE: Type.Optional(Type.String({ pattern: '^[1-9][0-9]*$' })),
  METRICS_PORT: Type.Optional(Int),
  SHUTDOWN_TIMEOUT_MS: Type.Optional(Int),
  START_WORKER: Type.Optional(Bool),
  HTTP_REQUEST_TIMEOUT_MS: Type.Optional(Type.String({ pattern: '^[1-9][0-9]*$' })),
  HTTP_HEADERS_TIMEOUT_MS: Type.Optional(Type.String({ pattern: '^[1-9][0-9]*$' })),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: Type.Optional(Type.String({ pattern: '^[1-9][0-9]*$' })),
  DATABASE_CONNECT_TIMEOUT_MS: Type.Optional(Type.String({ pattern: '^[1-9][0-9]*$' })),
  EVENT_STREAM_MAX_PER_KEY: Type.Optional(Type.String({ pattern: '^[1-9][0-9]*$' })),
  EVENT_STREAM_HEARTBEAT_SECONDS: Type.Optional(Type.String({ pattern: '^[0-9]+(\\.[0-9]+)?$' })),
  RATE_LIMIT_WINDOW_SECONDS: Type.Optional(Type.String({ pattern: '^[1-9][0-9]*$' })),
  RATE_LIMIT_API_REQUESTS: Type.Optional(Type.String({ pattern: '^[1-9][0-9]*$' })),
  RATE_LIMIT_ADMIN_REQUESTS: Type.Optional(Type.String({ pattern: '^[1-9][0-9]*$' })),
  RATE_LIMIT_ADMIN_AUTH_FAILURES: Type.Optional(Type.String({ pattern: '^[1-9][0-9]*$' })),
  RATE_LIMIT_SIGN_IN_ATTEMPTS: Type.Optional(Type.String({ pattern: '^[1-9][0-9]*$' })),
  RATE_LIMIT_MAGIC_LINK_OPENS: Type.Optional(Type.String({ pattern: '^[1-9][0-9]*$' })),
  RATE_LIMIT_SYNC_MS: Type.Optional(Type.String({ pattern: '^[1-9][0-9]*$' })),
  WEBHOOK_ENDPOINTS_MAX: Type.Optional(Type.String({ pattern: '^[1-9][0-9]*$' })),
  RATE_LIMIT_WEBHOOK_TESTS: Type.Optional(Type.String({ pattern: '^[1-9][0-9]*$' })),
  RATE_LIMIT_WEBHOOK_RESENDS: Type.Optional(Type.String({ pattern: '^[1-9][0-9]*$' })),
  PASSWORD_HASH_CONCURRENCY: Type.Optional(Type.String({ pattern: '^[1-9][0-9]*$' })),
  PASSWORD_HASH_QUEUE: Type.Optional(Int),
  PASSWORD_HASH_CPU_PERCENT: Type.Optional(Type.String({ pattern: '^([1-9][0-9]?|100)$' })),
  STRIPE_SECRET_KEY: Type.Optional(Type.String({ pattern: '^(sk|rk)_(live|test)_[A-Za-z0-9_]{8,}$' })),
  STRIPE_WEBHOOK_SECRET: Type.Optional(Type.String({ pattern: '^whsec_[A-Za-z0-9_+/=]{8,}$' })),
  STRIPE_API_BASE_URL: Type.Optional(Type.String({ pattern: '^https?://[^/?#]+/?$' })),
});

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
  logLevel: string;
  dataDir: string;
  storageDir: string;
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
  /** ms a claimed delivery stays with the claiming process without a renewal; a dead process's rows return after it (WEBHOOK_LEASE_MS, default 5000; WH-16). */
  webhookLeaseMs: number;
  /** Honour X-Forwarded-For/-Proto/-Host (set it only behind a proxy that overwrites them): client IPs, https, hosts. */
  trustProxy: boolean;
  embeddedPgPort: number;
  /**
   * The role both pools act as (DATABASE_SERVICE_ROLE, default `fcs_service`; SEC-3): rows only, no schema changes,
   * the append-only records insert-only. null (`none`): the DATABASE_URL user's own rights. Migrations always run as
   * that user.
   */
  databaseServiceRole: string | null;
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
  /** Whether the HTTP server process also runs the background worker (START_WORKER, default true). */
  startWorker: boolean;
  /** How long SIGTERM/SIGINT wait for in-flight requests and running jobs before cutting them, in ms (default 10000). */
  shutdownTimeoutMs: number;
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
   * Longest wait for a database connection (a new one, or a free one from the pool), in ms (default 5000). While the
   * database is down, requests fail with 503 within this time instead of hanging.
   */
  databaseConnectTimeoutMs: number;
  /** Concurrent GET /events/stream connections one API key may hold per server process (EVENT_STREAM_MAX_PER_KEY, default 5). */
  eventStreamMaxPerKey: number;
  /** Seconds between keep-alive comments on an idle event stream, which also re-check for missed events (default 15). */
  eventStreamHeartbeatSeconds: number;
  rateLimits: RateLimitConfig;
  /** Console password hashes computed at once (scrypt, ~128 MiB and a few hundred ms each; PASSWORD_HASH_CONCURRENCY, default 1). */
  passwordHashConcurrency: number;
  /** Sign-ins that may wait for a hash; beyond it a sign-in is refused at once with 503 (PASSWORD_HASH_QUEUE, default 8). */
  passwordHashQueue: number;
  /**
   * Share of the time (percent, 1-100) each password-check slot may spend hashing (PASSWORD_HASH_CPU_PERCENT, default
   * 25): after a hash of d ms the slot rests d × (100 / share − 1) ms, so a flood of sign-ins keeps scrypt's CPU and
   * memory traffic to this share of a core per slot (AUTH-8).
   */
  passwordHashCpuPercent: number;
  /**
   * Live card payments at dashboard checkout (PAY-1): the Stripe secret key, the webhook signing secret and the API
   * address (STRIPE_API_BASE_URL, default https://api.stripe.com). null when STRIPE_SECRET_KEY and
   * STRIPE_WEBHOOK_SECRET are not both set: live customer-billed checkout then says card payment is unavailable.
   */
  stripe: { secretKey: string; webhookSecret: string; apiBaseUrl: string } | null;
}

/** A configuration problem found at boot, naming every bad variable. */
export class ConfigError extends Error {
  constructor(public readonly problems: string[]) {
    super(`Invalid configuration:\n  ${problems.join('\n  ')}`);
  }
}

/**
 * Reads and validates the environment once. Throws ConfigError listing every invalid variable.
 * @param env usually process.env; tests pass their own object.
 */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const raw = Object.fromEntries(
    Object.keys(EnvSchema.properties)
      .filter((k) => env[k] !== undefined && env[k] !== '')
      .map((k) => [k, env[k]]),
  );
  const problems = [...Value.Errors(EnvSchema, raw)].map(
    (e) => `${e.path.slice(1) || 'environment'}: ${e.message} (got ${shownValue(e.path.slice(1), e.value)})`,
  );
  const token = raw.OPERATOR_TOKEN;
  if (typeof token === 'string' && token.length < MIN_OPERATOR_TOKEN_LENGTH) {
    problems.push(
      `OPERATOR_TOKEN: must be at least ${MIN_OPERATOR_TOKEN_LENGTH} characters (got ${shownValue('OPERATOR_TOKEN', token)}); generate one with: openssl rand -base64 32`,
    );
  }
  if (!raw.STRIPE_SECRET_KEY !== !raw.STRIPE_WEBHOOK_SECRET) {
    const [set, unset] = raw.STRIPE_SECRET_KEY
      ? ['STRIPE_SECRET_KEY', 'STRIPE_WEBHOOK_SECRET']
      : ['STRIPE_WEBHOOK_SECRET', 'STRIPE_SECRET_KEY'];
    problems.push(
      `${unset}: required when ${set} is set (live card payments need both; see README "Going live with Stripe")`,
    );
  }
  const dataKey = typeof raw.DATA_ENCRYPTION_KEY === 'string' ? parseDataKey(raw.DATA_ENCRYPTION_KEY) : null;
  if (typeof raw.DATA_ENCRYPTION_KEY === 'string' && !dataKey) {
    problems.push(
      `DATA_ENCRYPTION_KEY: must be 32 bytes as base64 or 64 hex digits (got ${shownValue('DATA_ENCRYPTION_KEY', raw.DATA_ENCRYPTION_KEY)}); generate one with: ${MAKE_DATA_KEY}`,
    );
  } else if (!dataKey && raw.DATABASE_URL) {
    problems.push(
      `DATA_ENCRYPTION_KEY: required when DATABASE_URL is set (it seals webhook secrets in the database); generate one with: ${MAKE_DATA_KEY} and keep it apart from database backups`,
    );
  }
  const previousKeys =
    typeof raw.DATA_ENCRYPTION_KEY_PREVIOUS === 'string'
      ? raw.DATA_ENCRYPTION_KEY_PREVIOUS.split(',').map((k) => parseDataKey(k))
      : [];
  if (previousKeys.some((k) => !k)) {
    problems.push(
      `DATA_ENCRYPTION_KEY_PREVIOUS: each comma-separated key must be 32 bytes as base64 or 64 hex digits (got ${shownValue('DATA_ENCRYPTION_KEY_PREVIOUS', raw.DATA_ENCRYPTION_KEY_PREVIOUS)})`,
    );
  }
  if (problems.length) throw new ConfigError(problems);
  const e = raw as Static<typeof EnvSchema>;
  const port = Number(e.PORT ?? 3000);
  const dataDir = path.resolve(e.DATA_DIR ?? '.data');
  const liveBaseUrl = trimSlash(e.LIVE_BASE_URL ?? `http://localhost:${port}/v1`);
  const testBaseUrl = trimSlash(e.TEST_BASE_URL ?? `http://localhost:${port}/test/v1`);
  if (new URL(liveBaseUrl).pathname === new URL(testBaseUrl).pathname) {
    throw new ConfigError(['LIVE_BASE_URL and TEST_BASE_URL must have different paths (for example /v1 and /test/v1)']);
  }
  const httpRequestTimeoutMs = Number(e.HTTP_REQUEST_TIMEOUT_MS ?? 30000);
  const httpHeadersTimeoutMs = Number(e.HTTP_HEADERS_TIMEOUT_MS ?? Math.min(10000, httpRequestTimeoutMs));
  if (httpHeadersTimeoutMs > httpRequestTimeoutMs) {
    throw new ConfigError([
      `HTTP_HEADERS_TIMEOUT_MS (${httpHeadersTimeoutMs}) must not exceed HTTP_REQUEST_TIMEOUT_MS (${httpRequestTimeoutMs}): headers are part of the request`,
    ]);
  }
  const heartbeatSeconds = Number(e.EVENT_STREAM_HEARTBEAT_SECONDS ?? 15);
  if (heartbeatSeconds <= 0) throw new ConfigError(['EVENT_STREAM_HEARTBEAT_SECONDS: must be more than 0 seconds']);
  // Whatever is printed from now on (logs, CLI errors) leaves these values out.
  rememberSecrets([
    e.OPERATOR_TOKEN,
    e.FILE_URL_SECRET,
    e.DATA_ENCRYPTION_KEY,
    ...(e.DATA_ENCRYPTION_KEY_PREVIOUS?.split(',') ?? []),
    passwordOf(e.DATABASE_URL),
    passwordOf(e.SMTP_URL),
    e.STRIPE_SECRET_KEY,
    e.STRIPE_WEBHOOK_SECRET,
  ]);
  const schedule = (e.WEBHOOK_RETRY_SCHEDULE ?? '5,300,1800,7200,18000,36000,36000')
    .split(',')
    .map((v) => Number(v.trim()));
  return {
    port,
    host: e.HOST ?? '0.0.0.0',
    databaseUrl: e.DATABASE_URL ?? null,
    operatorToken: e.OPERATOR_TOKEN ?? null,
    liveBaseUrl,
    testBaseUrl,
    dashboardBaseUrl: trimSlash(e.DASHBOARD_BASE_URL ?? `http://localhost:${port}/dashboard`),
    consoleBaseUrl: trimSlash(e.CONSOLE_BASE_URL ?? `http://localhost:${port}/console`),
    logLevel: e.LOG_LEVEL ?? 'info',
    dataDir,
    storageDir: path.resolve(e.STORAGE_DIR ?? path.join(dataDir, 'files')),
    fileUrlSecret: e.FILE_URL_SECRET ?? null,
    dataEncryptionKey: dataKey,
    dataEncryptionKeysPrevious: previousKeys.filter((k): k is DataKey => k !== null),
    smtpUrl: e.SMTP_URL ?? null,
    emailFrom: e.EMAIL_FROM ?? 'Filing Compliance <no-reply@localhost>',
    webhookTimeoutMs: Number(e.WEBHOOK_TIMEOUT_MS ?? 15000),
    webhookRetryScheduleSeconds: schedule,
    webhookDisableAfterHours: Number(e.WEBHOOK_DISABLE_AFTER_HOURS ?? 120),
    // Off unless set, whatever the database (WH-14); the embedded quick start sets it through quickStartEnv.
    webhookAllowPrivateNetworks: e.WEBHOOK_ALLOW_PRIVATE_NETWORKS === 'true',
    webhookEndpointsMax: Number(e.WEBHOOK_ENDPOINTS_MAX ?? 20),
    workerConcurrency: Number(e.WORKER_CONCURRENCY ?? 4),
    webhookConcurrency: Number(e.WEBHOOK_CONCURRENCY ?? 100),
    webhookEndpointConcurrency: Number(e.WEBHOOK_ENDPOINT_CONCURRENCY ?? 10),
    webhookLeaseMs: Number(e.WEBHOOK_LEASE_MS ?? 5000),
    trustProxy: e.TRUST_PROXY === 'true',
    embeddedPgPort: Number(e.EMBEDDED_PG_PORT ?? 54329),
    databaseServiceRole:
      (e.DATABASE_SERVICE_ROLE ?? 'fcs_service') === 'none' ? null : (e.DATABASE_SERVICE_ROLE ?? 'fcs_service'),
    databasePoolSize: Number(e.DATABASE_POOL_SIZE ?? 10),
    apiKeyCacheSeconds: Number(e.API_KEY_CACHE_SECONDS ?? 60),
    workerDatabasePoolSize: Number(e.WORKER_DATABASE_POOL_SIZE ?? 10),
    metricsPort: e.METRICS_PORT ? Number(e.METRICS_PORT) : null,
    startWorker: e.START_WORKER !== 'false',
    shutdownTimeoutMs: Number(e.SHUTDOWN_TIMEOUT_MS ?? 10000),
    httpRequestTimeoutMs,
    httpHeadersTimeoutMs,
    httpKeepAliveTimeoutMs: Number(e.HTTP_KEEP_ALIVE_TIMEOUT_MS ?? 65000),
    databaseConnectTimeoutMs: Number(e.DATABASE_CONNECT_TIMEOUT_MS ?? 5000),
    eventStreamMaxPerKey: Number(e.EVENT_STREAM_MAX_PER_KEY ?? 5),
    eventStreamHeartbeatSeconds: heartbeatSeconds,
    rateLimits: {
      windowSeconds: Number(e.RATE_LIMIT_WINDOW_SECONDS ?? 60),
      apiRequests: Number(e.RATE_LIMIT_API_REQUESTS ?? 1200),
      adminRequests: Number(e.RATE_LIMIT_ADMIN_REQUESTS ?? 300),
      adminAuthFailures: Number(e.RATE_LIMIT_ADMIN_AUTH_FAILURES ?? 10),
      signInAttempts: Number(e.RATE_LIMIT_SIGN_IN_ATTEMPTS ?? 10),
      magicLinkOpens: Number(e.RATE_LIMIT_MAGIC_LINK_OPENS ?? 30),
      syncMs: Number(e.RATE_LIMIT_SYNC_MS ?? 250),
      webhookTestsPerMinute: Number(e.RATE_LIMIT_WEBHOOK_TESTS ?? 10),
      webhookResendsPerMinute: Number(e.RATE_LIMIT_WEBHOOK_RESENDS ?? 60),
    },
    passwordHashConcurrency: Number(e.PASSWORD_HASH_CONCURRENCY ?? 1),
    passwordHashQueue: Number(e.PASSWORD_HASH_QUEUE ?? 8),
    passwordHashCpuPercent: Number(e.PASSWORD_HASH_CPU_PERCENT ?? 25),
    stripe:
      e.STRIPE_SECRET_KEY && e.STRIPE_WEBHOOK_SECRET
        ? {
            secretKey: e.STRIPE_SECRET_KEY,
            webhookSecret: e.STRIPE_WEBHOOK_SECRET,
            apiBaseUrl: trimSlash(e.STRIPE_API_BASE_URL ?? 'https://api.stripe.com'),
          }
        : null,
  };
}

// Variables that hold a secret or may carry one (a password in a connection URL). A refused value is printed at boot
// (stderr, deployment logs), so it is described instead of echoed: tokens by length, URLs without their password.
const SECRET_VARIABLES = new Set([
  'OPERATOR_TOKEN',
  'FILE_URL_SECRET',
  'DATA_ENCRYPTION_KEY',
  'DATA_ENCRYPTION_KEY_PREVIOUS',
  'STRIPE_SECRET_KEY',
  'STRIPE_WEBHOOK_SECRET',
]);

/** How to make a data encryption key, as the start's message tells it. */
const MAKE_DATA_KEY = 'openssl rand -base64 32';
const URL_VARIABLES = new Set(['DATABASE_URL', 'SMTP_URL']);

function shownValue(name: string, value: unknown): string {
  if (typeof value !== 'string') return JSON.stringify(value);
  if (SECRET_VARIABLES.has(name)) return `a value of ${value.length} characters, not shown`;
  if (URL_VARIABLES.has(name))
    return JSON.stringify(value.replace(/:.*@/, ':***@').replace(/([?&]password=)[^&#]*/gi, '$1***'));
  return JSON.stringify(value);
}

function passwordOf(url: string | undefined): string | null {
  try {
    return url ? decodeURIComponent(new URL(url).password) || null : null;
  } catch {
    return null;
  }
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, '');
}

/**
 * Shortest OPERATOR_TOKEN accepted: 32 characters of a random token (e.g. base64 of 24+ random bytes) put
 * guessing it out of reach even without the admin API's throttling of failed attempts.
 */
export const MIN_OPERATOR_TOKEN_LENGTH = 32;

/**
 * The environment `npm start` and `npm run worker` load their configuration from (WH-14). On the embedded quick
 * start (DATABASE_URL unset) WEBHOOK_ALLOW_PRIVATE_NETWORKS is turned on when it is not set, so a receiver on
 * localhost works; every other setting is left as it is. `turnedOn` lists what this changed, for the start to say so.
 */
export function quickStartEnv(env: Record<string, string | undefined>): {
  env: Record<string, string | undefined>;
  turnedOn: string[];
} {
  if (env.DATABASE_URL || env.WEBHOOK_ALLOW_PRIVATE_NETWORKS) return { env, turnedOn: [] };
  return { env: { ...env, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' }, turnedOn: ['WEBHOOK_ALLOW_PRIVATE_NETWORKS=true'] };
}

/** Path prefix of a base address, e.g. `/test/v1` for `http://localhost:3000/test/v1`. */
export function pathPrefix(baseUrl: string): string {
  return new URL(baseUrl).pathname.replace(/\/+$/, '');
}

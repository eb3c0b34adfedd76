import path from 'node:path';
import { checkEnv, readEnv, type Env } from './config-env.js';
import type { Config, RateLimitConfig } from './config-types.js';
import { rememberSecrets } from './lib/logger.js';
import { parseTrustProxy, type TrustProxy } from './lib/proxy-trust.js';
import type { DataKey } from './lib/secret-box.js';
import { MAX_TOP_UP_DOLLARS } from './lib/amounts.js';

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
  const raw = readEnv(env);
  const { problems, dataKey, previousKeys } = checkEnv(raw);
  if (problems.length) throw new ConfigError(problems);
  const e = raw as Env;
  const port = Number(e.PORT ?? 3000);
  const dataDir = path.resolve(e.DATA_DIR ?? '.data');
  const liveBaseUrl = trimSlash(e.LIVE_BASE_URL ?? `http://localhost:${port}/v1`);
  const testBaseUrl = trimSlash(e.TEST_BASE_URL ?? `http://localhost:${port}/test/v1`);
  const basePaths = { LIVE_BASE_URL: new URL(liveBaseUrl).pathname, TEST_BASE_URL: new URL(testBaseUrl).pathname };
  // TEN-2: both base addresses end in the API version's path, so moving from test to live changes only the address.
  const unversioned = Object.entries(basePaths).filter(([, pathname]) => !pathname.endsWith('/v1'));
  if (unversioned.length) {
    throw new ConfigError(
      unversioned.map(([name, pathname]) => `${name}: its path must end in /v1 (it is ${pathname})`),
    );
  }
  if (basePaths.LIVE_BASE_URL === basePaths.TEST_BASE_URL) {
    throw new ConfigError(['LIVE_BASE_URL and TEST_BASE_URL must have different paths (for example /v1 and /test/v1)']);
  }
  const httpRequestTimeoutMs = Number(e.HTTP_REQUEST_TIMEOUT_MS ?? 30000);
  const httpHeadersTimeoutMs = Number(e.HTTP_HEADERS_TIMEOUT_MS ?? Math.min(10000, httpRequestTimeoutMs));
  if (httpHeadersTimeoutMs > httpRequestTimeoutMs) {
    throw new ConfigError([
      `HTTP_HEADERS_TIMEOUT_MS (${httpHeadersTimeoutMs}) must not exceed HTTP_REQUEST_TIMEOUT_MS (${httpRequestTimeoutMs}): headers are part of the request`,
    ]);
  }
  const serviceRole =
    (e.DATABASE_SERVICE_ROLE ?? 'fcs_service') === 'none' ? null : (e.DATABASE_SERVICE_ROLE ?? 'fcs_service');
  const appRole = e.DATABASE_APP_ROLE ?? 'fcs_app';
  if (appRole === serviceRole)
    throw new ConfigError([
      `DATABASE_APP_ROLE: must differ from DATABASE_SERVICE_ROLE (got ${appRole} for both): the pools log in as a member of the service role`,
    ]);
  const topUps = topUpLimitsOf(e);
  const heartbeatSeconds = Number(e.EVENT_STREAM_HEARTBEAT_SECONDS ?? 15);
  if (heartbeatSeconds <= 0) throw new ConfigError(['EVENT_STREAM_HEARTBEAT_SECONDS: must be more than 0 seconds']);
  // Whatever is printed from now on (logs, CLI errors) leaves these values out.
  rememberSecrets([
    e.OPERATOR_TOKEN,
    e.FILE_URL_SECRET,
    e.DATA_ENCRYPTION_KEY,
    ...(e.DATA_ENCRYPTION_KEY_PREVIOUS?.split(',') ?? []),
    passwordOf(e.DATABASE_URL),
    e.DATABASE_APP_PASSWORD,
    passwordOf(e.SMTP_URL),
    e.STRIPE_SECRET_KEY,
    e.STRIPE_WEBHOOK_SECRET,
    e.AWS_SECRET_ACCESS_KEY,
    e.AWS_SESSION_TOKEN,
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
    portalBaseUrl: trimSlash(e.PORTAL_BASE_URL ?? `http://localhost:${port}/portal`),
    logLevel: e.LOG_LEVEL ?? 'info',
    dataDir,
    storageDir: path.resolve(e.STORAGE_DIR ?? path.join(dataDir, 'files')),
    objectStorage: objectStorageOf(e),
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
    // WH-17: a quarter of the process's slots by default, so one organization never holds them all.
    webhookOrganizationConcurrency: Number(
      e.WEBHOOK_ORGANIZATION_CONCURRENCY ?? Math.max(1, Math.floor(Number(e.WEBHOOK_CONCURRENCY ?? 100) / 4)),
    ),
    webhookLeaseMs: Number(e.WEBHOOK_LEASE_MS ?? 5000),
    trustProxy: trustProxyOf(e),
    embeddedPgPort: Number(e.EMBEDDED_PG_PORT ?? 54329),
    databaseServiceRole: serviceRole,
    databaseAppRole: appRole,
    databaseAppPassword: e.DATABASE_APP_PASSWORD ?? null,
    databasePoolSize: Number(e.DATABASE_POOL_SIZE ?? 10),
    apiKeyCacheSeconds: Number(e.API_KEY_CACHE_SECONDS ?? 60),
    workerDatabasePoolSize: Number(e.WORKER_DATABASE_POOL_SIZE ?? 10),
    metricsPort: e.METRICS_PORT ? Number(e.METRICS_PORT) : null,
    // Never HOST: metrics are served there without authentication, so only this machine unless said otherwise.
    metricsHost: e.METRICS_HOST ?? '127.0.0.1',
    startWorker: e.START_WORKER !== 'false',
    shutdownTimeoutMs: Number(e.SHUTDOWN_TIMEOUT_MS ?? 10000),
    taxIdRetentionDays: Number(e.TAX_ID_RETENTION_DAYS ?? 30),
    httpRequestTimeoutMs,
    httpHeadersTimeoutMs,
    httpKeepAliveTimeoutMs: Number(e.HTTP_KEEP_ALIVE_TIMEOUT_MS ?? 65000),
    httpBodyIdleTimeoutMs: Number(e.HTTP_BODY_IDLE_TIMEOUT_MS ?? 5000),
    databaseConnectTimeoutMs: Number(e.DATABASE_CONNECT_TIMEOUT_MS ?? 5000),
    eventStreamMaxPerKey: Number(e.EVENT_STREAM_MAX_PER_KEY ?? 5),
    eventStreamHeartbeatSeconds: heartbeatSeconds,
    rateLimits: rateLimitsOf(e),
    passwordHashConcurrency: Number(e.PASSWORD_HASH_CONCURRENCY ?? 2),
    passwordHashQueue: Number(e.PASSWORD_HASH_QUEUE ?? 8),
    passwordHashCpuPercent: Number(e.PASSWORD_HASH_CPU_PERCENT ?? 10),
    passwordHashHoldMs: Number(e.PASSWORD_HASH_HOLD_MS ?? 2500),
    passwordHashHeld: Number(e.PASSWORD_HASH_HELD ?? 1000),
    signInAnswerMs: Number(e.SIGN_IN_ANSWER_MS ?? 4000),
    stripe: stripeOf(e),
    topUps,
  };
}

/** Default smallest and largest top-up, in dollars (FUND-3). */
const TOP_UP_DEFAULTS = { min: '10', max: '50000' };

/**
 * FUND-3: TOP_UP_MIN and TOP_UP_MAX (dollars, at most two decimals; the schema checked their form) as cents: the
 * smallest more than 0, not above the largest, the largest at most MAX_TOP_UP_DOLLARS.
 * @throws ConfigError naming the variable.
 */
function topUpLimitsOf(e: Env): Config['topUps'] {
  const minCents = Math.round(Number(e.TOP_UP_MIN ?? TOP_UP_DEFAULTS.min) * 100);
  const maxCents = Math.round(Number(e.TOP_UP_MAX ?? TOP_UP_DEFAULTS.max) * 100);
  if (minCents <= 0) throw new ConfigError(['TOP_UP_MIN: must be more than 0 dollars']);
  if (maxCents > MAX_TOP_UP_DOLLARS * 100)
    throw new ConfigError([`TOP_UP_MAX: must be at most ${MAX_TOP_UP_DOLLARS} dollars`]);
  if (minCents > maxCents)
    throw new ConfigError([
      `TOP_UP_MIN (${minCents / 100}) must not exceed TOP_UP_MAX (${maxCents / 100}): they bound one top-up's amount in dollars`,
    ]);
  return { minCents, maxCents };
}

/** LIM-8: the request limits of `RATE_LIMIT_*`, each defaulted. */
function rateLimitsOf(e: Env): RateLimitConfig {
  return {
    windowSeconds: Number(e.RATE_LIMIT_WINDOW_SECONDS ?? 60),
    apiRequests: Number(e.RATE_LIMIT_API_REQUESTS ?? 1200),
    adminRequests: Number(e.RATE_LIMIT_ADMIN_REQUESTS ?? 300),
    adminAuthFailures: Number(e.RATE_LIMIT_ADMIN_AUTH_FAILURES ?? 10),
    authFailures: Number(e.RATE_LIMIT_AUTH_FAILURES ?? 20),
    dashboardRequests: Number(e.RATE_LIMIT_DASHBOARD_REQUESTS ?? 120),
    signInAttempts: Number(e.RATE_LIMIT_SIGN_IN_ATTEMPTS ?? 10),
    magicLinkOpens: Number(e.RATE_LIMIT_MAGIC_LINK_OPENS ?? 30),
    syncMs: Number(e.RATE_LIMIT_SYNC_MS ?? 250),
    webhookTestsPerMinute: Number(e.RATE_LIMIT_WEBHOOK_TESTS ?? 10),
    webhookResendsPerMinute: Number(e.RATE_LIMIT_WEBHOOK_RESENDS ?? 60),
  };
}

/** SEC-8: TRUST_PROXY as checkEnv accepted it (no proxy when unset). */
function trustProxyOf(e: Env): TrustProxy {
  const parsed = parseTrustProxy(e.TRUST_PROXY);
  return 'trust' in parsed ? parsed.trust : false;
}

/**
 * OPS-25: the S3-compatible store of STORAGE_URL (`s3://bucket/prefix`), or null for the local disk. The prefix is
 * kept with a trailing slash (or empty). Credentials are passed on only when both keys are set in the environment read;
 * otherwise the AWS SDK's own chain finds them (profile, web identity, instance or task role).
 */
function objectStorageOf(e: Env): Config['objectStorage'] {
  if (!e.STORAGE_URL) return null;
  const [, bucket = '', prefix = ''] = /^s3:\/\/([^/]+)\/?(.*)$/.exec(e.STORAGE_URL) ?? [];
  const endpoint = e.S3_ENDPOINT ? trimSlash(e.S3_ENDPOINT) : null;
  return {
    bucket,
    prefix: prefix.replace(/\/+$/, '') ? `${prefix.replace(/\/+$/, '')}/` : '',
    endpoint,
    region: e.AWS_REGION ?? e.AWS_DEFAULT_REGION ?? 'us-east-1',
    forcePathStyle: e.S3_FORCE_PATH_STYLE ? e.S3_FORCE_PATH_STYLE === 'true' : endpoint !== null,
    credentials:
      e.AWS_ACCESS_KEY_ID && e.AWS_SECRET_ACCESS_KEY
        ? {
            accessKeyId: e.AWS_ACCESS_KEY_ID,
            secretAccessKey: e.AWS_SECRET_ACCESS_KEY,
            ...(e.AWS_SESSION_TOKEN ? { sessionToken: e.AWS_SESSION_TOKEN } : {}),
          }
        : null,
  };
}

/** PAY-1: live card payments need both Stripe secrets; checkEnv has refused one without the other. */
function stripeOf(e: Env): Config['stripe'] {
  return e.STRIPE_SECRET_KEY && e.STRIPE_WEBHOOK_SECRET
    ? {
        secretKey: e.STRIPE_SECRET_KEY,
        webhookSecret: e.STRIPE_WEBHOOK_SECRET,
        apiBaseUrl: trimSlash(e.STRIPE_API_BASE_URL ?? 'https://api.stripe.com'),
      }
    : null;
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

import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { parseTrustProxy } from './lib/proxy-trust.js';
import { parseDataKey, type DataKey } from './lib/secret-box.js';

/*
 * The environment the configuration is read from: the variables it knows, and the checks that name every bad one
 * before anything starts. A refused value is described, never echoed (AUTH-11).
 */

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
  PORTAL_BASE_URL: Type.Optional(Type.String({ pattern: '^https?://' })),
  LOG_LEVEL: Type.Optional(
    Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l))),
  ),
  DATA_DIR: Type.Optional(Type.String({ minLength: 1 })),
  STORAGE_DIR: Type.Optional(Type.String({ minLength: 1 })),
  // s3://bucket or s3://bucket/prefix: documents go to S3-compatible object storage instead of STORAGE_DIR (OPS-25).
  STORAGE_URL: Type.Optional(
    Type.String({ pattern: "^s3://[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](/[A-Za-z0-9!_.*'()/-]*)?$" }),
  ),
  // The S3 API's address for stores other than AWS (MinIO, Cloudflare R2, GCS's S3 interface).
  S3_ENDPOINT: Type.Optional(Type.String({ pattern: '^https?://[^/?#]+/?$' })),
  // Bucket in the path rather than the host name; on by default when S3_ENDPOINT is set.
  S3_FORCE_PATH_STYLE: Type.Optional(Bool),
  // The AWS SDK's own variables, read here so the start can check them (the SDK reads the rest of its chain itself).
  AWS_REGION: Type.Optional(Type.String({ pattern: '^[a-z0-9-]{1,40}$' })),
  AWS_DEFAULT_REGION: Type.Optional(Type.String({ pattern: '^[a-z0-9-]{1,40}$' })),
  AWS_ACCESS_KEY_ID: Type.Optional(Type.String({ minLength: 1 })),
  AWS_SECRET_ACCESS_KEY: Type.Optional(Type.String({ minLength: 1 })),
  AWS_SESSION_TOKEN: Type.Optional(Type.String({ minLength: 1 })),
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
  WEBHOOK_ORGANIZATION_CONCURRENCY: Type.Optional(Type.String({ pattern: '^[1-9][0-9]*$' })),
  WEBHOOK_LEASE_MS: Type.Optional(Type.String({ pattern: '^[1-9][0-9]*$' })),
  // false, a hop count, or trusted proxy addresses/CIDRs (checked below with parseTrustProxy, SEC-8).
  TRUST_PROXY: Type.Optional(Type.String({ minLength: 1 })),
  EMBEDDED_PG_PORT: Type.Optional(Int),
  // The role the pools act as (SEC-3): fcs_service (created by the migrations), another existing role, or none.
  DATABASE_SERVICE_ROLE: Type.Optional(Type.String({ pattern: '^[a-z_][a-z0-9_]{0,62}$' })),
  // The login role the pools connect as, a member of the service role only (SEC-3).
  DATABASE_APP_ROLE: Type.Optional(Type.String({ pattern: '^[a-z_][a-z0-9_]{0,62}$' })),
  // Its password: printable ASCII without spaces, at least 16 characters.
  DATABASE_APP_PASSWORD: Type.Optional(Type.String({ pattern: '^[\\x21-\\x7e]{16,}$' })),
  DATABASE_POOL_SIZE: Type.Optional(Type.String({ pattern: '^[1-9][0-9]*$' })),
  API_KEY_CACHE_SECONDS: Type.Optional(Type.String({ pattern: '^[0-9]+$' })),
  WORKER_DATABASE_POOL_SIZE: Type.Optional(Type.String({ pattern: '^[1-9][0-9]*$' })),
  METRICS_PORT: Type.Optional(Int),
  // An address to bind to: a host name or IPv4 address (no port), or an IPv6 address (two colons at least).
  METRICS_HOST: Type.Optional(
    Type.String({
      pattern: '^([A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?|[0-9A-Fa-f.]*:[0-9A-Fa-f.]*:[0-9A-Fa-f:.]*)$',
    }),
  ),
  SHUTDOWN_TIMEOUT_MS: Type.Optional(Int),
  // Days, 0 to 9999 (ORD-EIN-9).
  TAX_ID_RETENTION_DAYS: Type.Optional(Type.String({ pattern: '^[0-9]{1,4}$' })),
  START_WORKER: Type.Optional(Bool),
  HTTP_REQUEST_TIMEOUT_MS: Type.Optional(Type.String({ pattern: '^[1-9][0-9]*$' })),
  HTTP_HEADERS_TIMEOUT_MS: Type.Optional(Type.String({ pattern: '^[1-9][0-9]*$' })),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: Type.Optional(Type.String({ pattern: '^[1-9][0-9]*$' })),
  HTTP_BODY_IDLE_TIMEOUT_MS: Type.Optional(Type.String({ pattern: '^[1-9][0-9]*$' })),
  DATABASE_CONNECT_TIMEOUT_MS: Type.Optional(Type.String({ pattern: '^[1-9][0-9]*$' })),
  EVENT_STREAM_MAX_PER_KEY: Type.Optional(Type.String({ pattern: '^[1-9][0-9]*$' })),
  EVENT_STREAM_HEARTBEAT_SECONDS: Type.Optional(Type.String({ pattern: '^[0-9]+(\\.[0-9]+)?$' })),
  RATE_LIMIT_WINDOW_SECONDS: Type.Optional(Type.String({ pattern: '^[1-9][0-9]*$' })),
  RATE_LIMIT_API_REQUESTS: Type.Optional(Type.String({ pattern: '^[1-9][0-9]*$' })),
  RATE_LIMIT_ADMIN_REQUESTS: Type.Optional(Type.String({ pattern: '^[1-9][0-9]*$' })),
  RATE_LIMIT_ADMIN_AUTH_FAILURES: Type.Optional(Type.String({ pattern: '^[1-9][0-9]*$' })),
  RATE_LIMIT_AUTH_FAILURES: Type.Optional(Type.String({ pattern: '^[1-9][0-9]*$' })),
  RATE_LIMIT_DASHBOARD_REQUESTS: Type.Optional(Type.String({ pattern: '^[1-9][0-9]*$' })),
  RATE_LIMIT_SIGN_IN_ATTEMPTS: Type.Optional(Type.String({ pattern: '^[1-9][0-9]*$' })),
  RATE_LIMIT_MAGIC_LINK_OPENS: Type.Optional(Type.String({ pattern: '^[1-9][0-9]*$' })),
  RATE_LIMIT_SYNC_MS: Type.Optional(Type.String({ pattern: '^[1-9][0-9]*$' })),
  WEBHOOK_ENDPOINTS_MAX: Type.Optional(Type.String({ pattern: '^[1-9][0-9]*$' })),
  RATE_LIMIT_WEBHOOK_TESTS: Type.Optional(Type.String({ pattern: '^[1-9][0-9]*$' })),
  RATE_LIMIT_WEBHOOK_RESENDS: Type.Optional(Type.String({ pattern: '^[1-9][0-9]*$' })),
  PASSWORD_HASH_CONCURRENCY: Type.Optional(Type.String({ pattern: '^[1-9][0-9]*$' })),
  PASSWORD_HASH_QUEUE: Type.Optional(Int),
  PASSWORD_HASH_CPU_PERCENT: Type.Optional(Type.String({ pattern: '^([1-9][0-9]?|100)$' })),
  PASSWORD_HASH_HOLD_MS: Type.Optional(Int),
  PASSWORD_HASH_HELD: Type.Optional(Int),
  // ms, 100 to 99999 (AUTH-8).
  SIGN_IN_ANSWER_MS: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{2,4}$' })),
  STRIPE_SECRET_KEY: Type.Optional(Type.String({ pattern: '^(sk|rk)_(live|test)_[A-Za-z0-9_]{8,}$' })),
  STRIPE_WEBHOOK_SECRET: Type.Optional(Type.String({ pattern: '^whsec_[A-Za-z0-9_+/=]{8,}$' })),
  STRIPE_API_BASE_URL: Type.Optional(Type.String({ pattern: '^https?://[^/?#]+/?$' })),
  // Dollars with at most two decimals (FUND-3); their order is checked in loadConfig.
  TOP_UP_MIN: Type.Optional(Type.String({ pattern: '^[0-9]{1,8}(\\.[0-9]{1,2})?$' })),
  TOP_UP_MAX: Type.Optional(Type.String({ pattern: '^[0-9]{1,8}(\\.[0-9]{1,2})?$' })),
});

/** The known variables of an environment, each set to a non-empty value, as EnvSchema types them once checked. */
export type Env = Static<typeof EnvSchema>;

/**
 * Shortest OPERATOR_TOKEN accepted: 32 characters of a random token (e.g. base64 of 24+ random bytes) put
 * guessing it out of reach even without the admin API's throttling of failed attempts.
 */
const MIN_OPERATOR_TOKEN_LENGTH = 32;

/** How to make a data encryption key, as the start's message tells it. */
const MAKE_DATA_KEY = 'openssl rand -base64 32';

/** The known variables `env` sets to a non-empty value (unknown and empty ones are left out), not yet checked. */
export function readEnv(env: Record<string, string | undefined>): Record<string, string | undefined> {
  return Object.fromEntries(
    Object.keys(EnvSchema.properties)
      .filter((k) => env[k] !== undefined && env[k] !== '')
      .map((k) => [k, env[k]]),
  );
}

/** The outcome of checkEnv: every problem found, and the data keys it parsed (null where a key is bad or unset). */
export interface EnvCheck {
  problems: string[];
  dataKey: DataKey | null;
  previousKeys: Array<DataKey | null>;
}

/**
 * Every problem of the variables read by readEnv, one message each naming the variable: the schema's, then a short
 * OPERATOR_TOKEN (AUTH-4), one Stripe secret without the other (PAY-1), a TRUST_PROXY that is `true` or not a hop
 * count or proxy addresses (SEC-8), and bad or missing data keys (SEC-2).
 */
export function checkEnv(raw: Record<string, string | undefined>): EnvCheck {
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
      `${unset}: required when ${set} is set (live card payments need both; see docs/deploying.md, "Going live with Stripe")`,
    );
  }
  problems.push(...storageProblems(raw));
  if (typeof raw.TRUST_PROXY === 'string') {
    const trust = parseTrustProxy(raw.TRUST_PROXY);
    if ('problem' in trust) problems.push(trust.problem);
  }
  return { problems, ...checkDataKeys(raw, problems) };
}

/**
 * OPS-25: what is wrong with the object storage settings: S3 settings without STORAGE_URL, one half of a key pair, or
 * an AWS bucket without a region (AWS_REGION or AWS_DEFAULT_REGION; stores reached through S3_ENDPOINT default to
 * us-east-1).
 */
function storageProblems(raw: Record<string, string | undefined>): string[] {
  const problems: string[] = [];
  if (!raw.STORAGE_URL) {
    for (const name of ['S3_ENDPOINT', 'S3_FORCE_PATH_STYLE'])
      if (raw[name]) problems.push(`${name}: only used with STORAGE_URL=s3://bucket/prefix; set both or neither`);
    return problems;
  }
  if (!raw.AWS_ACCESS_KEY_ID !== !raw.AWS_SECRET_ACCESS_KEY)
    problems.push(
      'AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY: set both or neither (neither: the AWS SDK finds credentials itself, e.g. from an instance role or AWS_PROFILE)',
    );
  if (!raw.S3_ENDPOINT && !raw.AWS_REGION && !raw.AWS_DEFAULT_REGION)
    problems.push("AWS_REGION: required with STORAGE_URL on AWS S3 (the bucket's region, e.g. us-east-1)");
  return problems;
}

/** SEC-2: parses DATA_ENCRYPTION_KEY and DATA_ENCRYPTION_KEY_PREVIOUS, adding to `problems` what is wrong. */
function checkDataKeys(raw: Record<string, string | undefined>, problems: string[]): Omit<EnvCheck, 'problems'> {
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
  return { dataKey, previousKeys };
}

// Variables that hold a secret or may carry one (a password in a connection URL). A refused value is printed at boot
// (stderr, deployment logs), so it is described instead of echoed: tokens by length, URLs without their password.
const SECRET_VARIABLES = new Set([
  'OPERATOR_TOKEN',
  'FILE_URL_SECRET',
  'DATA_ENCRYPTION_KEY',
  'DATA_ENCRYPTION_KEY_PREVIOUS',
  'DATABASE_APP_PASSWORD',
  'STRIPE_SECRET_KEY',
  'STRIPE_WEBHOOK_SECRET',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
]);

const URL_VARIABLES = new Set(['DATABASE_URL', 'SMTP_URL']);

function shownValue(name: string, value: unknown): string {
  if (typeof value !== 'string') return JSON.stringify(value);
  if (SECRET_VARIABLES.has(name)) return `a value of ${value.length} characters, not shown`;
  if (URL_VARIABLES.has(name))
    return JSON.stringify(value.replace(/:.*@/, ':***@').replace(/([?&]password=)[^&#]*/gi, '$1***'));
  return JSON.stringify(value);
}

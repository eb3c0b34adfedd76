import { Writable } from 'node:stream';
import type { FastifyInstance, InjectOptions } from 'fastify';
import pg from 'pg';
import { inject } from 'vitest';
import { buildApp } from '../src/app.js';
import { keyringOf, loginRoleFor } from '../src/boot.js';
import { loadConfig } from '../src/config.js';
import type { AppContext, Environment } from '../src/context.js';
import { createPool } from '../src/lib/db.js';
import { loginUrl } from '../src/lib/login-role.js';
import { createLogger } from '../src/lib/logger.js';
import { createOrganization } from '../src/modules/organizations/organizations.service.js';
import { closeLedger, watchLedger } from './ledger-of-file.js';
import { responseChecker } from './openapi-responses.js';

/** Test settings: fixed secrets, a temp data dir, private-network webhooks allowed unless overridden. */
export const OPERATOR_TOKEN = 'test-operator-token-0123456789abcdef';

/** The data encryption key of test apps and of the processes tests start (set for every test file in vitest.config.ts). */
export const TEST_DATA_ENCRYPTION_KEY =
  process.env.DATA_ENCRYPTION_KEY || 'dGVzdC1kYXRhLWVuY3J5cHRpb24ta2V5LTMyLWJ5dGU=';

/** A running app on its own database cloned from the migrated template. */
export interface TestApp {
  app: FastifyInstance;
  ctx: AppContext;
  /** Every JSON log line the app wrote (for "logs never contain secrets" checks). */
  logs: string[];
  /** A fresh organization with a live and a test key. */
  newTenant(name?: string): Promise<TestTenant>;
  /** Operator admin API call with the operator token. */
  admin(method: InjectOptions['method'], url: string, payload?: unknown): Promise<Response>;
  close(): Promise<void>;
}

/** A fresh tenant and helpers that call the integrator API with its keys. */
export interface TestTenant {
  organizationId: string;
  keys: Record<Environment, string>;
  keyIds: Record<Environment, string>;
  /** Calls `/test/v1` (default) or `/v1` with this tenant's key for that environment. */
  api(
    method: InjectOptions['method'],
    path: string,
    payload?: unknown,
    opts?: { env?: Environment; headers?: Record<string, string> },
  ): Promise<Response>;
}

/** The parts of a light-my-request response the tests read. */
interface Response {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  json<T = any>(): T;
}

let counter = 0;

/**
 * Builds the app against a fresh database cloned from the template. Pass `env` to override configuration
 * variables (e.g. WEBHOOK_RETRY_SCHEDULE); a variable given as `undefined` is left unset, so its default applies.
 * Close it in afterAll.
 */
export async function createTestApp(env: Record<string, string | undefined> = {}): Promise<TestApp> {
  const adminUrl = inject('pgAdminUrl');
  const template = inject('pgTemplate');
  const dbName = `fcs_t_${process.pid}_${Date.now().toString(36)}_${counter++}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${dbName} TEMPLATE ${template}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${dbName}`;
  const settings: Record<string, string | undefined> = {
    DATABASE_URL: url.toString(),
    OPERATOR_TOKEN,
    FILE_URL_SECRET: 'test-file-url-secret-0123456789',
    DATA_DIR: `.data/test-run/${dbName}`,
    LOG_LEVEL: 'info',
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    DATA_ENCRYPTION_KEY: TEST_DATA_ENCRYPTION_KEY,
    // The password test/global-setup.ts gave the login role (vitest.config.ts).
    DATABASE_APP_PASSWORD: process.env.DATABASE_APP_PASSWORD,
    // The owner's rights, so tests may add constraints or triggers to provoke failures; the service role is tested
    // with DATABASE_SERVICE_ROLE=fcs_service (service-role.test.ts, whose pool logs in as fcs_app) and by every test
    // that starts a real process.
    DATABASE_SERVICE_ROLE: 'none',
    // Far above what any test sends, so only the rate-limit tests (which set their own) ever see a 429.
    ...Object.fromEntries(
      [
        'API_REQUESTS',
        'ADMIN_REQUESTS',
        'ADMIN_AUTH_FAILURES',
        'AUTH_FAILURES',
        'DASHBOARD_REQUESTS',
        'SIGN_IN_ATTEMPTS',
        'MAGIC_LINK_OPENS',
        'WEBHOOK_TESTS',
        'WEBHOOK_RESENDS',
      ].map((n) => [`RATE_LIMIT_${n}`, '1000000']),
    ),
    WEBHOOK_ENDPOINTS_MAX: '1000000',
    // Sign-ins run back to back in many tests; the CPU budget of password checks (AUTH-8) has its own test.
    PASSWORD_HASH_CPU_PERCENT: '100',
    // A check on a machine crushed by other test files may take seconds: only the tests of the answer bound (AUTH-8,
    // which set it back to the default) see a sign-in answered busy.
    SIGN_IN_ANSWER_MS: '60000',
    ...env,
  };
  const config = loadConfig(
    Object.fromEntries(Object.entries(settings).filter((e): e is [string, string] => e[1] !== undefined)),
  );
  // Connected as boot() connects: the login role when a service role is set (the template's build created it).
  const login = loginRoleFor(config, false);
  const pool = createPool(login ? loginUrl(config.databaseUrl!, login) : config.databaseUrl!, 10);
  const logs: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      logs.push(String(chunk));
      cb();
    },
  });
  watchLedger(dbName, pool);
  const log = createLogger('silent');
  const ctx: AppContext = {
    config,
    pool,
    log,
    secrets: { operatorToken: OPERATOR_TOKEN, fileUrlSecret: config.fileUrlSecret!, dataKeys: keyringOf(config) },
  };
  const app = await buildApp(ctx, { logger: { stream } });
  await app.ready();

  // Every integrator API answer is checked against the app's own OpenAPI document (test/openapi-responses.ts).
  const openapi = responseChecker(app);
  const call = async (options: InjectOptions): Promise<Response> => {
    const res = await app.inject(options);
    openapi.check(String(options.method ?? 'GET'), String(options.url), res);
    return {
      statusCode: res.statusCode,
      headers: res.headers as Response['headers'],
      body: res.body,
      json: () => JSON.parse(res.body),
    };
  };

  return {
    app,
    ctx,
    logs,
    admin: (method, path, payload) =>
      call({
        method,
        url: `/admin/v1${path}`,
        payload: payload as InjectOptions['payload'],
        headers: { authorization: `Bearer ${OPERATOR_TOKEN}` },
      }),
    async newTenant(name = 'Test Org') {
      const { organization, apiKeys } = await createOrganization(pool, name);
      const keys = { live: apiKeys.live.key, test: apiKeys.test.key };
      return {
        organizationId: organization.id,
        keys,
        keyIds: { live: apiKeys.live.id, test: apiKeys.test.id },
        api: (method, path, payload, opts = {}) => {
          const env = opts.env ?? 'test';
          const prefix = env === 'live' ? '/v1' : '/test/v1';
          return call({
            method,
            url: `${prefix}${path}`,
            payload: payload as InjectOptions['payload'],
            headers: { 'x-api-key': keys[env], ...opts.headers },
          });
        },
      };
    },
    async close() {
      await app.close();
      // Read before the database is dropped: the after-each-file check asserts it was empty.
      await closeLedger(dbName, pool);
      await pool.end();
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => undefined);
      await c.end();
    },
  };
}

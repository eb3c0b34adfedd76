import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, quickStartEnv } from '../src/config.js';
import { livePaymentsStatus } from '../src/modules/payments/payments.service.js';

// Configuration from environment variables, validated once at boot with clear errors.
describe('configuration', () => {
  it('has the documented defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      port: 3000,
      databaseUrl: null,
      operatorToken: null,
      liveBaseUrl: 'http://localhost:3000/v1',
      testBaseUrl: 'http://localhost:3000/test/v1',
      logLevel: 'info',
    });
    expect(c.host).toEqual(expect.any(String));
  });

  it('refuses private webhook addresses by default, with or without DATABASE_URL, unless set', () => {
    expect(loadConfig({}).webhookAllowPrivateNetworks).toBe(false);
    expect(
      loadConfig({ DATABASE_URL: 'postgres://x@h/db', DATA_ENCRYPTION_KEY: 'ab'.repeat(32) })
        .webhookAllowPrivateNetworks,
    ).toBe(false);
    expect(loadConfig({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' }).webhookAllowPrivateNetworks).toBe(true);
  });

  it('the embedded quick start turns private webhook addresses on and says so; an explicit setting or DATABASE_URL wins', () => {
    const quick = quickStartEnv({});
    expect(quick.turnedOn).toEqual(['WEBHOOK_ALLOW_PRIVATE_NETWORKS=true']);
    expect(loadConfig(quick.env).webhookAllowPrivateNetworks).toBe(true);
    expect(quickStartEnv({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' })).toEqual({
      env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' },
      turnedOn: [],
    });
    const deployed = quickStartEnv({ DATABASE_URL: 'postgres://x@h/db', DATA_ENCRYPTION_KEY: 'ab'.repeat(32) });
    expect(deployed.turnedOn).toEqual([]);
    expect(loadConfig(deployed.env).webhookAllowPrivateNetworks).toBe(false);
  });

  it('derives the default base addresses from PORT and takes the given ones', () => {
    expect(loadConfig({ PORT: '8080' })).toMatchObject({
      port: 8080,
      liveBaseUrl: 'http://localhost:8080/v1',
      testBaseUrl: 'http://localhost:8080/test/v1',
    });
    expect(
      loadConfig({ LIVE_BASE_URL: 'https://api.example.com/v1/', TEST_BASE_URL: 'https://api.example.com/test/v1' }),
    ).toMatchObject({ liveBaseUrl: 'https://api.example.com/v1', testBaseUrl: 'https://api.example.com/test/v1' });
  });

  it('stops at boot when a base address does not end in /v1 or both have the same path, naming the variable', () => {
    expect(() => loadConfig({ TEST_BASE_URL: 'https://sandbox.example.com/api' })).toThrow(
      /TEST_BASE_URL: its path must end in \/v1 \(it is \/api\)/,
    );
    expect(() => loadConfig({ LIVE_BASE_URL: 'https://api.example.com/' })).toThrow(/LIVE_BASE_URL: its path must end/);
    expect(() =>
      loadConfig({ LIVE_BASE_URL: 'https://api.example.com/v1', TEST_BASE_URL: 'https://sandbox.example.com/v1' }),
    ).toThrow(/must have different paths/);
  });

  it('takes an OPERATOR_TOKEN of 32 characters or more, and stops on a shorter one without printing it', () => {
    const long = 'operator-secret-0123456789abcdefg';
    expect(loadConfig({ OPERATOR_TOKEN: long }).operatorToken).toBe(long);
    let error: unknown;
    try {
      loadConfig({ OPERATOR_TOKEN: 'operator-secret' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain('OPERATOR_TOKEN: must be at least 32 characters');
    expect((error as Error).message).not.toContain('operator-secret');
  });

  it('has documented rate limits, each configurable', () => {
    expect(loadConfig({}).rateLimits).toEqual({
      windowSeconds: 60,
      apiRequests: 1200,
      adminRequests: 300,
      adminAuthFailures: 10,
      authFailures: 20,
      dashboardRequests: 120,
      signInAttempts: 10,
      magicLinkOpens: 30,
      syncMs: 250,
      webhookTestsPerMinute: 10,
      webhookResendsPerMinute: 60,
    });
    expect(loadConfig({}).webhookEndpointsMax).toBe(20);
    expect(loadConfig({ RATE_LIMIT_API_REQUESTS: '50', RATE_LIMIT_WINDOW_SECONDS: '10' }).rateLimits).toMatchObject({
      apiRequests: 50,
      windowSeconds: 10,
    });
    expect(() => loadConfig({ RATE_LIMIT_API_REQUESTS: '0' })).toThrow(/RATE_LIMIT_API_REQUESTS/);
    expect(loadConfig({ RATE_LIMIT_AUTH_FAILURES: '5', RATE_LIMIT_DASHBOARD_REQUESTS: '40' }).rateLimits).toMatchObject(
      { authFailures: 5, dashboardRequests: 40 },
    );
    expect(() => loadConfig({ RATE_LIMIT_AUTH_FAILURES: '0' })).toThrow(/RATE_LIMIT_AUTH_FAILURES/);
    expect(() => loadConfig({ RATE_LIMIT_DASHBOARD_REQUESTS: 'many' })).toThrow(/RATE_LIMIT_DASHBOARD_REQUESTS/);
  });

  it('refuses bad values with an error naming every bad variable', () => {
    let error: unknown;
    try {
      loadConfig({ PORT: 'eighty', LOG_LEVEL: 'loud', DATABASE_URL: 'mysql://x' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    for (const name of ['PORT', 'LOG_LEVEL', 'DATABASE_URL']) expect(message).toContain(name);
  });

  it("takes TRUST_PROXY as a hop count or the proxies' addresses, and refuses true naming the forms (SEC-8)", () => {
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toEqual({ hops: 2 });
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 192.168.1.5,loopback' }).trustProxy).toEqual({
      addresses: ['10.0.0.0/8', '192.168.1.5', 'loopback'],
    });
    const refusal = (value: string) => {
      try {
        loadConfig({ TRUST_PROXY: value });
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        return (err as Error).message;
      }
      throw new Error(`TRUST_PROXY=${value} was accepted`);
    };
    const forTrue = refusal('true');
    expect(forTrue).toContain('TRUST_PROXY');
    expect(forTrue).toContain('X-Forwarded-For');
    expect(forTrue).toMatch(/number of proxies.*e\.g\. 1.*addresses.*CIDR.*10\.0\.0\.0\/8/);
    expect(refusal('10.0.0.0/8,proxy.internal')).toMatch(/TRUST_PROXY: invalid IP address: proxy\.internal/);
    expect(refusal('10.0.0.1/99')).toMatch(/TRUST_PROXY: invalid range on address: 10\.0\.0\.1\/99/);
  });

  it('names a refused secret or connection URL without printing the secret', () => {
    let error: unknown;
    try {
      loadConfig({
        FILE_URL_SECRET: 'short-s3cret',
        DATABASE_URL: 'postgress://app:db-Pa55word@db.internal/fcs',
        SMTP_URL: 'smtp+tls://mailer:smtp-Pa55@mail.internal:587',
      });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    for (const name of ['FILE_URL_SECRET', 'DATABASE_URL', 'SMTP_URL']) expect(message).toContain(name);
    for (const secret of ['short-s3cret', 'db-Pa55word', 'smtp-Pa55']) expect(message).not.toContain(secret);
    expect(message).toContain('db.internal');
  });

  it('bounds HTTP requests and shutdown by default, and keeps header time within request time', () => {
    expect(loadConfig({})).toMatchObject({
      shutdownTimeoutMs: 10000,
      httpRequestTimeoutMs: 30000,
      httpHeadersTimeoutMs: 10000,
      httpKeepAliveTimeoutMs: 65000,
      httpBodyIdleTimeoutMs: 5000,
      databaseConnectTimeoutMs: 5000,
      metricsPort: null,
    });
    expect(loadConfig({ HTTP_REQUEST_TIMEOUT_MS: '4000' }).httpHeadersTimeoutMs).toBe(4000);
    expect(loadConfig({ HTTP_BODY_IDLE_TIMEOUT_MS: '2000' }).httpBodyIdleTimeoutMs).toBe(2000);
    expect(() => loadConfig({ HTTP_BODY_IDLE_TIMEOUT_MS: '0' })).toThrow(/HTTP_BODY_IDLE_TIMEOUT_MS/);
    expect(() => loadConfig({ HTTP_REQUEST_TIMEOUT_MS: '4000', HTTP_HEADERS_TIMEOUT_MS: '5000' })).toThrow(
      /HTTP_HEADERS_TIMEOUT_MS/,
    );
    expect(() => loadConfig({ HTTP_REQUEST_TIMEOUT_MS: '0' })).toThrow(/HTTP_REQUEST_TIMEOUT_MS/);
  });

  // WH-17: an organization's share of a process's webhook attempts.
  it('gives one organization a quarter of the webhook slots by default, at least 1, and refuses a bad share', () => {
    expect(loadConfig({})).toMatchObject({ webhookConcurrency: 100, webhookOrganizationConcurrency: 25 });
    expect(loadConfig({ WEBHOOK_CONCURRENCY: '10' }).webhookOrganizationConcurrency).toBe(2);
    expect(loadConfig({ WEBHOOK_CONCURRENCY: '3' }).webhookOrganizationConcurrency).toBe(1);
    expect(loadConfig({ WEBHOOK_ORGANIZATION_CONCURRENCY: '40' }).webhookOrganizationConcurrency).toBe(40);
    for (const bad of ['0', '-1', 'many', '2.5'])
      expect(() => loadConfig({ WEBHOOK_ORGANIZATION_CONCURRENCY: bad })).toThrow(/WEBHOOK_ORGANIZATION_CONCURRENCY/);
  });

  // ORD-EIN-9: the sealed tax id of a filed or cancelled EIN order is kept this many days.
  it('keeps EIN tax ids 30 days after filing by default, takes 0 to 9999 days, and names a bad value', () => {
    expect(loadConfig({}).taxIdRetentionDays).toBe(30);
    expect(loadConfig({ TAX_ID_RETENTION_DAYS: '0' }).taxIdRetentionDays).toBe(0);
    expect(loadConfig({ TAX_ID_RETENTION_DAYS: '90' }).taxIdRetentionDays).toBe(90);
    for (const bad of ['-1', 'thirty', '10000', '1.5'])
      expect(() => loadConfig({ TAX_ID_RETENTION_DAYS: bad }), bad).toThrow(/TAX_ID_RETENTION_DAYS/);
  });

  // PAY-1: live card payments need both Stripe settings; the API address defaults to Stripe's own.
  it("turns live card payments on with both Stripe settings, defaulting to Stripe's API, and says which state it is in", () => {
    const off = loadConfig({});
    expect(off.stripe).toBeNull();
    expect(livePaymentsStatus(off)).toMatchObject({
      level: 'warn',
      message: expect.stringContaining('STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET are not set'),
    });
    const live = loadConfig({
      STRIPE_SECRET_KEY: 'sk_live_0123456789abcdef',
      STRIPE_WEBHOOK_SECRET: 'whsec_0123456789abcdef',
    });
    expect(live.stripe).toEqual({
      secretKey: 'sk_live_0123456789abcdef',
      webhookSecret: 'whsec_0123456789abcdef',
      apiBaseUrl: 'https://api.stripe.com',
    });
    expect(livePaymentsStatus(live)).toEqual({
      level: 'info',
      message: 'live card payments through Stripe (API https://api.stripe.com)',
    });
    const standIn = loadConfig({
      STRIPE_SECRET_KEY: 'sk_test_0123456789abcdef',
      STRIPE_WEBHOOK_SECRET: 'whsec_0123456789abcdef',
      STRIPE_API_BASE_URL: 'http://127.0.0.1:4100/',
    });
    expect(standIn.stripe?.apiBaseUrl).toBe('http://127.0.0.1:4100');
    expect(livePaymentsStatus(standIn)).toMatchObject({ level: 'warn', message: expect.stringContaining('TEST mode') });
    expect(() => loadConfig({ STRIPE_WEBHOOK_SECRET: 'whsec_0123456789abcdef' })).toThrow(
      /STRIPE_SECRET_KEY: required when STRIPE_WEBHOOK_SECRET is set/,
    );
    expect(() =>
      loadConfig({ STRIPE_SECRET_KEY: 'pk_live_0123456789abcdef', STRIPE_WEBHOOK_SECRET: 'whsec_0123456789abcdef' }),
    ).toThrow(/STRIPE_SECRET_KEY/);
  });

  it('bounds top-ups by TOP_UP_MIN and TOP_UP_MAX in dollars, 10 and 50000 by default, and names a bad one (FUND-3)', () => {
    expect(loadConfig({}).topUps).toEqual({ minCents: 1000, maxCents: 5_000_000 });
    expect(loadConfig({ TOP_UP_MIN: '25.50', TOP_UP_MAX: '1000' }).topUps).toEqual({
      minCents: 2550,
      maxCents: 100_000,
    });
    for (const [env, named] of [
      [{ TOP_UP_MIN: '0' }, /TOP_UP_MIN: must be more than 0/],
      [{ TOP_UP_MIN: 'ten' }, /TOP_UP_MIN/],
      [{ TOP_UP_MAX: '12.345' }, /TOP_UP_MAX/],
      [{ TOP_UP_MIN: '500', TOP_UP_MAX: '100' }, /TOP_UP_MIN \(500\) must not exceed TOP_UP_MAX \(100\)/],
      [{ TOP_UP_MAX: '2000000' }, /TOP_UP_MAX: must be at most 1000000 dollars/],
    ] as const)
      expect(() => loadConfig(env), JSON.stringify(env)).toThrow(named);
  });

  it('binds the unauthenticated metrics port to 127.0.0.1 whatever HOST is, unless METRICS_HOST says otherwise', () => {
    expect(loadConfig({ HOST: '0.0.0.0', METRICS_PORT: '9100' })).toMatchObject({
      host: '0.0.0.0',
      metricsPort: 9100,
      metricsHost: '127.0.0.1',
    });
    for (const host of ['0.0.0.0', '10.0.0.7', '::', 'fd00::2', 'metrics.internal'])
      expect(loadConfig({ METRICS_HOST: host }).metricsHost).toBe(host);
    for (const bad of ['127.0.0.1:9100', 'http://10.0.0.7', '10.0.0.7/24', ' '])
      expect(() => loadConfig({ METRICS_HOST: bad }), bad).toThrow(/METRICS_HOST/);
  });

  // SEC-3: the pools log in as DATABASE_APP_ROLE, a member of DATABASE_SERVICE_ROLE only, with DATABASE_APP_PASSWORD.
  it('takes the login role and its password, refusing a bad name, a weak password (unshown) or the service role itself', () => {
    const password = 'app-role-Pa55word-0123456789';
    expect(loadConfig({ DATABASE_APP_ROLE: 'fcs_web', DATABASE_APP_PASSWORD: password })).toMatchObject({
      databaseAppRole: 'fcs_web',
      databaseAppPassword: password,
    });
    expect(() => loadConfig({ DATABASE_APP_ROLE: 'fcs_app; DROP ROLE x' })).toThrow(/DATABASE_APP_ROLE/);
    expect(() => loadConfig({ DATABASE_APP_ROLE: 'fcs_service' })).toThrow(
      /DATABASE_APP_ROLE: must differ from DATABASE_SERVICE_ROLE/,
    );
    for (const weak of ['short-Pa55', 'spaces are not taken here'])
      expect(() => loadConfig({ DATABASE_APP_PASSWORD: weak })).toThrow(
        expect.objectContaining({ message: expect.not.stringContaining(weak) }),
      );
    expect(() => loadConfig({ DATABASE_APP_PASSWORD: 'short-Pa55' })).toThrow(
      /DATABASE_APP_PASSWORD: .*a value of 10 characters, not shown/,
    );
  });
});

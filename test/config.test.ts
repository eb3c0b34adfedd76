import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';

// Issue 2 item 2: configuration from environment variables, validated once at boot with clear errors.
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

  it('derives the default base addresses from PORT and takes the given ones', () => {
    expect(loadConfig({ PORT: '8080' })).toMatchObject({ port: 8080, liveBaseUrl: 'http://localhost:8080/v1', testBaseUrl: 'http://localhost:8080/test/v1' });
    expect(loadConfig({ LIVE_BASE_URL: 'https://api.example.com/v1/', TEST_BASE_URL: 'https://api.example.com/test/v1' }))
      .toMatchObject({ liveBaseUrl: 'https://api.example.com/v1', testBaseUrl: 'https://api.example.com/test/v1' });
  });

  it('accepts any non-empty OPERATOR_TOKEN, short ones included (a test rig may pick one)', () => {
    expect(loadConfig({ OPERATOR_TOKEN: 'operator-secret' }).operatorToken).toBe('operator-secret');
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
      databaseConnectTimeoutMs: 5000,
      metricsPort: null,
    });
    expect(loadConfig({ HTTP_REQUEST_TIMEOUT_MS: '4000' }).httpHeadersTimeoutMs).toBe(4000);
    expect(() => loadConfig({ HTTP_REQUEST_TIMEOUT_MS: '4000', HTTP_HEADERS_TIMEOUT_MS: '5000' })).toThrow(/HTTP_HEADERS_TIMEOUT_MS/);
    expect(() => loadConfig({ HTTP_REQUEST_TIMEOUT_MS: '0' })).toThrow(/HTTP_REQUEST_TIMEOUT_MS/);
  });
});

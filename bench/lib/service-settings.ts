/**
 * The settings the bench runs the service with, beside its environment: fixed secrets (the bench's databases are
 * thrown away) and rate limits no bench load reaches. The limiter still runs on every request, so its cost is part of
 * what is measured. `dataDir`: where the service keeps its files.
 */
export function benchServiceSettings(dataDir: string): Record<string, string> {
  return {
    LOG_LEVEL: 'warn',
    OPERATOR_TOKEN: 'bench-operator-token-0123456789abcdef',
    FILE_URL_SECRET: 'bench-file-url-secret-0123',
    DATA_DIR: dataDir,
    DATA_ENCRYPTION_KEY: 'YmVuY2gtZGF0YS1lbmNyeXB0aW9uLWtleS0zMmJ5dGU=',
    // The pools' login role (SEC-3) gets this password, which an embedded bench server asks for.
    DATABASE_APP_PASSWORD: 'bench-app-role-password-0123456789',
    RATE_LIMIT_API_REQUESTS: '1000000000',
    RATE_LIMIT_ADMIN_REQUESTS: '1000000000',
    RATE_LIMIT_SIGN_IN_ATTEMPTS: '1000000000',
    RATE_LIMIT_AUTH_FAILURES: '1000000000',
    RATE_LIMIT_DASHBOARD_REQUESTS: '1000000000',
  };
}

import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    // After each file: every balance equals the sum of its ledger entries (test/ledger-check.setup.ts).
    setupFiles: ['test/ledger-check.setup.ts'],
    // DATABASE_URL requires a data encryption key: every app and process a test starts gets this one. The login role's
    // password too (test/global-setup.ts gives it to fcs_app), for a suite server that asks for one (the embedded).
    env: {
      DATA_ENCRYPTION_KEY: 'dGVzdC1kYXRhLWVuY3J5cHRpb24ta2V5LTMyLWJ5dGU=',
      DATABASE_APP_PASSWORD: 'test-app-role-password-0123456789',
    },
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Files run one after another in each fork without a fresh module graph each: loading the app for every file
    // (about 2 s of CPU each) cost a third of the suite's time. Tests keep no state in modules between files (each
    // builds its own app and database: test/harness.ts), which a full run with isolation off confirmed.
    isolate: false,
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    reporters: ['default'],
  },
});

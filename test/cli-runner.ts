import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { OPERATOR_TOKEN, type TestApp } from './harness.js';
import { compiledEntry } from './service-process.js';

const run = promisify(execFile);

/** What one CLI run printed and its exit code. */
export interface CliResult {
  stdout: string;
  stderr: string;
  code: number;
}

/**
 * Runs the real CLI (src/cli.ts, compiled once per run by test/global-setup.ts, see test/compiled-src.ts) against the test app's database and data directory; `env` adds or
 * overrides environment variables. Never throws on a non-zero exit: the code is in the result.
 */
export async function runCli(t: TestApp, args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  const full = {
    ...process.env,
    DATABASE_URL: t.ctx.config.databaseUrl!,
    OPERATOR_TOKEN,
    FILE_URL_SECRET: t.ctx.config.fileUrlSecret!,
    DATA_DIR: t.ctx.config.dataDir,
    LOG_LEVEL: 'silent',
    ...env,
  };
  try {
    // The compiled sources rather than `node --import tsx src/cli.ts`: tsx's loader costs about two seconds of CPU per
    // run, times every CLI run of the suite. `npm run cli` itself, through tsx, is run by admin-organizations.test.ts.
    const { stdout, stderr } = await run(process.execPath, [compiledEntry('src/cli.ts'), ...args], {
      env: full,
      timeout: 60_000,
    });
    return { stdout, stderr, code: 0 };
  } catch (err) {
    const e = err as { stdout: string; stderr: string; code: number };
    return { stdout: e.stdout, stderr: e.stderr, code: e.code };
  }
}

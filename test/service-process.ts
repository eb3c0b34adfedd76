import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { inject } from 'vitest';

/** A service entry point (`src/server.ts`, `src/worker-main.ts`) running as its own OS process. */
export interface ServiceProcess {
  child: ChildProcess;
  /** Every stdout line so far (JSON log lines and the first-start banner). */
  stdout: string[];
  /** Everything written to stderr so far. */
  stderr(): string;
  /** Resolves when the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The parsed JSON log lines so far. */
  logs(): Array<Record<string, unknown> & { level: number; msg: string }>;
  /** Waits for a log line whose message matches, failing loudly after `timeoutMs`. */
  waitForLog(msg: RegExp, timeoutMs?: number): Promise<Record<string, unknown> & { level: number; msg: string }>;
  /** SIGKILLs the process if it is still running (afterAll safety net). */
  kill(): void;
}

/**
 * Spawns an entry point with `env` added to a minimal environment (no DATABASE_URL or PORT inherited from the
 * test runner) and a throw-away DATA_DIR. `loader` 'compiled' (the default) runs the entry from the run's compiled
 * sources ({@link compiledEntry}), which start on a fraction of the CPU tsx's loader takes; 'tsx' runs it the way
 * `npm start` and `npm run worker` do (`node --import tsx src/server.ts`).
 */
export function spawnService(
  entry: string,
  env: Record<string, string>,
  loader: 'compiled' | 'tsx' = 'compiled',
): ServiceProcess {
  return spawnCommand(process.execPath, loader === 'tsx' ? ['--import', 'tsx', entry] : [compiledEntry(entry)], env);
}

/**
 * The compiled JavaScript file of a source file of this checkout (`src/cli.ts` -> `<compiledRoot>/src/cli.js`), from
 * the sources test/global-setup.ts compiled for this run (test/compiled-src.ts).
 */
export function compiledEntry(source: string): string {
  return path.join(inject('compiledRoot'), source.replace(/\.ts$/, '.js'));
}

/**
 * Spawns any command the way {@link spawnService} spawns an entry point (same minimal environment, throw-away
 * DATA_DIR), e.g. `npm start` itself, to see what an operator sees when npm is the process they signal.
 * @param cwd working directory (default: this checkout).
 */
export function spawnCommand(file: string, args: string[], env: Record<string, string>, cwd?: string): ServiceProcess {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fcs-proc-'));
  const child = spawn(file, args, {
    cwd,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/',
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      DATA_ENCRYPTION_KEY: process.env.DATA_ENCRYPTION_KEY ?? '',
      // The login role's password the suite's server knows (vitest.config.ts; SEC-3).
      DATABASE_APP_PASSWORD: process.env.DATABASE_APP_PASSWORD ?? '',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stdout: string[] = [];
  let stderr = '';
  let partial = '';
  child.stdout!.on('data', (chunk) => {
    const lines = (partial + String(chunk)).split('\n');
    partial = lines.pop()!;
    stdout.push(...lines);
  });
  child.stderr!.on('data', (chunk) => (stderr += String(chunk)));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => {
      if (partial) stdout.push(partial);
      fs.rmSync(dataDir, { recursive: true, force: true });
      resolve({ code, signal });
    });
  });
  const logs = () =>
    stdout
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown> & { level: number; msg: string });
  return {
    child,
    stdout,
    stderr: () => stderr,
    exited,
    logs,
    async waitForLog(msg, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = logs().find((l) => msg.test(l.msg));
        if (found) return found;
        if (child.exitCode !== null || Date.now() > deadline) {
          throw new Error(
            `No log line matching ${msg} (exit code ${child.exitCode}); stderr: ${stderr}\nstdout: ${stdout.join('\n')}`,
          );
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}

/** The port of the HTTP server from its "Server listening at http://127.0.0.1:<port>" log line. */
export async function listeningPort(service: ServiceProcess): Promise<number> {
  const line = await service.waitForLog(/^Server listening at http:\/\/127\.0\.0\.1:\d+$/);
  return Number(/:(\d+)$/.exec(line.msg)![1]);
}

/** Resolves with the exit of `service`, or fails after `timeoutMs` naming what it printed. */
export async function exitOf(
  service: ServiceProcess,
  timeoutMs = 30_000,
): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`Process did not exit within ${timeoutMs} ms; stderr: ${service.stderr()}`)),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([service.exited, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

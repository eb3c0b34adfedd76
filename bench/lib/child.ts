import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';

/** A server started in its own Node process, so the load generator never shares its event loop. */
export interface ChildServer {
  /** What the child printed after `READY ` (usually its base URL). */
  url: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/**
 * Node's CPU profiler for every child when BENCH_CPU_PROFILE_DIR is set: each writes a `.cpuprofile` there as it
 * stops (Chrome DevTools or speedscope open it). Node refuses `--cpu-prof` in NODE_OPTIONS, hence this variable.
 */
function profilerArgs(): string[] {
  const dir = process.env.BENCH_CPU_PROFILE_DIR;
  return dir ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(dir)}`] : [];
}

/**
 * Runs `script` (a TypeScript file under bench/, through tsx) with `env` and waits until it prints a line
 * `READY <url>` on stdout. Its stderr is passed through. @throws when the child exits first or takes over 180 s.
 */
export function startChild(script: string, env: Record<string, string>): Promise<ChildServer> {
  const child = spawn(process.execPath, [...profilerArgs(), '--import', 'tsx', path.resolve('bench', script)], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    // Migrations and tsx's first compile take a while on a loaded machine; a child that never gets ready is killed.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${script} did not print READY within 180 s`));
    }, 180_000);
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code} before it was ready`)));
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      if (!line.startsWith('READY ')) return void process.stdout.write(`  [${script}] ${line}\n`);
      clearTimeout(timer);
      resolve({
        url: line.slice(6).trim(),
        process: child,
        stop: () =>
          new Promise<void>((done) => {
            if (child.exitCode !== null) return done();
            child.once('exit', () => done());
            child.kill('SIGTERM');
          }),
      });
    });
  });
}

import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fleetEnv } from './fleet.js';
import { createTestApp, type TestApp } from './harness.js';
import { exitOf, listeningPort, spawnCommand, type ServiceProcess } from './service-process.js';

// Production runs the compiled dist/ from `npm ci --omit=dev`: `npm run build` must produce it, and what it imports
// must be production dependencies only (no tsx, no TypeScript tooling). The build writes this checkout's dist/, as
// `npm run build` does for a user.
const DIST = path.resolve('dist');
let t: TestApp;
const started: ServiceProcess[] = [];
beforeAll(async () => {
  t = await createTestApp();
  await promisify(execFile)('npm', ['run', 'build'], {
    env: { ...process.env, npm_config_update_notifier: 'false' },
    timeout: 300_000,
  });
}, 320_000);
afterAll(async () => {
  for (const s of started) s.kill();
  await t?.close();
});

function compiledFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? compiledFiles(p) : p.endsWith('.js') ? [p] : [];
  });
}

/** The package a bare import specifier names: `@scope/name/sub` -> `@scope/name`, `name/sub` -> `name`. */
const packageOf = (specifier: string) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');

describe('npm run build', () => {
  it('compiles every entry point to dist/, which imports production dependencies only', () => {
    for (const entry of ['server.js', 'worker-main.js', 'cli.js'])
      expect(fs.existsSync(path.join(DIST, entry)), entry).toBe(true);
    const pkg = JSON.parse(fs.readFileSync('package.json', 'utf8')) as { dependencies: Record<string, string> };
    const builtins = new Set(builtinModules);
    const imported = new Map<string, string>();
    for (const file of compiledFiles(DIST)) {
      const code = fs.readFileSync(file, 'utf8');
      const specifiers = [
        ...code.matchAll(/^\s*(?:import|export)\s[^;]*?\sfrom\s*['"]([^'"]+)['"]/gm), // import … from, export … from
        ...code.matchAll(/^\s*import\s*['"]([^'"]+)['"]/gm), // import 'x' (side effects only)
        ...code.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g), // import('x')
      ].map((m) => m[1]!);
      for (const specifier of specifiers) {
        if (specifier.startsWith('.') || specifier.startsWith('node:') || builtins.has(specifier)) continue;
        imported.set(packageOf(specifier), path.relative(DIST, file));
      }
    }
    expect(imported.size).toBeGreaterThan(10);
    const notProduction = [...imported]
      .filter(([name]) => !(name in pkg.dependencies))
      .map(([name, file]) => `${name} (${file})`);
    expect(notProduction).toEqual([]);
  });

  it.each([
    ['start:prod', 'dist/server.js', /^Server listening at /],
    ['worker:prod', 'dist/worker-main.js', /^worker started$/],
  ])(
    'npm run %s runs %s with plain node and stops cleanly on SIGTERM',
    async (script, file, ready) => {
      const proc = spawnCommand('npm', ['run', script], {
        ...fleetEnv(t.ctx.config.databaseUrl!),
        PORT: '0',
        LOG_LEVEL: 'info',
        npm_config_update_notifier: 'false',
      });
      started.push(proc);
      const pid = (await proc.waitForLog(ready, 120_000)).pid as number;
      if (fs.existsSync('/proc/self/cmdline')) {
        const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
        expect(cmdline).toContain(file);
        expect(cmdline.join(' ')).not.toMatch(/tsx/);
      }
      if (script === 'start:prod')
        expect((await fetch(`http://127.0.0.1:${await listeningPort(proc)}/readyz`)).status).toBe(200);
      proc.child.kill('SIGTERM');
      expect(await exitOf(proc)).toEqual({ code: 0, signal: null });
      expect(proc.logs().filter((l) => l.level >= 50)).toEqual([]);
      expect(proc.logs().at(-1)).toMatchObject({ msg: 'stopped', forced: false });
    },
    180_000,
  );
});

import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

/*
 * The SDK as another project gets it (sdk/README.md, "Install"): `npm pack ./sdk` builds dist/ (prepack) into a
 * tarball, which a clean project outside the repository installs and imports. No install script runs there.
 */

const run = promisify(execFile);
const npm = (args: string[], cwd: string) =>
  run('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], { cwd, timeout: 240_000 });

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fcs-sdk-package-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('the SDK package', () => {
  it('packs with its built code, installs into a clean project and imports there', async () => {
    const { stdout } = await npm(['pack', path.resolve('sdk'), '--pack-destination', dir], process.cwd());
    const tarball = path.join(dir, stdout.trim().split('\n').pop()!);
    expect(fs.existsSync(tarball)).toBe(true);

    const project = path.join(dir, 'project');
    fs.mkdirSync(project);
    fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'consumer', type: 'module' }));
    await npm(['install', '--prefer-offline', tarball], project);
    fs.writeFileSync(
      path.join(project, 'main.js'),
      `import { FilingCompliance } from '@filing-compliance/sdk';
const fc = new FilingCompliance({ apiKey: 'sk_test_x', baseUrls: { test: 'http://127.0.0.1:9/test/v1' } });
console.log(typeof fc.createOrder, typeof fc.webhooks.constructEvent);
`,
    );
    const imported = await run(process.execPath, ['main.js'], { cwd: project });
    expect(imported.stdout.trim()).toBe('function function');
    // Its types come along: dist/index.d.ts is in the package.
    expect(fs.existsSync(path.join(project, 'node_modules/@filing-compliance/sdk/dist/index.d.ts'))).toBe(true);
  }, 300_000);
});

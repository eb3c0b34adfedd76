import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

/*
 * The main job as the READMEs show it in SDK code must stay true to the SDK: each snippet is type-checked, as an
 * integrator's module importing '@filing-compliance/sdk' (the workspace package, its TypeScript source), with only
 * the inputs the snippet leaves to the reader declared: the company details, and the webhook request's raw body and
 * headers. test/sdk-main-job.test.ts runs the same calls against the service.
 */

const run = promisify(execFile);

/** The first ```ts block of `file` after the heading `heading` (or from the top). */
function snippet(file: string, heading?: string): string {
  const text = fs.readFileSync(file, 'utf8');
  const from = heading ? text.indexOf(`\n${heading}\n`) : 0;
  expect(from, `${file} has the heading ${heading}`).toBeGreaterThanOrEqual(0);
  const block = /```ts\n([\s\S]*?)```/.exec(text.slice(from));
  expect(block, `${file} has a ts block`).not.toBeNull();
  return block![1];
}

/** Lines of SDK code: neither blank nor a comment nor the import. */
const codeLines = (code: string) =>
  code.split('\n').filter((l) => l.trim() && !l.trim().startsWith('//') && !l.startsWith('import '));

const INPUTS = `import type { Schemas } from '@filing-compliance/sdk';
declare const details: NonNullable<Schemas['OrderRequest']['formation']>['company'];
declare const rawBody: string;
declare const req: { headers: Record<string, string | string[] | undefined> };
`;

/**
 * tsc's complaints about each of `modules` (name -> code) as modules of this repository, by name ('' for one that
 * type-checks). One tsc run checks them all: a run costs several seconds of CPU, most of it loading the SDK's types.
 */
async function typeErrors(modules: Record<string, string>): Promise<Record<string, string>> {
  // Inside the repository, so '@filing-compliance/sdk' resolves to the workspace package; .data/ is not committed.
  fs.mkdirSync('.data', { recursive: true });
  const dir = fs.mkdtempSync(path.resolve('.data', 'readme-sdk-'));
  const files = Object.entries(modules).map(([name, code]) => {
    const file = path.join(dir, `${name}.ts`);
    fs.writeFileSync(file, `${INPUTS}${code}`);
    return file;
  });
  let output = '';
  try {
    await run(path.resolve('node_modules/.bin/tsc'), [
      '--noEmit',
      '--strict',
      '--target',
      'es2022',
      '--module',
      'esnext',
      '--moduleResolution',
      'bundler',
      // The package's "source" export is its TypeScript source: no build needed.
      '--customConditions',
      'source',
      '--allowImportingTsExtensions',
      '--skipLibCheck',
      '--types',
      'node',
      ...files,
    ]);
  } catch (err) {
    output = String((err as { stdout?: string }).stdout ?? err);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  // tsc starts each complaint with the file's path, relative to the working directory.
  const lines = output.split('\n');
  return Object.fromEntries(
    Object.keys(modules).map((name) => {
      const ofFile = path.relative(process.cwd(), path.join(dir, `${name}.ts`));
      return [name, lines.filter((l) => l.startsWith(ofFile)).join('\n')];
    }),
  );
}

const WRONG =
  "import { FilingCompliance } from '@filing-compliance/sdk';\nconst fc = new FilingCompliance({ apiKey: 'sk_test_x' });\nawait fc.createUser({ fullName: 'Ada' });\n";
let checked: Promise<Record<string, string>> | undefined;
/** The three snippets' complaints, from one tsc run shared by the tests below. */
const complaints = () =>
  (checked ??= typeErrors({
    readme: snippet('README.md', '## SDK'),
    'sdk-readme': snippet('sdk/README.md'),
    wrong: WRONG,
  }));

describe('the SDK snippets of the READMEs', () => {
  it('README.md shows the main job (webhook endpoint, user, formation, company, advance, document, events, verified webhook) in about ten lines that type-check', async () => {
    const code = snippet('README.md', '## SDK');
    expect(codeLines(code).length).toBeLessThanOrEqual(11);
    for (const call of [
      'new FilingCompliance(',
      'createWebhookEndpoint(',
      'createUser(',
      'createOrder(',
      'getCompany(',
      'advanceTestOrder(',
      'createTestDocument(',
      'webhooks.constructEvent(',
    ]) {
      expect(code).toContain(call);
    }
    expect((await complaints()).readme).toBe('');
  }, 120_000);

  it("sdk/README.md's snippet type-checks too", async () => {
    expect((await complaints())['sdk-readme']).toBe('');
  }, 120_000);

  it('a snippet that calls the SDK wrongly does not type-check (the check is real)', async () => {
    expect((await complaints()).wrong).toMatch(/email/);
  }, 120_000);
});

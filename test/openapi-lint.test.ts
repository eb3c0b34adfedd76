import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './harness.js';

/*
 * The served OpenAPI documents pass the two linters integrators' tooling uses, with no error and no warning:
 * spectral (ruleset spectral:oas, .spectral.yaml) and redocly (recommended rules, redocly.yaml). Both run from
 * node_modules as their command lines, offline; telemetry is off (redocly.yaml, and the environment below).
 */

const run = promisify(execFile);
const bin = (name: string) => path.resolve('node_modules/.bin', name);
const quiet = {
  ...process.env,
  REDOCLY_TELEMETRY: 'off',
  REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
  SCARF_ANALYTICS: 'false',
  NO_COLOR: '1',
};

let t: TestApp;
let dir: string;
beforeAll(async () => {
  t = await createTestApp();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fcs-openapi-'));
});
afterAll(async () => {
  await t.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Writes the document served at `url` to a file and returns its path. */
async function served(url: string, name: string): Promise<string> {
  const res = await t.app.inject({ method: 'GET', url });
  expect(res.statusCode).toBe(200);
  const file = path.join(dir, `${name}.json`);
  fs.writeFileSync(file, JSON.stringify(res.json()));
  return file;
}

/** spectral's findings in `files` (errors, warnings, infos and hints alike) as `file severity rule path: message` lines. */
async function spectral(...files: string[]): Promise<string[]> {
  const out = path.join(dir, `spectral-${files.length}-${path.basename(files[0])}.json`);
  // Exit status 1 means findings at the fail severity; they are read from the output file either way.
  await run(
    bin('spectral'),
    [
      'lint',
      ...files,
      '--ruleset',
      path.resolve('.spectral.yaml'),
      '--format',
      'json',
      '--output',
      out,
      '--fail-severity',
      'hint',
    ],
    { env: quiet },
  ).catch((err) => {
    if (!fs.existsSync(out)) throw err;
  });
  const results = JSON.parse(fs.readFileSync(out, 'utf8')) as Array<{
    code: string;
    message: string;
    severity: number;
    path: string[];
    source: string;
  }>;
  return results.map((r) => `${path.basename(r.source)} ${r.severity} ${r.code} ${r.path.join('.')}: ${r.message}`);
}

/** redocly's problems in `file` (errors and warnings) as `file severity rule pointer: message` lines. */
async function redocly(file: string): Promise<string[]> {
  // Exit status 1 means problems; the JSON report on stdout lists them either way.
  const result = await run(
    bin('redocly'),
    ['lint', file, '--config', path.resolve('redocly.yaml'), '--format', 'json'],
    { env: quiet, maxBuffer: 64 * 1024 * 1024 },
  ).catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? '' }));
  const report = JSON.parse(result.stdout) as {
    totals: { errors: number; warnings: number };
    problems: Array<{ ruleId: string; severity: string; message: string; location: Array<{ pointer: string }> }>;
  };
  expect(report.totals).toBeDefined();
  return report.problems.map(
    (p) => `${path.basename(file)} ${p.severity} ${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`,
  );
}

describe('the served OpenAPI documents (live /v1/openapi.json and test /test/v1/openapi.json) lint clean', () => {
  let files: string[];
  beforeAll(async () => {
    files = [await served('/v1/openapi.json', 'live'), await served('/test/v1/openapi.json', 'test')];
  });

  it('spectral with the spectral:oas ruleset finds nothing in either', async () => {
    expect(await spectral(...files)).toEqual([]);
  });

  it('redocly with the recommended rules finds nothing in either', async () => {
    expect([...(await redocly(files[0])), ...(await redocly(files[1]))]).toEqual([]);
  });

  it('while both linters do report the problems they are here for (no operationId, a tag without description, a localhost server)', async () => {
    const broken = {
      openapi: '3.1.0',
      info: {
        title: 'Broken',
        version: '1.0.0',
        description: 'x',
        contact: { name: 'x' },
        license: { name: 'x', identifier: 'MIT' },
      },
      servers: [{ url: 'http://localhost:3000/v1' }],
      security: [],
      tags: [{ name: 'Users' }],
      paths: {
        '/users': {
          get: {
            tags: ['Users'],
            summary: 's',
            description: 'd',
            responses: { 200: { description: 'ok' }, 400: { description: 'bad' } },
          },
        },
      },
    };
    const file = path.join(dir, 'broken.json');
    fs.writeFileSync(file, JSON.stringify(broken));
    expect((await spectral(file)).join('\n')).toMatch(/operation-operationId/);
    const problems = (await redocly(file)).join('\n');
    expect(problems).toMatch(/operation-operationId/);
    expect(problems).toMatch(/no-server-example.com/);
    expect(problems).toMatch(/tag-description/);
  });
});

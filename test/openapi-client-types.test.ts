import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './harness.js';

/*
 * OPS-27: a client generated from the served OpenAPI document with openapi-typescript's defaults (what an integrator
 * runs first) asks for no field the API defaults, such as `formation.expedited`. The README's examples are
 * type-checked against such a client: the TypeScript block (SDK calls, the SDK's generated types swapped for the
 * default-generated ones) and the JSON body of the quick start's POST /orders.
 */

const run = promisify(execFile);
let t: TestApp;
let dir: string;
let document: Record<string, unknown>;
beforeAll(async () => {
  t = await createTestApp();
  document = JSON.parse((await t.app.inject({ method: 'GET', url: '/test/v1/openapi.json' })).body);
  fs.mkdirSync('.data', { recursive: true });
  // Inside the repository, so the SDK's own imports (openapi-fetch, …) and @types/node resolve; .data/ is not committed.
  dir = fs.mkdtempSync(path.resolve('.data', 'client-types-'));
});
afterAll(async () => {
  await t?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** openapi-typescript's output for `doc` with its default options. */
const generate = async (doc: unknown) => astToString(await openapiTS(doc as never, { silent: true }));

const readme = fs.readFileSync('README.md', 'utf8');

describe('types generated from the served document with openapi-typescript defaults', () => {
  it('leave defaulted request fields optional, and the README examples type-check against them', async () => {
    const types = await generate(document);
    expect(types).toMatch(/\bexpedited\?: boolean;/);
    expect(types).toMatch(/\bexpectsEmploymentTaxUnder1000\?: boolean;/);

    // The SDK's source with its generated types replaced by the default-generated ones.
    fs.cpSync('sdk/src', path.join(dir, 'sdk'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'sdk/generated/openapi.ts'), types);

    const blocks = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
    expect(blocks.length).toBeGreaterThan(0);
    const inputs = `import type { Schemas } from '@filing-compliance/sdk';
declare const details: NonNullable<Schemas['OrderRequest']['formation']>['company'];
declare const rawBody: string;
declare const req: { headers: Record<string, string | string[] | undefined> };
`;
    const files = blocks.map((code, i) => {
      const file = path.join(dir, `readme-${i}.ts`);
      fs.writeFileSync(file, `${inputs}${code}\nexport {};\n`);
      return file;
    });

    // The quick start's order, as JSON, is a request body of POST /orders.
    const order = /\$B\/orders -H[^\n]*-d '(\{[\s\S]*?\})'\n/.exec(readme);
    expect(order, 'README.md has the quick start POST /orders with a JSON body').not.toBeNull();
    const body = JSON.parse(order![1]!);
    expect(body.formation).not.toHaveProperty('expedited');
    const orderFile = path.join(dir, 'readme-order.ts');
    fs.writeFileSync(
      orderFile,
      `import type { paths } from './sdk/generated/openapi.js';
type OrderBody = paths['/orders']['post']['requestBody']['content']['application/json'];
export const body: OrderBody = ${JSON.stringify(body)};
`,
    );

    fs.writeFileSync(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          target: 'es2022',
          module: 'esnext',
          moduleResolution: 'bundler',
          skipLibCheck: true,
          types: ['node'],
          paths: { '@filing-compliance/sdk': ['./sdk/index.ts'] },
        },
        files: [...files, orderFile].map((f) => path.basename(f)),
      }),
    );
    const errors = await run(path.resolve('node_modules/.bin/tsc'), ['-p', dir]).then(
      () => '',
      (err: { stdout?: string }) => String(err.stdout ?? err),
    );
    expect(errors).toBe('');
  }, 180_000);

  it('would mark a field required if the document gave it a default (the check is real)', async () => {
    const withDefault = JSON.parse(JSON.stringify(document));
    const schemas = withDefault.components.schemas as Record<string, { properties?: Record<string, object> }>;
    const owner = Object.values(schemas).find((s) => s.properties?.expedited);
    expect(owner).toBeDefined();
    owner!.properties!.expedited = { ...owner!.properties!.expedited, default: false };
    expect(await generate(withDefault)).toMatch(/\bexpedited: boolean;/);
  });
});

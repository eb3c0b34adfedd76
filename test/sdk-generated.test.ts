import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSources } from '../sdk/scripts/generate.js';
import { LISTED_EVENT_TYPES } from '../src/modules/events/events.service.js';
import { createTestApp, type TestApp } from './harness.js';

/*
 * The SDK's generated half (sdk/src/generated/) is committed. It must be exactly what the generator makes from the
 * document the service serves now: a route change without `npm run sdk:generate` fails here, before the SDK and
 * the API can drift apart.
 */

let t: TestApp;
let document: Record<string, unknown>;
beforeAll(async () => {
  t = await createTestApp();
  document = (await t.app.inject({ method: 'GET', url: '/test/v1/openapi.json' })).json();
});
afterAll(() => t.close());

/** The first line where two texts differ, for a readable failure. */
function firstDifference(committed: string, generated: string): string | null {
  const a = committed.split('\n');
  const b = generated.split('\n');
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i] !== b[i])
      return `line ${i + 1}:\n  committed: ${a[i] ?? '(end of file)'}\n  generated: ${b[i] ?? '(end of file)'}`;
  }
  return null;
}

describe('sdk/src/generated', () => {
  it('is what `npm run sdk:generate` makes from the served test document', async () => {
    const files = await generateSources(document);
    expect(files.map((f) => f.name).sort()).toEqual(fs.readdirSync('sdk/src/generated').sort());
    for (const file of files) {
      const committed = fs.readFileSync(path.join('sdk/src/generated', file.name), 'utf8');
      const difference = firstDifference(committed, file.contents);
      expect(
        difference,
        `sdk/src/generated/${file.name} is stale, run npm run sdk:generate. First difference at ${difference}`,
      ).toBeNull();
    }
  });

  it('has one SDK method per operation of the document, with its method and path', async () => {
    const { OPERATIONS } = await import('../sdk/src/generated/operations.js');
    const served = Object.entries<Record<string, { operationId: string }>>(document.paths as never).flatMap(
      ([p, item]) => Object.entries(item).map(([method, op]) => [op.operationId, `${method.toUpperCase()} ${p}`]),
    );
    expect(Object.fromEntries(Object.entries(OPERATIONS).map(([id, op]) => [id, `${op.method} ${op.path}`]))).toEqual(
      Object.fromEntries(served),
    );
    expect(OPERATIONS.listUsers).toMatchObject({ kind: 'list', cursor: 'id' });
    expect(OPERATIONS.listDocuments).toMatchObject({ kind: 'list', cursor: 'documentId' });
    expect(OPERATIONS.streamEvents.kind).toBe('stream');
  });

  it('lists every event type the service streams, which `filing-compliance listen --events` accepts', async () => {
    const { EVENT_TYPES } = await import('../sdk/src/generated/operations.js');
    expect([...EVENT_TYPES]).toEqual([...LISTED_EVENT_TYPES].sort());
  });
});

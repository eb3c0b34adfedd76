import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FUZZ_SEED,
  type Fixtures,
  type Generated,
  isEventStream,
  makeFixtures,
  type Operation,
  openApiArbitraries,
  operationsOf,
  toInject,
} from './fuzz-requests.js';
import { createTestApp, type TestApp } from './harness.js';

/*
 * Fuzzing every operation of the OpenAPI documents the app serves, in both environments: at least 10,000
 * requests generated from the documented schemas (valid values, boundaries, malformed bodies, parameters and
 * headers). Every answer must be below 500, carry a status the document lists for its operation, and match the
 * schema documented for that status. The seed is FUZZ_SEED when set, else a fixed one, so that every run of the
 * suite sends the same requests and a failure is reproducible; `FUZZ_SEED=random` draws a new one to explore (run it
 * a few dozen times before a release). The seed is printed with every failure. The requests come from
 * test/fuzz-requests.ts, which test/fuzz-http.test.ts sends over a listening socket too, with the web surfaces, for
 * requests left without an answer (OPS-7).
 */

const TOTAL_REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 10_000);
const CONCURRENCY = 4;
let t: TestApp;
let doc: any;
let operations: Operation[];
let arbitraries: ReturnType<typeof openApiArbitraries>;
let fixtures: Fixtures;
let base: string;

beforeAll(async () => {
  t = await createTestApp();
  const documents = await Promise.all(
    ['/v1/openapi.json', '/test/v1/openapi.json'].map(async (url) =>
      (await t.app.inject({ method: 'GET', url })).json(),
    ),
  );
  doc = documents[0];
  operations = operationsOf(documents[0], documents[1]);
  arbitraries = openApiArbitraries(doc);
  fixtures = await makeFixtures(t);
  // Event streams stay open until the client leaves, which app.inject cannot do: those go over a real socket.
  base = await t.app.listen({ host: '127.0.0.1', port: 0 });
}, 120_000);
afterAll(() => t?.close());

/**
 * Sends a request over HTTP and, when it opens an event stream, leaves once the headers arrived (an open stream is
 * the documented success); any other answer is read whole.
 */
async function openStream(
  options: InjectOptions,
): Promise<{ statusCode: number; headers: Record<string, string>; body: string }> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), 10_000);
  try {
    const res = await fetch(`${base}${options.url as string}`, {
      method: 'GET',
      headers: options.headers as Record<string, string>,
      signal: abort.signal,
    });
    const headers = Object.fromEntries(res.headers.entries());
    if (String(headers['content-type']).includes('text/event-stream')) {
      abort.abort();
      return { statusCode: res.status, headers, body: '' };
    }
    return { statusCode: res.status, headers, body: await res.text() };
  } finally {
    clearTimeout(timer);
  }
}

// ---------- checking ----------

const ajv = new Ajv({ strict: false, allErrors: false, validateFormats: true });
addFormats(ajv);
const validators = new Map<string, ValidateFunction | null>();

/** The compiled schema documented for `status` of the operation, or null when the document lists none. */
function responseValidator(o: Operation, status: number): ValidateFunction | null | undefined {
  const key = `${o.method} ${o.path} ${status}`;
  if (!validators.has(key)) {
    const response = o.op.responses?.[String(status)] ?? o.op.responses?.[`${String(status)[0]}XX`];
    if (!response) validators.set(key, null);
    else {
      const schema = response.content?.['application/json']?.schema;
      validators.set(key, schema ? ajv.compile(inlineRefs(schema)) : ((() => true) as unknown as ValidateFunction));
    }
  }
  return validators.get(key);
}

// Component references are inlined (the document's components are plain JSON Schema), cycles cut at depth 20.
function inlineRefs(schema: any, depth = 0): any {
  if (Array.isArray(schema)) return schema.map((s) => inlineRefs(s, depth));
  if (!schema || typeof schema !== 'object') return schema;
  if (schema.$ref && depth < 20) return inlineRefs(arbitraries.resolve(schema), depth + 1);
  return Object.fromEntries(
    Object.entries(schema)
      .filter(([k]) => k !== '$id')
      .map(([k, v]) => [k, inlineRefs(v, depth)]),
  );
}

describe('fuzzing every documented operation', () => {
  it(`answers ${TOTAL_REQUESTS} generated requests without a 5xx, each as documented (seed ${FUZZ_SEED})`, async () => {
    expect(operations.length).toBeGreaterThanOrEqual(30);
    const perOperation = Math.ceil(TOTAL_REQUESTS / operations.length);
    const work: Array<{ o: Operation; g: Generated }> = [];
    operations.forEach((o, i) => {
      for (const g of fc.sample(arbitraries.requestArbitrary(o), { seed: FUZZ_SEED + i, numRuns: perOperation }))
        work.push({ o, g });
    });
    const serverErrors: string[] = [];
    const schemaErrors: string[] = [];
    const undocumented = new Map<string, number>();
    let sent = 0;
    const describeRequest = (options: InjectOptions) =>
      `${options.method} ${String(options.url).slice(0, 200)} ${typeof options.payload === 'string' ? options.payload.slice(0, 300) : ''}`;

    const next = async (): Promise<void> => {
      for (let item = work.shift(); item; item = work.shift()) {
        const options = toInject(item.o, item.g, fixtures);
        const res = isEventStream(item.o) ? await openStream(options) : await t.app.inject(options);
        sent += 1;
        if (res.statusCode >= 500) {
          serverErrors.push(`${res.statusCode} for ${describeRequest(options)} -> ${res.body.slice(0, 200)}`);
          continue;
        }
        const validate = responseValidator(item.o, res.statusCode);
        if (validate === null) {
          const key = `${item.o.method.toUpperCase()} ${item.o.path} ${res.statusCode}`;
          undocumented.set(key, (undocumented.get(key) ?? 0) + 1);
          continue;
        }
        if (!validate || !String(res.headers['content-type'] ?? '').includes('json')) continue;
        if (!validate(JSON.parse(res.body))) {
          schemaErrors.push(
            `${res.statusCode} for ${describeRequest(options)}: ${ajv.errorsText(validate.errors)} in ${res.body.slice(0, 200)}`,
          );
        }
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, next));

    expect(sent).toBeGreaterThanOrEqual(TOTAL_REQUESTS);
    expect(
      serverErrors,
      `5xx answers (reproduce with FUZZ_SEED=${FUZZ_SEED}):\n${serverErrors.slice(0, 10).join('\n')}`,
    ).toEqual([]);
    expect(
      [...undocumented].map(([k, n]) => `${k} (${n}x)`),
      `statuses the document does not list for the operation (FUZZ_SEED=${FUZZ_SEED})`,
    ).toEqual([]);
    expect(
      schemaErrors,
      `answers that break their documented schema (FUZZ_SEED=${FUZZ_SEED}):\n${schemaErrors.slice(0, 10).join('\n')}`,
    ).toEqual([]);
  }, 240_000);
});

describe('inputs that once answered 500', () => {
  it('refuses a NUL character in a body, a query or a path parameter with 400 naming the field, and a 100,000-character cursor', async () => {
    const key = { 'x-api-key': fixtures.tenant.keys.test };
    const body = await t.app.inject({
      method: 'POST',
      url: '/test/v1/users',
      headers: key,
      payload: { fullName: '\u0000', email: 'nul@example.com' },
    });
    expect(body.statusCode).toBe(400);
    expect(body.json().errors).toEqual([{ field: 'fullName', message: expect.stringContaining('NUL') }]);
    const query = await t.app.inject({
      method: 'GET',
      url: '/v1/companies?userId=%00',
      headers: { 'x-api-key': fixtures.tenant.keys.live },
    });
    expect(query.statusCode).toBe(400);
    expect(query.json().errors).toEqual([{ field: 'userId', message: expect.stringContaining('NUL') }]);
    const path = await t.app.inject({
      method: 'GET',
      url: '/v1/webhook-deliveries/%00',
      headers: { 'x-api-key': fixtures.tenant.keys.live },
    });
    expect(path.statusCode).toBe(400);
    expect(path.json().errors).toEqual([{ field: 'id', message: expect.stringContaining('NUL') }]);
    const cursor = await t.app.inject({
      method: 'GET',
      url: `/test/v1/events?startingAfter=${'a'.repeat(100_000)}`,
      headers: key,
    });
    expect(cursor.statusCode).toBe(400);
    expect(cursor.json().errors[0].field).toBe('startingAfter');
    // Over a real socket Node's HTTP parser refuses it first (more than 16 KB): still the one error body.
    const socket = await fetch(`${base}/test/v1/events?startingAfter=${'a'.repeat(100_000)}`, { headers: key });
    expect(socket.status).toBe(400);
    const refused = await socket.json();
    expect(refused).toEqual({
      code: 'bad_request',
      message: expect.stringContaining('16 KB'),
      requestId: expect.stringMatching(/^req_[0-9a-f]{32}$/),
    });
    expect(socket.headers.get('x-request-id')).toBe(refused.requestId);
  });

  it('refuses an unpaired surrogate in an e-mail with 400 naming the field, and a whitespace-only white-label domain', async () => {
    const user = await t.app.inject({
      method: 'POST',
      url: '/test/v1/users',
      headers: { 'x-api-key': fixtures.tenant.keys.test },
      payload: { fullName: 'Lone Surrogate', email: '\ud800' },
    });
    expect(user.statusCode).toBe(400);
    expect(user.json().errors).toEqual([{ field: 'email', message: expect.stringContaining('surrogate') }]);
    const live = { 'x-api-key': fixtures.tenant.keys.live };
    const contact = await t.app.inject({
      method: 'PATCH',
      url: '/v1/organization',
      headers: live,
      payload: { contactEmail: 'ops\udfff@example.com' },
    });
    expect(contact.statusCode).toBe(400);
    expect(contact.json().errors).toEqual([{ field: 'contactEmail', message: expect.stringContaining('surrogate') }]);
    const domain = await t.app.inject({
      method: 'PATCH',
      url: '/v1/organization',
      headers: live,
      payload: { whiteLabelDomain: '\n\r\t' },
    });
    expect(domain.statusCode).toBe(400);
    expect(domain.json().errors).toEqual([
      { field: 'whiteLabelDomain', message: expect.stringContaining('host name') },
    ]);
  });
});

import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Environment } from '../src/context.js';
import { createCompany, createOrderRow, createUser } from './factories.js';
import { createTestApp, type TestApp, type TestTenant } from './harness.js';

/*
 * Fuzzing every operation of the OpenAPI documents the app serves, in both environments: at least 10,000
 * requests generated from the documented schemas (valid values, boundaries, malformed bodies, parameters and
 * headers). Every answer must be below 500, carry a status the document lists for its operation, and match the
 * schema documented for that status. The seed is FUZZ_SEED when set, else a fixed one, so that every run of the
 * suite sends the same requests and a failure is reproducible; `FUZZ_SEED=random` draws a new one to explore (run it
 * a few dozen times before a release). The seed is printed with every failure.
 */

const SEED =
  process.env.FUZZ_SEED === 'random'
    ? Math.floor(Math.random() * 2 ** 31)
    : Number(process.env.FUZZ_SEED ?? 100_423_124);
const TOTAL_REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 10_000);
const CONCURRENCY = 4;
const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

interface Operation {
  method: (typeof METHODS)[number];
  path: string;
  op: any;
  environments: Environment[];
}

interface Fixtures {
  tenant: TestTenant;
  ids: Record<Environment, Record<string, string[]>>;
}

let t: TestApp;
let doc: any;
let operations: Operation[];
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
  const seen = new Map<string, Operation>();
  for (const d of documents) {
    for (const [path, item] of Object.entries<any>(d.paths)) {
      for (const method of METHODS) {
        if (!item[method]) continue;
        // The live document leaves out what exists only at the test base address (the test helpers).
        const testOnly = !documents[0].paths[path]?.[method];
        seen.set(`${method} ${path}`, {
          method,
          path,
          op: item[method],
          environments: testOnly ? ['test'] : ['live', 'test'],
        });
      }
    }
  }
  operations = [...seen.values()];
  fixtures = await makeFixtures(t);
  // Event streams stay open until the client leaves, which app.inject cannot do: those go over a real socket.
  base = await t.app.listen({ host: '127.0.0.1', port: 0 });
}, 120_000);
afterAll(() => t?.close());

// Ids of real resources per environment, so that valid requests reach past the lookups into the services.
async function makeFixtures(app: TestApp): Promise<Fixtures> {
  const tenant = await app.newTenant('Fuzz Co');
  const ids: Fixtures['ids'] = { live: {}, test: {} };
  for (const env of ['live', 'test'] as const) {
    const { user, company } = await createCompany(tenant, env);
    const other = await createUser(tenant, env);
    const order = await createOrderRow(
      app.ctx,
      { organizationId: tenant.organizationId, environment: env },
      { companyId: company.id, userId: user.id, orderType: 'formation' },
    );
    const endpoint = await tenant.api(
      'POST',
      '/webhook-endpoints',
      { url: 'http://127.0.0.1:9/hooks', eventTypes: ['filing.status_changed', 'document.uploaded'] },
      { env },
    );
    if (env === 'test') {
      await tenant.api('POST', '/test_helpers/balance-credits', { amount: 5000 });
      await tenant.api('POST', `/test_helpers/orders/${order.orderId}/advance`, { filingStatus: 'pending' });
      await tenant.api('POST', `/test_helpers/orders/${order.orderId}/documents`, { documentType: 'company' });
    }
    const q = async (sql: string) =>
      (await app.ctx.pool.query(sql, [tenant.organizationId, env])).rows.map((r) => r.id as string);
    ids[env] = {
      user: [user.id, other.id, user.email],
      company: [company.id, company.slug],
      order: [order.orderId],
      document: await q('SELECT id FROM documents WHERE organization_id = $1 AND environment = $2'),
      event: await q('SELECT id FROM events WHERE organization_id = $1 AND environment = $2'),
      endpoint: [endpoint.json().id],
      delivery: await q(
        'SELECT d.id FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id WHERE e.organization_id = $1 AND e.environment = $2',
      ),
    };
  }
  return { tenant, ids };
}

// ---------- generation ----------

/** Strings that broke services before or commonly do: NUL, huge, unicode edge cases, injection-looking text. */
const NASTY_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '%00',
  'x'.repeat(100_000),
  'é'.repeat(300),
  '😀',
  '\ud800',
  '\u202e',
  '../../etc/passwd',
  "' OR 1=1 --",
  '<script>alert(1)</script>',
  '9'.repeat(40),
  '-1',
  '1e309',
  'null',
  'true',
  '{}',
  '\n\r\t',
  'user_',
  'comp_x',
  'a'.repeat(256),
];
const nastyString = fc.constantFrom(...NASTY_STRINGS);
const anything: fc.Arbitrary<unknown> = fc.oneof(
  nastyString,
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constant([]),
  fc.constant({}),
  fc.array(fc.string(), { maxLength: 3 }),
);

const resolve = (schema: any): any => {
  let s = schema;
  for (let i = 0; s?.$ref && i < 10; i++)
    s = s.$ref
      .replace(/^#\//, '')
      .split('/')
      .reduce((node: any, key: string) => node?.[key], doc);
  return s ?? {};
};

// Values for the patterns the API uses, so that "valid" really is valid often enough to reach deep code.
const PATTERN_EXAMPLES: Array<[RegExp, string[]]> = [
  [/\^\\\+/, ['+14155550123', '+442071838750']],
  [/\[0-9\]\{2\}-\[0-9\]\{7\}|\\d\{2\}-\\d\{7\}/, ['12-3456789']],
  [/#/, ['#1a2b3c', '#FFFFFF']],
  [/\[A-Z\]\{2\}|\[A-Za-z\]\{2\}/, ['DE', 'WY', 'CA']],
  [/\[0-9\]\{5\}|\\d\{5\}/, ['19801', '82001']],
  [/\[0-9\]\{4\}-/, ['2025-01-31']],
];

function stringFor(s: any): fc.Arbitrary<string> {
  if (s.format === 'email') return fc.constantFrom('ada@example.com', 'a.b+c@sub.example.org');
  if (s.format === 'date') return fc.constantFrom('2024-02-29', '2025-01-31', '2023-13-01');
  if (s.format === 'date-time') return fc.constantFrom('2025-01-31T10:00:00.000Z', '2025-01-31T10:00:00Z');
  if (s.format === 'uri')
    return fc.constantFrom(
      'https://hooks.example.com/in',
      'http://127.0.0.1:9/hooks',
      'https://cdn.example.com/logo.png',
    );
  if (typeof s.pattern === 'string') {
    const known = PATTERN_EXAMPLES.find(([re]) => re.test(s.pattern));
    if (known) return fc.constantFrom(...known[1]);
  }
  const max = Math.min(s.maxLength ?? 40, 300);
  const min = Math.min(s.minLength ?? 0, max);
  return fc.oneof(
    { weight: 6, arbitrary: fc.string({ minLength: Math.max(min, 1), maxLength: Math.max(min, Math.min(max, 40)) }) },
    { weight: 1, arbitrary: fc.string({ minLength: max + 1, maxLength: max + 2 }) },
    { weight: 1, arbitrary: fc.constant('') },
  );
}

function numberFor(s: any): fc.Arbitrary<number> {
  const min = typeof s.minimum === 'number' ? s.minimum : -1_000_000;
  const max = typeof s.maximum === 'number' ? s.maximum : 1_000_000;
  const inRange =
    s.type === 'integer'
      ? fc.integer({ min: Math.max(min, -(2 ** 31)), max: Math.min(max, 2 ** 31 - 1) })
      : fc.double({ min, max, noNaN: true });
  return fc.oneof(
    { weight: 6, arbitrary: inRange },
    { weight: 2, arbitrary: fc.constantFrom(min, max, min - 1, max + 1, 0, -1, 0.5, 1e15, 12.345) },
  );
}

/** An arbitrary for a schema: mostly valid values, sometimes (1 in `mutation` + 1) anything at all. */
function valueFor(schema: any, depth = 0, mutation = 25): fc.Arbitrary<unknown> {
  const s = resolve(schema);
  const valid = validFor(s, depth, mutation);
  return depth > 5 ? valid : fc.oneof({ weight: mutation, arbitrary: valid }, { weight: 1, arbitrary: anything });
}

function validFor(s: any, depth: number, mutation: number): fc.Arbitrary<unknown> {
  if (s.const !== undefined) return fc.constant(s.const);
  if (Array.isArray(s.enum)) return fc.constantFrom(...s.enum);
  const union = s.anyOf ?? s.oneOf;
  if (Array.isArray(union) && union.length) return fc.oneof(...union.map((u: any) => valueFor(u, depth + 1, mutation)));
  if (Array.isArray(s.allOf) && s.allOf.length)
    return valueFor({ ...Object.assign({}, ...s.allOf.map(resolve)), allOf: undefined }, depth + 1, mutation);
  const type = Array.isArray(s.type) ? s.type.find((x: string) => x !== 'null') : s.type;
  switch (type) {
    case 'string':
      return stringFor(s);
    case 'integer':
    case 'number':
      return numberFor(s);
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(valueFor(s.items ?? {}, depth + 1, mutation), { maxLength: Math.min(s.maxItems ?? 3, 3) });
    default: {
      const props: Record<string, any> = s.properties ?? {};
      if (!Object.keys(props).length)
        return type === 'object' ? fc.dictionary(fc.string({ maxLength: 8 }), anything, { maxKeys: 2 }) : anything;
      const required: string[] = s.required ?? [];
      const record = fc.record(
        Object.fromEntries(Object.entries(props).map(([k, v]) => [k, valueFor(v, depth + 1, mutation)])),
        { requiredKeys: required.filter((k) => k in props) },
      );
      // Now and then: a required field left out, or a field no schema knows.
      return fc.oneof(
        { weight: 10, arbitrary: record },
        {
          weight: 1,
          arbitrary: fc.tuple(record, fc.constantFrom(...Object.keys(props))).map(([r, k]) => {
            const out = { ...(r as object) } as Record<string, unknown>;
            delete out[k];
            return out;
          }),
        },
        {
          weight: 1,
          arbitrary: fc
            .tuple(record, fc.constantFrom('unknownField', '__proto__', 'constructor'), anything)
            .map(([r, k, v]) => ({ ...(r as object), [k]: v })),
        },
      );
    }
  }
}

/** Which fixture ids fit a path parameter, by its name and the path it sits in. */
function fixtureKind(path: string, name: string): string | null {
  if (/user/i.test(name)) return 'user';
  if (/company/i.test(name)) return 'company';
  if (/order/i.test(name)) return 'order';
  if (/document/i.test(name)) return 'document';
  if (/event/i.test(name)) return 'event';
  if (name === 'id')
    return path.startsWith('/webhook-deliveries')
      ? 'delivery'
      : path.startsWith('/webhook-endpoints')
        ? 'endpoint'
        : null;
  return null;
}

/** A generated request: everything needed to send it and to explain it on failure. */
interface Generated {
  env: Environment;
  path: Record<string, unknown>;
  query: Record<string, unknown>;
  body: { kind: 'json'; value: unknown } | { kind: 'raw'; text: string; contentType: string } | { kind: 'none' };
  key: 'own' | 'other-env' | 'garbage' | 'none';
  idempotencyKey: string | null;
}

function requestArbitrary(o: Operation): fc.Arbitrary<Generated> {
  const params: any[] = o.op.parameters ?? [];
  const pathParams = params.filter((p) => p.in === 'path');
  const queryParams = params.filter((p) => p.in === 'query');
  const pathArb = fc.record(
    Object.fromEntries(
      pathParams.map((p) => {
        const kind = fixtureKind(o.path, p.name);
        const fromSchema = valueFor(p.schema ?? { type: 'string' }, 0, 3);
        return [
          p.name,
          kind
            ? fc.oneof(
                { weight: 5, arbitrary: fc.constant(`@${kind}`) },
                { weight: 3, arbitrary: fromSchema },
                { weight: 2, arbitrary: nastyString },
              )
            : fc.oneof({ weight: 4, arbitrary: fromSchema }, { weight: 1, arbitrary: nastyString }),
        ];
      }),
    ),
  );
  const queryArb = fc.record(
    Object.fromEntries(
      queryParams.map((p) => {
        const kind =
          fixtureKind(o.path, p.name) ??
          (/(userId|companyId|orderId|endpointId|eventId)/.test(p.name)
            ? (fixtureKind('', p.name.replace(/Id$/, '')) ?? fixtureKind(o.path, p.name))
            : null);
        const options = [valueFor(p.schema ?? { type: 'string' }, 0, 4), nastyString];
        if (kind) options.push(fc.constant(`@${kind}`) as fc.Arbitrary<never>);
        return [p.name, fc.oneof(...options)];
      }),
    ),
    { requiredKeys: [] },
  );
  const bodySchema = o.op.requestBody?.content?.['application/json']?.schema;
  const bodyArb: fc.Arbitrary<Generated['body']> = bodySchema
    ? fc.oneof(
        { weight: 12, arbitrary: valueFor(bodySchema, 0, 40).map((value) => ({ kind: 'json' as const, value })) },
        { weight: 1, arbitrary: anything.map((value) => ({ kind: 'json' as const, value })) },
        {
          weight: 1,
          arbitrary: fc
            .constantFrom('{"a":', '[1,2', '\u0000', '{"x":"\\u0000"}', `{${'"a":{'.repeat(200)}}`, 'not json')
            .map((text) => ({ kind: 'raw' as const, text, contentType: 'application/json' })),
        },
        {
          weight: 1,
          arbitrary: fc
            .constantFrom('text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x')
            .map((contentType) => ({ kind: 'raw' as const, text: 'a=1', contentType })),
        },
      )
    : fc.oneof(
        { weight: 8, arbitrary: fc.constant({ kind: 'none' as const }) },
        { weight: 1, arbitrary: anything.map((value) => ({ kind: 'json' as const, value })) },
      );
  return fc.record({
    env: fc.constantFrom(...o.environments),
    path: pathArb,
    query: queryArb,
    body: bodyArb,
    key: fc.oneof(
      { weight: 16, arbitrary: fc.constant('own' as const) },
      { weight: 1, arbitrary: fc.constantFrom('other-env' as const, 'garbage' as const, 'none' as const) },
    ),
    idempotencyKey:
      o.method === 'post'
        ? fc.option(
            fc.oneof(
              fc.string({ minLength: 1, maxLength: 40 }).filter((k) => /^[\x21-\x7e]+$/.test(k)),
              fc.constant('k'.repeat(300)),
            ),
            { nil: null },
          )
        : fc.constant(null),
  });
}

/** Whether the operation answers a Server-Sent Events stream. */
function isEventStream(o: Operation): boolean {
  return Boolean(o.op.responses?.['200']?.content?.['text/event-stream']);
}

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

function toInject(o: Operation, g: Generated): InjectOptions {
  const ids = fixtures.ids[g.env];
  const fill = (v: unknown) => {
    if (typeof v === 'string' && v.startsWith('@')) {
      const pool = ids[v.slice(1)] ?? [];
      return pool.length ? pool[Math.abs(hash(JSON.stringify(g))) % pool.length]! : 'missing_fixture';
    }
    return v;
  };
  const path = o.path.replace(/\{([^}]+)\}/g, (_m, name: string) => encodePath(String(fill(g.path[name]))));
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(g.query))
    if (v !== undefined) query.append(k, typeof v === 'object' ? JSON.stringify(v) : String(fill(v)));
  const prefix = g.env === 'live' ? '/v1' : '/test/v1';
  const headers: Record<string, string> = {};
  const keys = fixtures.tenant.keys;
  if (g.key === 'own') headers['x-api-key'] = keys[g.env];
  else if (g.key === 'other-env') headers['x-api-key'] = keys[g.env === 'live' ? 'test' : 'live'];
  else if (g.key === 'garbage') headers['x-api-key'] = 'sk_live_garbage';
  if (g.idempotencyKey) headers['idempotency-key'] = g.idempotencyKey;
  const options: InjectOptions = {
    method: o.method.toUpperCase() as InjectOptions['method'],
    url: `${prefix}${path}${query.size ? `?${query}` : ''}`,
    headers,
  };
  if (g.body.kind === 'json') {
    headers['content-type'] = 'application/json';
    options.payload = JSON.stringify(g.body.value) ?? 'null';
  } else if (g.body.kind === 'raw') {
    headers['content-type'] = g.body.contentType;
    options.payload = g.body.text;
  }
  return options;
}

// A lone surrogate cannot be encoded: it is sent as the (invalid UTF-8) bytes a careless client would send.
function encodePath(value: string): string {
  return (
    value
      .replace(/[\ud800-\udfff]/g, (c) => `\u0001${c.charCodeAt(0).toString(16)}\u0002`)
      // biome-ignore lint/suspicious/noControlCharactersInRegex: \u0001/\u0002 are the markers set just above.
      .split(/(\u0001[0-9a-f]+\u0002)/)
      .map((part) => (part.startsWith('\u0001') ? '%ED%A0%80' : encodeURIComponent(part)))
      .join('')
  );
}

function hash(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (h * 31 + s.charCodeAt(i)) | 0;
  return h;
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
  if (schema.$ref && depth < 20) return inlineRefs(resolve(schema), depth + 1);
  return Object.fromEntries(
    Object.entries(schema)
      .filter(([k]) => k !== '$id')
      .map(([k, v]) => [k, inlineRefs(v, depth)]),
  );
}

describe('fuzzing every documented operation', () => {
  it(`answers ${TOTAL_REQUESTS} generated requests without a 5xx, each as documented (seed ${SEED})`, async () => {
    expect(operations.length).toBeGreaterThanOrEqual(30);
    const perOperation = Math.ceil(TOTAL_REQUESTS / operations.length);
    const work: Array<{ o: Operation; g: Generated }> = [];
    operations.forEach((o, i) => {
      for (const g of fc.sample(requestArbitrary(o), { seed: SEED + i, numRuns: perOperation })) work.push({ o, g });
    });
    const serverErrors: string[] = [];
    const schemaErrors: string[] = [];
    const undocumented = new Map<string, number>();
    let sent = 0;
    const describeRequest = (options: InjectOptions) =>
      `${options.method} ${String(options.url).slice(0, 200)} ${typeof options.payload === 'string' ? options.payload.slice(0, 300) : ''}`;

    const next = async (): Promise<void> => {
      for (let item = work.shift(); item; item = work.shift()) {
        const options = toInject(item.o, item.g);
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
      `5xx answers (reproduce with FUZZ_SEED=${SEED}):\n${serverErrors.slice(0, 10).join('\n')}`,
    ).toEqual([]);
    expect(
      [...undocumented].map(([k, n]) => `${k} (${n}x)`),
      `statuses the document does not list for the operation (FUZZ_SEED=${SEED})`,
    ).toEqual([]);
    expect(
      schemaErrors,
      `answers that break their documented schema (FUZZ_SEED=${SEED}):\n${schemaErrors.slice(0, 10).join('\n')}`,
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

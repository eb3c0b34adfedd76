import fc from 'fast-check';
import type { InjectOptions } from 'fastify';
import type { Environment } from '../src/context.js';
import { createCompany, createOrderRow, createUser } from './factories.js';
import type { TestApp, TestTenant } from './harness.js';

/*
 * Requests generated from the OpenAPI documents the app serves, for the fuzz tests (test/fuzz.test.ts sends them
 * through app.inject, test/fuzz-http.test.ts over a listening socket): valid values, boundaries, malformed bodies,
 * parameters and headers, and the fixtures (real resources) valid requests refer to.
 */

/**
 * The seed of the fuzz tests' requests: FUZZ_SEED when set, else a fixed one, so every run of the suite sends the
 * same requests and a failure is reproducible; `FUZZ_SEED=random` draws a new one to explore.
 */
export const FUZZ_SEED =
  process.env.FUZZ_SEED === 'random'
    ? Math.floor(Math.random() * 2 ** 31)
    : Number(process.env.FUZZ_SEED ?? 100_423_124);

/** The HTTP methods of the operations fuzzed. */
const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/** One operation of the documents, and the environments whose base address serves it. */
export interface Operation {
  method: (typeof METHODS)[number];
  path: string;
  op: any;
  environments: Environment[];
}

/** A tenant and ids of its real resources per environment, so that valid requests reach past the look-ups. */
export interface Fixtures {
  tenant: TestTenant;
  ids: Record<Environment, Record<string, string[]>>;
}

/** Every operation of the live and test documents; one only the test document has is for the test environment. */
export function operationsOf(live: any, test: any): Operation[] {
  const seen = new Map<string, Operation>();
  for (const d of [live, test]) {
    for (const [path, item] of Object.entries<any>(d.paths)) {
      for (const method of METHODS) {
        if (!item[method]) continue;
        // The live document leaves out what exists only at the test base address (the test helpers).
        const testOnly = !live.paths[path]?.[method];
        seen.set(`${method} ${path}`, {
          method,
          path,
          op: item[method],
          environments: testOnly ? ['test'] : ['live', 'test'],
        });
      }
    }
  }
  return [...seen.values()];
}

/**
 * A tenant ('Fuzz Co') with, per environment, a user and another, a company, an order (in test also pending, with a
 * document and a balance), a webhook endpoint: ids of real resources, so that valid requests reach past the look-ups
 * into the services.
 */
export async function makeFixtures(app: TestApp): Promise<Fixtures> {
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
/** One of {@link NASTY_STRINGS}. */
export const nastyString = fc.constantFrom(...NASTY_STRINGS);
/** Any JSON value of a few kinds: nasty strings, numbers, booleans, null, empty containers, a short array. */
export const anything: fc.Arbitrary<unknown> = fc.oneof(
  nastyString,
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constant([]),
  fc.constant({}),
  fc.array(fc.string(), { maxLength: 3 }),
);

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
export interface Generated {
  env: Environment;
  path: Record<string, unknown>;
  query: Record<string, unknown>;
  body: { kind: 'json'; value: unknown } | { kind: 'raw'; text: string; contentType: string } | { kind: 'none' };
  key: 'own' | 'other-env' | 'garbage' | 'none';
  idempotencyKey: string | null;
}

/**
 * The arbitraries of requests to the operations of an OpenAPI document (`doc`, for its component references):
 * `requestArbitrary(o)` generates requests to `o`, mostly valid, some malformed; `resolve` follows a `$ref`.
 */
export function openApiArbitraries(doc: any) {
  const resolve = (schema: any): any => {
    let s = schema;
    for (let i = 0; s?.$ref && i < 10; i++)
      s = s.$ref
        .replace(/^#\//, '')
        .split('/')
        .reduce((node: any, key: string) => node?.[key], doc);
    return s ?? {};
  };

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
    if (Array.isArray(union) && union.length)
      return fc.oneof(...union.map((u: any) => valueFor(u, depth + 1, mutation)));
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

  return { resolve, requestArbitrary };
}

/** Whether the operation answers a Server-Sent Events stream. */
export function isEventStream(o: Operation): boolean {
  return Boolean(o.op.responses?.['200']?.content?.['text/event-stream']);
}

/** The request `g` to operation `o` as app.inject options, with fixture ids filled in and the tenant's keys. */
export function toInject(o: Operation, g: Generated, fixtures: Fixtures): InjectOptions {
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

/**
 * `value` percent-encoded for a path or a form; a lone surrogate cannot be encoded, so it is sent as the (invalid
 * UTF-8) bytes a careless client would send.
 */
export function encodePath(value: string): string {
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

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './harness.js';

/*
 * Every string a client can send has an upper bound (LIM-2), and every amount too (LIM-3): walked over both served
 * OpenAPI documents, request bodies, parameters and headers alike.
 */
let t: TestApp;
let documents: Array<{ name: string; doc: any }>;
beforeAll(async () => {
  t = await createTestApp();
  documents = [];
  for (const prefix of ['/v1', '/test/v1']) {
    const res = await t.app.inject({ method: 'GET', url: `${prefix}/openapi.json` });
    expect(res.statusCode).toBe(200);
    documents.push({ name: prefix, doc: res.json() });
  }
});
afterAll(() => t?.close());

type Finding = string;

function resolve(doc: any, schema: any): any {
  let s = schema;
  for (let i = 0; s?.$ref && i < 20; i++)
    s = s.$ref
      .replace(/^#\//, '')
      .split('/')
      .reduce((o: any, k: string) => o?.[k], doc);
  return s;
}

/** A regular expression that cannot match more than a bounded number of characters (anchored, no * or + or open {n,}). */
function boundedPattern(pattern: string): boolean {
  return pattern.startsWith('^') && pattern.endsWith('$') && !/(?<!\\)[*+]|\{\d+,\}/.test(pattern);
}

function walk(
  doc: any,
  schema: any,
  where: string,
  out: { strings: Finding[]; numbers: Finding[] },
  seen = new Set<any>(),
): void {
  const s = resolve(doc, schema);
  if (!s || typeof s !== 'object' || seen.has(s)) return;
  seen.add(s);
  for (const key of ['anyOf', 'oneOf', 'allOf'])
    for (const [i, sub] of (s[key] ?? []).entries()) walk(doc, sub, `${where}|${key}${i}`, out, seen);
  if (s.not) return;
  const types: string[] = Array.isArray(s.type) ? s.type : s.type ? [s.type] : [];
  if (types.includes('string') && s.enum === undefined && s.const === undefined) {
    const bounded =
      typeof s.maxLength === 'number' ||
      (typeof s.pattern === 'string' && boundedPattern(s.pattern)) ||
      (['date', 'date-time', 'uuid', 'email'].includes(s.format) && typeof s.maxLength === 'number');
    if (!bounded) out.strings.push(where);
  }
  if (
    (types.includes('integer') || types.includes('number')) &&
    s.enum === undefined &&
    s.const === undefined &&
    s.maximum === undefined &&
    s.exclusiveMaximum === undefined
  ) {
    out.numbers.push(where);
  }
  if (s.properties) for (const [k, v] of Object.entries(s.properties)) walk(doc, v, `${where}.${k}`, out, seen);
  if (s.items) walk(doc, s.items, `${where}[]`, out, seen);
  if (s.additionalProperties && typeof s.additionalProperties === 'object')
    walk(doc, s.additionalProperties, `${where}{}`, out, seen);
}

function requestFindings(doc: any): { strings: Finding[]; numbers: Finding[] } {
  const out = { strings: [] as Finding[], numbers: [] as Finding[] };
  for (const [path, item] of Object.entries<any>(doc.paths ?? {})) {
    for (const [method, op] of Object.entries<any>(item)) {
      if (!op || typeof op !== 'object' || !op.responses) continue;
      const name = `${method.toUpperCase()} ${path}`;
      for (const p of [...(item.parameters ?? []), ...(op.parameters ?? [])]) {
        const param = resolve(doc, p);
        walk(doc, param.schema, `${name} ${param.in} ${param.name}`, out);
      }
      const body = resolve(doc, op.requestBody);
      for (const [type, media] of Object.entries<any>(body?.content ?? {}))
        walk(doc, media.schema, `${name} body(${type})`, out);
    }
  }
  return out;
}

describe('request bounds in both OpenAPI documents', () => {
  it('every string a request can carry has a maximum length (or is an enum, or matches a bounded pattern)', () => {
    for (const { name, doc } of documents) expect(requestFindings(doc).strings, name).toEqual([]);
  });

  it('every number a request can carry has a maximum', () => {
    for (const { name, doc } of documents) expect(requestFindings(doc).numbers, name).toEqual([]);
  });
});

describe('the bounds hold at the edge', () => {
  it('an over-long string in a body, a query or a path answers 400 naming the field (never 500)', async () => {
    const tenant = await t.newTenant();
    const user = await tenant.api('POST', '/users', {
      fullName: 'A'.repeat(1001),
      email: 'long.name@example.com',
      phoneNumber: '+14155550123',
    });
    expect(user.statusCode).toBe(400);
    expect(user.json().errors).toEqual([expect.objectContaining({ field: 'fullName' })]);
    const query = await tenant.api('GET', `/companies?userId=${'u'.repeat(300)}`);
    expect(query.statusCode).toBe(400);
    expect(query.json().errors).toEqual([expect.objectContaining({ field: 'userId' })]);
    expect(
      (
        await tenant.api('POST', '/users', {
          fullName: 'A'.repeat(1000),
          email: 'long.ok@example.com',
          phoneNumber: '+14155550123',
        })
      ).statusCode,
    ).not.toBe(500);
  });

  it('a retail price above 100,000 dollars answers 400 naming retailAmount', async () => {
    const tenant = await t.newTenant();
    const res = await tenant.api('PUT', '/organization/prices/ein', { retailAmount: 100_001 }, { env: 'live' });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors).toEqual([expect.objectContaining({ field: 'retailAmount' })]);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './harness.js';

let t: TestApp;
let doc: any;
beforeAll(async () => {
  t = await createTestApp();
  const res = await t.app.inject({ method: 'GET', url: '/v1/openapi.json' });
  expect(res.statusCode).toBe(200);
  doc = res.json();
});
afterAll(() => t.close());

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
const operations = (): Array<{ path: string; method: string; op: any }> =>
  Object.entries<any>(doc.paths).flatMap(([path, item]) =>
    Object.entries<any>(item).filter(([m]) => METHODS.includes(m)).map(([method, op]) => ({ path, method, op })));

/** Follows a local $ref ('#/components/schemas/Error') to its schema. */
const resolve = (schema: any): any => {
  if (!schema?.$ref) return schema;
  return schema.$ref.replace(/^#\//, '').split('/').reduce((node: any, key: string) => node?.[key], doc);
};

describe('GET /v1/openapi.json', () => {
  it('is an OpenAPI 3.1 document of version 1.6.0, without an API key', async () => {
    expect(doc.openapi).toMatch(/^3\.1\./);
    expect(doc.info.version).toBe('1.6.0');
    expect(doc.info.title).toEqual(expect.any(String));
  });

  it('declares the x-api-key header scheme and requires it globally', () => {
    const schemes = Object.entries<any>(doc.components.securitySchemes);
    const apiKey = schemes.find(([, s]) => s.type === 'apiKey' && s.in === 'header' && s.name === 'x-api-key');
    expect(apiKey).toBeDefined();
    expect(doc.security).toEqual([{ [apiKey![0]]: [] }]);
  });

  it('lists the live and test servers at the configured base addresses', () => {
    const urls = doc.servers.map((s: { url: string }) => s.url);
    expect(urls).toEqual([t.ctx.config.liveBaseUrl, t.ctx.config.testBaseUrl]);
  });

  it('documents the users and companies routes with paths relative to the base address', () => {
    expect(doc.paths['/users']).toHaveProperty('post');
    expect(doc.paths['/users']).toHaveProperty('get');
    expect(doc.paths['/users/{userIdOrEmail}']).toHaveProperty('get');
    expect(doc.paths['/companies']).toHaveProperty('post');
    expect(doc.paths['/companies']).toHaveProperty('get');
    expect(doc.paths['/companies/{companyIdOrSlug}']).toHaveProperty('get');
    expect(doc.paths['/companies/{companyIdOrSlug}']).toHaveProperty('patch');
    const paths = Object.keys(doc.paths);
    expect(paths.filter((p) => p.startsWith('/v1') || p.startsWith('/test/') || p.startsWith('/admin') || p.startsWith('/docs'))).toEqual([]);
  });

  it('documents the request and response schemas of POST /companies, without officers in the response', () => {
    const op = doc.paths['/companies'].post;
    const body = op.requestBody.content['application/json'].schema;
    expect(body.required).toEqual(expect.arrayContaining(['legalName', 'entityType', 'principalAddress', 'mailingAddress', 'officers', 'userId']));
    expect(body.properties.formationState.enum).toHaveLength(51);
    const created = resolve(op.responses['201'].content['application/json'].schema);
    expect(Object.keys(created.properties)).toContain('slug');
    expect(Object.keys(created.properties)).not.toContain('officers');
    expect(doc.paths['/companies/{companyIdOrSlug}'].patch.description).toMatch(/Updatable/);
  });

  it('documents the error responses of every operation with the one error body', () => {
    const errorSchema = doc.components.schemas.Error;
    expect(errorSchema.required).toEqual(expect.arrayContaining(['message', 'code', 'requestId']));
    const missing: string[] = [];
    for (const { path, method, op } of operations()) {
      const statuses = Object.keys(op.responses ?? {});
      // Every API route can answer 401 (key) and 500; 400 covers validation of params, query or body.
      for (const s of ['400', '401', '500']) if (!statuses.includes(s)) missing.push(`${method.toUpperCase()} ${path}: ${s}`);
      for (const s of statuses.filter((x) => Number(x) >= 400)) {
        const schema = op.responses[s].content?.['application/json']?.schema;
        if (resolve(schema) !== errorSchema) missing.push(`${method.toUpperCase()} ${path}: ${s} body is not the Error schema`);
        if (!op.responses[s].description) missing.push(`${method.toUpperCase()} ${path}: ${s} has no description`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('documents 404 on the routes that look a resource up and 409 on POST /users', () => {
    expect(doc.paths['/users/{userIdOrEmail}'].get.responses).toHaveProperty('404');
    expect(doc.paths['/companies/{companyIdOrSlug}'].get.responses).toHaveProperty('404');
    expect(doc.paths['/companies/{companyIdOrSlug}'].patch.responses).toHaveProperty('404');
    expect(doc.paths['/users'].post.responses).toHaveProperty('409');
  });

  it('gives every operation a tag and a summary', () => {
    const bare = operations().filter(({ op }) => !op.tags?.length || !op.summary).map(({ path, method }) => `${method} ${path}`);
    expect(bare).toEqual([]);
  });
});

describe('/docs', () => {
  it('renders the API reference as HTML', async () => {
    let res = await t.app.inject({ method: 'GET', url: '/docs' });
    if (res.statusCode >= 300 && res.statusCode < 400) res = await t.app.inject({ method: 'GET', url: String(res.headers.location) });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/html');
    expect(res.body).toMatch(/<html/i);
  });
});

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
    const body = resolve(op.requestBody.content['application/json'].schema);
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

  it('names the main resources as components under components.schemas', () => {
    const names = [
      'User', 'Company', 'Address', 'Officer', 'SuppliedRegisteredAgent', 'OrderRequest', 'OrderItem', 'OrderResult', 'Quote', 'QuoteLine',
      'EinOrder', 'EinResponsibleParty', 'EinEmployees', 'EinIrsQuestions', 'PriceRow', 'PriceList', 'BalanceTransaction',
      'BalanceTransactionList', 'Organization', 'Event', 'EventList', 'Document', 'DocumentList', 'WebhookEndpoint',
      'WebhookEndpointWithSecret', 'WebhookDelivery', 'WebhookAttempt', 'WebhookDeliveryWithAttempts', 'MagicLink', 'UserList',
      'CompanyList', 'Error',
    ];
    expect(Object.keys(doc.components.schemas)).toEqual(expect.arrayContaining(names));
    for (const name of names) expect(doc.components.schemas[name].type, name).toBe('object');
    expect(Object.keys(doc.components.schemas.WebhookEndpointWithSecret.properties)).toContain('secret');
    expect(Object.keys(doc.components.schemas.WebhookEndpoint.properties)).not.toContain('secret');
  });

  it('references the components from the operations instead of repeating the schemas inline', () => {
    const bodyOf = (op: any) => op.requestBody.content['application/json'].schema;
    const responseOf = (op: any, status: string) => op.responses[status].content['application/json'].schema;
    const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
    expect(bodyOf(doc.paths['/users'].post)).toEqual(ref('CreateUserRequest'));
    expect(responseOf(doc.paths['/users'].post, '201')).toEqual(ref('User'));
    expect(responseOf(doc.paths['/users/{userIdOrEmail}'].get, '200')).toEqual(ref('User'));
    expect(responseOf(doc.paths['/users'].get, '200')).toEqual(ref('UserList'));
    expect(doc.components.schemas.UserList.properties.data.items).toEqual(ref('User'));
    expect(responseOf(doc.paths['/companies'].post, '201')).toEqual(ref('Company'));
    expect(doc.components.schemas.Company.properties.principalAddress).toEqual(ref('Address'));

    const orders = doc.paths['/orders'].post;
    expect(bodyOf(orders)).toEqual(ref('OrderRequest'));
    expect(bodyOf(doc.paths['/orders/quote'].post)).toEqual(ref('OrderRequest'));
    expect(responseOf(orders, '201')).toEqual(ref('OrderResult'));
    expect(responseOf(doc.paths['/orders/quote'].post, '200')).toEqual(ref('Quote'));
    const order = doc.components.schemas.OrderRequest.properties;
    expect(order.ein).toEqual(ref('EinOrder'));
    expect(doc.components.schemas.EinOrder.properties.responsibleParty).toEqual(ref('EinResponsibleParty'));
    expect(doc.components.schemas.OrderResult.properties.items.items).toEqual(ref('OrderItem'));
    const formationCompany = resolve(resolve(order.formation).properties.company);
    expect(formationCompany.properties.officers.items).toEqual(ref('Officer'));
    expect(resolve(order.formation).properties.registeredAgent).toEqual(ref('SuppliedRegisteredAgent'));

    expect(responseOf(doc.paths['/webhook-endpoints'].post, '201')).toEqual(ref('WebhookEndpointWithSecret'));
    expect(responseOf(doc.paths['/webhook-endpoints/{id}'].get, '200')).toEqual(ref('WebhookEndpoint'));
    expect(responseOf(doc.paths['/auth/magic-link'].post, '201')).toEqual(ref('MagicLink'));
    expect(responseOf(doc.paths['/organization'].get, '200')).toEqual(ref('Organization'));
  });

  it('resolves every $ref and leaves no titled schema inline (a title names exactly one component)', () => {
    const dangling: string[] = [];
    const inline: string[] = [];
    const walk = (node: any, path: string) => {
      if (Array.isArray(node)) return node.forEach((n, i) => walk(n, `${path}/${i}`));
      if (typeof node !== 'object' || node === null) return;
      if (typeof node.$ref === 'string' && resolve(node) === undefined) dangling.push(`${path}: ${node.$ref}`);
      // The roots of components are not walked; a `title` under `properties` would be a property so named.
      if (typeof node.title === 'string' && !path.endsWith('/properties')) inline.push(`${path}: ${node.title}`);
      for (const [k, v] of Object.entries(node)) walk(v, `${path}/${k}`);
    };
    walk(doc.paths, '/paths');
    for (const [name, schema] of Object.entries<any>(doc.components.schemas)) {
      for (const [k, v] of Object.entries(schema)) walk(v, `/components/schemas/${name}/${k}`);
    }
    expect(dangling).toEqual([]);
    expect(inline).toEqual([]);
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

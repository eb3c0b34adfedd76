import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATIONS, API_TAGS } from '../src/lib/api-operations.js';
import { ERROR_STATUS } from '../src/lib/errors.js';
import { publishedServerUrl } from '../src/lib/openapi.js';
import { createTestApp, type TestApp } from './harness.js';
import { responseChecker } from './openapi-responses.js';

let t: TestApp;
let doc: any;
let testDoc: any;
beforeAll(async () => {
  t = await createTestApp();
  const res = await t.app.inject({ method: 'GET', url: '/v1/openapi.json' });
  expect(res.statusCode).toBe(200);
  doc = res.json();
  const test = await t.app.inject({ method: 'GET', url: '/test/v1/openapi.json' });
  expect(test.statusCode).toBe(200);
  testDoc = test.json();
});
afterAll(() => t.close());

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
const operations = (of: any = doc): Array<{ path: string; method: string; op: any }> =>
  Object.entries<any>(of.paths).flatMap(([path, item]) =>
    Object.entries<any>(item)
      .filter(([m]) => METHODS.includes(m))
      .map(([method, op]) => ({ path, method, op })),
  );

/** Follows a local $ref ('#/components/schemas/Error') to its schema. */
const resolve = (schema: any, of: any = doc): any => {
  if (!schema?.$ref) return schema;
  return schema.$ref
    .replace(/^#\//, '')
    .split('/')
    .reduce((node: any, key: string) => node?.[key], of);
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

  it("lists only its own environment's server: the live base address here, the test one at /test/v1, no localhost", () => {
    expect(t.ctx.config.liveBaseUrl).toMatch(/localhost/);
    expect(doc.servers.map((s: { url: string }) => s.url)).toEqual(['/v1']);
    expect(testDoc.servers.map((s: { url: string }) => s.url)).toEqual(['/test/v1']);
    for (const d of [doc, testDoc]) expect(JSON.stringify(d.servers)).not.toMatch(/localhost|127\.0\.0\.1/);
  });

  it("publishes a public base address as is and a machine-local one as its path, which resolves against the document's own address", () => {
    expect(publishedServerUrl('https://api.filings.example/v1')).toBe('https://api.filings.example/v1');
    expect(publishedServerUrl('https://sandbox.filings.example/test/v1')).toBe(
      'https://sandbox.filings.example/test/v1',
    );
    expect(publishedServerUrl('http://localhost:3000/v1')).toBe('/v1');
    expect(publishedServerUrl('http://127.0.0.1:8080/test/v1')).toBe('/test/v1');
    expect(publishedServerUrl('http://[::1]:3000/v1')).toBe('/v1');
  });

  it('leaves the test helpers out of the live document and keeps them in the test one', () => {
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/test_helpers'))).toEqual([]);
    expect(doc.tags.map((tag: { name: string }) => tag.name)).not.toContain('Test helpers');
    expect(Object.keys(testDoc.paths)).toEqual(
      expect.arrayContaining([
        '/test_helpers/balance-credits',
        '/test_helpers/orders/{orderId}/advance',
        '/test_helpers/orders/{orderId}/documents',
      ]),
    );
    expect(testDoc.paths['/test_helpers/balance-credits'].post.servers).toBeUndefined();
    const liveIds = operations(doc).map(({ op }) => op.operationId);
    const testIds = operations(testDoc).map(({ op }) => op.operationId);
    expect(testIds.filter((id) => !liveIds.includes(id)).sort()).toEqual([
      'advanceTestOrder',
      'createTestBalanceCredit',
      'createTestDocument',
      'runTestComplianceReminders',
    ]);
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
    expect(
      paths.filter(
        (p) => p.startsWith('/v1') || p.startsWith('/test/') || p.startsWith('/admin') || p.startsWith('/docs'),
      ),
    ).toEqual([]);
  });

  it('documents the request and response schemas of POST /companies, without officers in the response', () => {
    const op = doc.paths['/companies'].post;
    const body = resolve(op.requestBody.content['application/json'].schema);
    expect(body.required).toEqual(
      expect.arrayContaining(['legalName', 'entityType', 'principalAddress', 'mailingAddress', 'officers', 'userId']),
    );
    expect(body.properties.formationState.enum).toHaveLength(51);
    const created = resolve(op.responses['201'].content['application/json'].schema);
    expect(Object.keys(created.properties)).toContain('slug');
    expect(Object.keys(created.properties)).not.toContain('officers');
    expect(doc.paths['/companies/{companyIdOrSlug}'].patch.description).toMatch(/Updatable/);
  });

  it('documents the error responses of every operation with the one error body and an example per code it can return', () => {
    const errorSchema = testDoc.components.schemas.Error;
    expect(errorSchema.required).toEqual(expect.arrayContaining(['message', 'code', 'requestId']));
    const missing: string[] = [];
    for (const { path, method, op } of operations(testDoc)) {
      const at = `${method.toUpperCase()} ${path}`;
      const statuses = Object.keys(op.responses ?? {});
      // Every API route sits behind the key check (401) and can fail inside (500); routes with inputs validate them
      // (400).
      for (const s of ['401', '500']) if (!statuses.includes(s)) missing.push(`${at}: ${s}`);
      if ((op.parameters?.length || op.requestBody) && !statuses.includes('400')) missing.push(`${at}: 400`);
      const documented: string[] = [];
      for (const s of statuses.filter((x) => Number(x) >= 400)) {
        const media = op.responses[s].content?.['application/json'];
        if (resolve(media?.schema, testDoc) !== testDoc.components.schemas.Error)
          missing.push(`${at}: ${s} body is not the Error schema`);
        if (!op.responses[s].description) missing.push(`${at}: ${s} has no description`);
        const examples = Object.entries<any>(media?.examples ?? {});
        if (!examples.length) missing.push(`${at}: ${s} has no example`);
        for (const [code, example] of examples) {
          documented.push(code);
          if (example.value.code !== code || String(ERROR_STATUS[code as keyof typeof ERROR_STATUS]) !== s)
            missing.push(`${at}: example ${code} under ${s}`);
          if (!example.value.message || !example.value.requestId)
            missing.push(`${at}: example ${code} lacks message or requestId`);
        }
      }
      expect(documented.sort(), at).toEqual([...OPERATIONS[op.operationId as keyof typeof OPERATIONS].errors].sort());
    }
    expect(missing).toEqual([]);
  });

  it('publishes the error code as an enum of every code the service has', () => {
    expect(doc.components.schemas.Error.properties.code.enum.sort()).toEqual(Object.keys(ERROR_STATUS).sort());
  });

  it('documents 404 on the routes that look a resource up and 409 on POST /users', () => {
    expect(doc.paths['/users/{userIdOrEmail}'].get.responses).toHaveProperty('404');
    expect(doc.paths['/companies/{companyIdOrSlug}'].get.responses).toHaveProperty('404');
    expect(doc.paths['/companies/{companyIdOrSlug}'].patch.responses).toHaveProperty('404');
    expect(doc.paths['/users'].post.responses).toHaveProperty('409');
  });

  it('names the main resources as components under components.schemas', () => {
    const names = [
      'User',
      'Company',
      'Address',
      'Officer',
      'SuppliedRegisteredAgent',
      'OrderRequest',
      'OrderItem',
      'OrderResult',
      'Quote',
      'QuoteLine',
      'EinOrder',
      'EinResponsibleParty',
      'EinEmployees',
      'EinIrsQuestions',
      'PriceRow',
      'PriceList',
      'BalanceTransaction',
      'BalanceTransactionList',
      'Organization',
      'Event',
      'EventList',
      'Document',
      'DocumentList',
      'WebhookEndpoint',
      'WebhookEndpointWithSecret',
      'WebhookDelivery',
      'WebhookAttempt',
      'WebhookDeliveryWithAttempts',
      'MagicLink',
      'UserList',
      'CompanyList',
      'Error',
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
      if (Array.isArray(node)) {
        node.forEach((n, i) => {
          walk(n, `${path}/${i}`);
        });
        return;
      }
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

  it('gives every operation its catalogue operationId (camelCase, unique), a summary, a description and one declared tag', () => {
    const ops = operations(testDoc);
    const bare = ops
      .filter(({ op }) => !op.summary || !op.description || op.tags?.length !== 1)
      .map(({ path, method }) => `${method} ${path}`);
    expect(bare).toEqual([]);
    const ids = ops.map(({ op }) => op.operationId);
    for (const id of ids) expect(id).toMatch(/^[a-z][a-zA-Z0-9]*$/);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.sort()).toEqual(Object.keys(OPERATIONS).sort());
    for (const { op } of ops) expect(op.tags).toEqual([OPERATIONS[op.operationId as keyof typeof OPERATIONS].tag]);
    expect(testDoc.tags).toEqual(Object.entries(API_TAGS).map(([name, description]) => ({ name, description })));
    const used = new Set(ops.flatMap(({ op }) => op.tags));
    expect(testDoc.tags.map((tag: { name: string }) => tag.name).filter((name: string) => !used.has(name))).toEqual([]);
  });

  it('names the operations as generators will: createOrder, getCompany, listEvents, streamEvents…', () => {
    const id = (path: string, method: string) => testDoc.paths[path][method].operationId;
    expect(id('/orders', 'post')).toBe('createOrder');
    expect(id('/companies/{companyIdOrSlug}', 'get')).toBe('getCompany');
    expect(id('/events', 'get')).toBe('listEvents');
    expect(id('/events/stream', 'get')).toBe('streamEvents');
    expect(id('/test_helpers/orders/{orderId}/advance', 'post')).toBe('advanceTestOrder');
  });

  it('describes a balance statement as JSON or CSV', () => {
    const op = testDoc.paths['/balance/statements/{month}'].get;
    expect(op.operationId).toBe('getBalanceStatement');
    expect(Object.keys(op.responses['200'].content)).toEqual(['application/json', 'text/csv']);
    expect(op.parameters.map((p: { in: string; name: string }) => `${p.in}:${p.name}`)).toEqual(
      expect.arrayContaining(['path:month', 'query:format']),
    );
  });

  it('describes GET /events/stream as text/event-stream and the webhook payloads under webhooks', () => {
    const stream = testDoc.paths['/events/stream'].get;
    expect(Object.keys(stream.responses['200'].content)).toEqual(['text/event-stream']);
    expect(stream.parameters.map((p: { in: string; name: string }) => `${p.in}:${p.name}`)).toEqual(
      expect.arrayContaining(['header:last-event-id', 'query:types']),
    );
    expect(Object.keys(testDoc.webhooks).sort()).toEqual([
      'balance.auto_recharge_failed',
      'balance.low',
      'balance.top_up_failed',
      'balance.top_up_reinstated',
      'balance.top_up_reversed',
      'balance.top_up_succeeded',
      'compliance.deadline_approaching',
      'compliance.deadline_missed',
      'document.uploaded',
      'filing.status_changed',
      'webhook.test',
    ]);
    const payload = resolve(
      testDoc.webhooks['filing.status_changed'].post.requestBody.content['application/json'].schema,
      testDoc,
    );
    expect(payload.properties.type.const).toBe('filing.status_changed');
    expect(resolve(payload.properties.data, testDoc).required).toEqual(
      expect.arrayContaining(['orderId', 'filingStatus']),
    );
    expect(
      resolve(testDoc.webhooks['document.uploaded'].post.requestBody.content['application/json'].schema, testDoc)
        .properties.data,
    ).toEqual({ $ref: '#/components/schemas/Document' });
  });
});

describe('/docs', () => {
  it('renders the API reference as HTML', async () => {
    let res = await t.app.inject({ method: 'GET', url: '/docs' });
    if (res.statusCode >= 300 && res.statusCode < 400)
      res = await t.app.inject({ method: 'GET', url: String(res.headers.location) });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/html');
    expect(res.body).toMatch(/<html/i);
  });
});

describe('responses checked against the document (test/openapi-responses.ts, run by the harness on every call)', () => {
  const json = (statusCode: number, body: unknown) => ({
    statusCode,
    headers: { 'content-type': 'application/json; charset=utf-8' },
    body: JSON.stringify(body),
  });

  it('accepts a real answer and refuses one that breaks the declared schema or status', async () => {
    const checker = responseChecker(t.app);
    const tenant = await t.newTenant();
    const created = await tenant.api('POST', '/users', {
      fullName: 'Ada Lovelace',
      email: `ada.${Date.now()}@example.com`,
    });
    expect(created.statusCode).toBe(201);
    const user = created.json();
    expect(() => checker.check('GET', `/test/v1/users/${user.id}`, json(200, user))).not.toThrow();
    // A field of the wrong type, a missing required field, a status the operation does not declare.
    expect(() => checker.check('GET', `/test/v1/users/${user.id}`, json(200, { ...user, fullName: 42 }))).toThrow(
      /GET \/test\/v1\/users\/\{userIdOrEmail\} answered 200.*\n.*fullName/,
    );
    const { id: _id, ...withoutId } = user;
    expect(() => checker.check('GET', `/v1/users/${user.id}`, json(200, withoutId))).toThrow(/does not match/);
    expect(() => checker.check('GET', `/test/v1/users/${user.id}`, json(418, { message: 'teapot' }))).toThrow(
      /does not declare/,
    );
    // Routes outside the document (the admin API) are not its business.
    expect(() => checker.check('GET', '/admin/v1/orders', json(200, { anything: true }))).not.toThrow();
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signingSecrets } from '../src/modules/webhooks/endpoint-secrets.js';
import { createTestApp, type TestApp, type TestTenant } from './harness.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t?.close());

const body = (overrides: Record<string, unknown> = {}) => ({
  url: 'http://127.0.0.1:9/hooks',
  eventTypes: ['filing.status_changed'],
  ...overrides,
});

/** Resolves once a statement starting with `sqlStart` waits for a row lock in this test's database. */
async function waitUntilBlocked(sqlStart: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const { rows } = await t.ctx.pool.query(
      `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND ltrim(query) LIKE $1 || '%'`,
      [sqlStart],
    );
    if (rows.length) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`no statement '${sqlStart}…' ever waited for a lock`);
}

async function createEndpoint(
  tenant: TestTenant,
  overrides: Record<string, unknown> = {},
  env: 'live' | 'test' = 'test',
) {
  const res = await tenant.api('POST', '/webhook-endpoints', body(overrides), { env });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

describe('webhook endpoints', () => {
  it('returns the whsec_ secret once, at creation, and never on reads', async () => {
    const tenant = await t.newTenant();
    const created = await createEndpoint(tenant, {
      description: 'Production receiver',
      eventTypes: ['filing.status_changed', 'document.uploaded'],
    });
    expect(created).toMatchObject({
      id: expect.stringMatching(/^we_/),
      url: 'http://127.0.0.1:9/hooks',
      description: 'Production receiver',
      eventTypes: ['filing.status_changed', 'document.uploaded'],
      disabled: false,
      disabledReason: null,
      failingSince: null,
    });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    const read = await tenant.api('GET', `/webhook-endpoints/${created.id}`);
    expect(read.statusCode).toBe(200);
    expect(read.json()).not.toHaveProperty('secret');
    expect(read.body).not.toContain(created.secret);
    const list = await tenant.api('GET', '/webhook-endpoints');
    expect(list.json().data.map((e: { id: string }) => e.id)).toEqual([created.id]);
    expect(list.body).not.toContain(created.secret);
  });

  it('replays creation and rotation for a retried Idempotency-Key without keeping the secret readable in idempotency_keys', async () => {
    const tenant = await t.newTenant();
    const headers = { 'idempotency-key': 'create-endpoint-1' };
    const first = await tenant.api('POST', '/webhook-endpoints', body(), { headers });
    const retry = await tenant.api('POST', '/webhook-endpoints', body(), { headers });
    expect(first.statusCode, first.body).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.json()).toEqual(first.json());
    const rotateHeaders = { 'idempotency-key': 'rotate-endpoint-1' };
    const rotated = await tenant.api('POST', `/webhook-endpoints/${first.json().id}/rotate-secret`, undefined, {
      headers: rotateHeaders,
    });
    expect(rotated.statusCode, rotated.body).toBe(200);
    expect(
      (
        await tenant.api('POST', `/webhook-endpoints/${first.json().id}/rotate-secret`, undefined, {
          headers: rotateHeaders,
        })
      ).json().secret,
    ).toBe(rotated.json().secret);
    const stored = JSON.stringify(
      (await t.ctx.pool.query('SELECT * FROM idempotency_keys WHERE organization_id = $1', [tenant.organizationId]))
        .rows,
    );
    expect(stored).not.toContain(first.json().secret);
    expect(stored).not.toContain(rotated.json().secret);
    expect(stored).not.toContain('whsec_');
  });

  it('gives every endpoint its own secret', async () => {
    const tenant = await t.newTenant();
    const a = await createEndpoint(tenant);
    const b = await createEndpoint(tenant);
    expect(a.secret).not.toBe(b.secret);
  });

  it('refuses unknown event types with a 400 naming the field', async () => {
    const tenant = await t.newTenant();
    const res = await tenant.api(
      'POST',
      '/webhook-endpoints',
      body({ eventTypes: ['filing.status_changed', 'order.shipped'] }),
    );
    expect(res.statusCode).toBe(400);
    expect(res.json().errors).toEqual([
      { field: 'eventTypes.1', message: expect.stringContaining('filing.status_changed, document.uploaded') },
    ]);
    const testType = await tenant.api('POST', '/webhook-endpoints', body({ eventTypes: ['webhook.test'] }));
    expect(testType.statusCode).toBe(400);
    expect(testType.json().errors[0].field).toBe('eventTypes.0');
  });

  it('names every missing or invalid field', async () => {
    const tenant = await t.newTenant();
    const res = await tenant.api('POST', '/webhook-endpoints', { eventTypes: [] });
    expect(res.statusCode).toBe(400);
    const fields = res.json().errors.map((e: { field: string }) => e.field);
    expect(fields).toEqual(expect.arrayContaining(['url', 'eventTypes']));
    const bad = await tenant.api('POST', '/webhook-endpoints', body({ url: 'not a url' }));
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors[0]).toMatchObject({ field: 'url' });
  });

  it('updates url, event types and description', async () => {
    const tenant = await t.newTenant();
    const created = await createEndpoint(tenant);
    const res = await tenant.api('PATCH', `/webhook-endpoints/${created.id}`, {
      url: 'http://127.0.0.1:10/new',
      eventTypes: ['document.uploaded'],
      description: 'renamed',
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      url: 'http://127.0.0.1:10/new',
      eventTypes: ['document.uploaded'],
      description: 'renamed',
    });
    expect(res.json()).not.toHaveProperty('secret');
    const cleared = await tenant.api('PATCH', `/webhook-endpoints/${created.id}`, { description: null });
    expect(cleared.json()).toMatchObject({ description: null, eventTypes: ['document.uploaded'] });
    const bad = await tenant.api('PATCH', `/webhook-endpoints/${created.id}`, { eventTypes: ['nope'] });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors[0].field).toBe('eventTypes.0');
  });

  it('disables and re-enables; re-enabling clears the reason and the failure clock', async () => {
    const tenant = await t.newTenant();
    const created = await createEndpoint(tenant);
    const off = await tenant.api('PATCH', `/webhook-endpoints/${created.id}`, { disabled: true });
    expect(off.json()).toMatchObject({ disabled: true, disabledReason: expect.any(String) });
    // As if deliveries had been failing before it was disabled.
    await t.ctx.pool.query(`UPDATE webhook_endpoints SET failing_since = now() - interval '3 days' WHERE id = $1`, [
      created.id,
    ]);
    expect((await tenant.api('GET', `/webhook-endpoints/${created.id}`)).json().failingSince).not.toBeNull();
    const on = await tenant.api('PATCH', `/webhook-endpoints/${created.id}`, { disabled: false });
    expect(on.json()).toMatchObject({ disabled: false, disabledReason: null, failingSince: null });
  });

  it('soft-deletes: the endpoint answers 404 afterwards and leaves the list', async () => {
    const tenant = await t.newTenant();
    const created = await createEndpoint(tenant);
    const del = await tenant.api('DELETE', `/webhook-endpoints/${created.id}`);
    expect(del.statusCode).toBe(200);
    expect(del.json()).toEqual({ id: created.id, deleted: true });
    expect((await tenant.api('GET', `/webhook-endpoints/${created.id}`)).statusCode).toBe(404);
    expect((await tenant.api('DELETE', `/webhook-endpoints/${created.id}`)).statusCode).toBe(404);
    expect((await tenant.api('GET', '/webhook-endpoints')).json().data).toEqual([]);
  });

  it('rotates the secret: the new one is shown once and the old one stays valid for 24 hours', async () => {
    const tenant = await t.newTenant();
    const created = await createEndpoint(tenant);
    const res = await tenant.api('POST', `/webhook-endpoints/${created.id}/rotate-secret`);
    expect(res.statusCode).toBe(200);
    const rotated = res.json();
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(created.secret);
    const hours = (Date.parse(rotated.previousSecretExpiresAt) - Date.now()) / 3_600_000;
    expect(hours).toBeGreaterThan(23.9);
    expect(hours).toBeLessThanOrEqual(24);
    const read = await tenant.api('GET', `/webhook-endpoints/${created.id}`);
    expect(read.body).not.toContain(rotated.secret);
    expect(read.body).not.toContain(created.secret);
  });

  it('issues no secret for an endpoint deleted while the rotation was under way', async () => {
    const tenant = await t.newTenant();
    const created = await createEndpoint(tenant);
    // Another request holds the endpoint row (as a DELETE does) while the rotation starts, then deletes it and commits.
    const other = await t.ctx.pool.connect();
    try {
      await other.query('BEGIN');
      await other.query('SELECT 1 FROM webhook_endpoints WHERE id = $1 FOR UPDATE', [created.id]);
      const rotating = tenant.api('POST', `/webhook-endpoints/${created.id}/rotate-secret`);
      await waitUntilBlocked(`UPDATE webhook_endpoints SET previous_secret`);
      await other.query('UPDATE webhook_endpoints SET deleted_at = now() WHERE id = $1', [created.id]);
      await other.query('COMMIT');
      const res = await rotating;
      expect(res.statusCode, res.body).toBe(404);
      expect(res.body).not.toContain('whsec_');
    } finally {
      other.release();
    }
    const { rows } = await t.ctx.pool.query('SELECT secret, previous_secret FROM webhook_endpoints WHERE id = $1', [
      created.id,
    ]);
    expect(rows[0].previous_secret).toBeNull();
    expect(
      signingSecrets(
        t.ctx,
        { endpointId: created.id, secret: rows[0].secret, previousSecret: null, previousSecretExpiresAt: null },
        new Date(),
      ),
    ).toEqual([created.secret]);
  });

  it('pages the list newest first', async () => {
    const tenant = await t.newTenant();
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await createEndpoint(tenant)).id);
    const first = (await tenant.api('GET', '/webhook-endpoints?limit=2')).json();
    expect(first.data.map((e: { id: string }) => e.id)).toEqual([ids[2], ids[1]]);
    expect(first.hasMore).toBe(true);
    const second = (await tenant.api('GET', `/webhook-endpoints?limit=2&startingAfter=${ids[1]}`)).json();
    expect(second.data.map((e: { id: string }) => e.id)).toEqual([ids[0]]);
    expect(second.hasMore).toBe(false);
  });

  it('keeps live and test endpoints apart', async () => {
    const tenant = await t.newTenant();
    const live = await createEndpoint(tenant, {}, 'live');
    expect((await tenant.api('GET', '/webhook-endpoints')).json().data).toEqual([]);
    expect((await tenant.api('GET', `/webhook-endpoints/${live.id}`)).statusCode).toBe(404);
    expect((await tenant.api('GET', `/webhook-endpoints/${live.id}`, undefined, { env: 'live' })).statusCode).toBe(200);
  });
});

describe('test events', () => {
  it('WH-20: POST /webhook-endpoints/{id}/test takes an empty body under any content type', async () => {
    const tenant = await t.newTenant();
    const ep = await createEndpoint(tenant);
    const url = `/webhook-endpoints/${ep.id}/test`;
    const sends: Array<[unknown, Record<string, string>]> = [
      [undefined, {}],
      ['', { 'content-type': 'application/json' }],
      ['', { 'content-type': 'application/json; charset=utf-8' }],
      ['', { 'content-type': 'text/plain' }],
      ['', { 'content-type': 'application/x-www-form-urlencoded' }],
      ['{}', { 'content-type': 'application/json' }],
    ];
    for (const [payload, headers] of sends) {
      const res = await tenant.api('POST', url, payload, { headers });
      expect(res.statusCode, `${JSON.stringify(headers)} ${res.body}`).toBe(202);
      expect(res.json().eventType).toBe('webhook.test');
    }
    // Other routes still parse JSON: an empty JSON body to a route that takes one stays a 400.
    const create = await tenant.api('POST', '/webhook-endpoints', '', {
      headers: { 'content-type': 'application/json' },
    });
    expect(create.statusCode).toBe(400);
  });
});

describe('OpenAPI', () => {
  it('documents the webhook routes, with the secret only in create and rotate responses', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    for (const path of [
      '/webhook-endpoints',
      '/webhook-endpoints/{id}',
      '/webhook-endpoints/{id}/rotate-secret',
      '/webhook-endpoints/{id}/test',
      '/webhook-deliveries',
      '/webhook-deliveries/{id}',
      '/webhook-deliveries/{id}/resend',
    ]) {
      expect(doc.paths, path).toHaveProperty([path]);
    }
    // Response schemas are named components: follow the local $ref.
    const resolve = (schema: any) => (schema?.$ref ? doc.components.schemas[schema.$ref.split('/').pop()] : schema);
    const props = (op: any, status: string) =>
      Object.keys(resolve(op.responses[status].content['application/json'].schema).properties ?? {});
    expect(props(doc.paths['/webhook-endpoints'].post, '201')).toContain('secret');
    expect(props(doc.paths['/webhook-endpoints/{id}/rotate-secret'].post, '200')).toContain('secret');
    expect(props(doc.paths['/webhook-endpoints/{id}'].get, '200')).not.toContain('secret');
  });
});

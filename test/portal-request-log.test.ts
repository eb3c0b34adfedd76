import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { purgeExpiredTask } from '../src/modules/maintenance/purge-expired.task.js';
import { createTestApp, type TestApp, type TestTenant } from './harness.js';
import { memberSession, type PortalClient } from './portal-helpers.js';
import { waitFor } from './webhook-receiver.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

/** Rows of the request log with this request id (whatever the tenant). */
async function logged(
  requestId: string,
): Promise<Array<{ organization_id: string; status: number; error_body: string }>> {
  const { rows } = await t.ctx.pool.query('SELECT * FROM failed_api_requests WHERE request_id = $1', [requestId]);
  return rows;
}

/** A request refused with 400 (a user without its required fields). @returns its request id. */
async function badRequest(tenant: TestTenant, env: 'test' | 'live' = 'test'): Promise<string> {
  const res = await tenant.api('POST', '/users', { fullName: '' }, { env });
  expect(res.statusCode).toBe(400);
  const requestId = String(res.headers['x-request-id']);
  expect(res.json().requestId).toBe(requestId);
  await waitFor('the failed request to be recorded', async () => (await logged(requestId)).length === 1);
  return requestId;
}

async function viewerOf(tenant: TestTenant): Promise<PortalClient> {
  return (await memberSession(t, tenant.organizationId, 'viewer')).client;
}

describe('the request log', () => {
  it('shows a failed request by the request id of its error body, with its key by id and never the key', async () => {
    const tenant = await t.newTenant('Request Log Co');
    const requestId = await badRequest(tenant);
    const viewer = await viewerOf(tenant);
    const page = await viewer.get(`/portal/request-log?requestId=${requestId}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(requestId);
    expect(page.body).toContain('POST /test/v1/users');
    expect(page.body).toContain('>400<');
    expect(page.body).toContain(tenant.keyIds.test);
    expect(page.body).toContain('validation_error');
    expect(page.body).not.toContain(tenant.keys.test);
    // The nav shows the log to every role.
    expect(page.body).toContain('href="/portal/request-log" aria-current="page"');
  });

  it('records failures only: not successes, and not requests without a valid key', async () => {
    const tenant = await t.newTenant('Only Failures Co');
    const ok = await tenant.api('GET', '/users');
    expect(ok.statusCode).toBe(200);
    const unauthenticated = await t.app.inject({
      method: 'GET',
      url: '/test/v1/users',
      headers: { 'x-api-key': 'sk_test_nope' },
    });
    expect(unauthenticated.statusCode).toBe(401);
    const failed = await badRequest(tenant);
    const { rows } = await t.ctx.pool.query('SELECT request_id FROM failed_api_requests WHERE organization_id = $1', [
      tenant.organizationId,
    ]);
    expect(rows.map((r) => r.request_id)).toEqual([failed]);
    expect(await logged(String(ok.headers['x-request-id']))).toEqual([]);
    expect(await logged(String(unauthenticated.headers['x-request-id']))).toEqual([]);
  });

  it('filters by status and path, and keeps at most 8 KiB of an error body', async () => {
    const tenant = await t.newTenant('Filters Co');
    const bad = await badRequest(tenant);
    const missing = await tenant.api('GET', '/users/user_01jd3qzzzzzzzzzzzzzzzzzzzz');
    expect(missing.statusCode).toBe(404);
    const missingId = String(missing.headers['x-request-id']);
    await waitFor('the 404 to be recorded', async () => (await logged(missingId)).length === 1);
    const viewer = await viewerOf(tenant);

    const only404 = await viewer.get('/portal/request-log?status=404');
    expect(only404.body).toContain(missingId);
    expect(only404.body).not.toContain(bad);
    const byPath = await viewer.get(`/portal/request-log?path=${encodeURIComponent('/test/v1/users/')}`);
    expect(byPath.body).toContain(missingId);
    expect(byPath.body).not.toContain(bad);
    const refused = await viewer.get('/portal/request-log?status=200');
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('id="f-status-error"');

    // An error body naming many bad fields is long; what is kept of it stays within 8 KiB, cut on a whole character.
    const fields = Object.fromEntries(Array.from({ length: 400 }, (_, i) => [`unknownField${i}é`, 1]));
    const long = await tenant.api('POST', '/users', fields);
    expect(Buffer.byteLength(long.body)).toBeGreaterThan(8192);
    const longId = String(long.headers['x-request-id']);
    const [row] = await waitFor('the long failure', async () => {
      const rows = await logged(longId);
      return rows.length ? rows : null;
    }).then((rows) => rows!);
    expect(Buffer.byteLength(row!.error_body)).toBeLessThanOrEqual(8192);
    expect(long.body.startsWith(row!.error_body)).toBe(true);
  });

  it("never shows another organization's or the other environment's failures", async () => {
    const tenant = await t.newTenant('Mine Co');
    const other = await t.newTenant('Theirs Co');
    const mine = await badRequest(tenant);
    const theirs = await badRequest(other);
    const live = await badRequest(tenant, 'live');
    const viewer = await viewerOf(tenant);
    const page = await viewer.get('/portal/request-log');
    expect(page.body).toContain(mine);
    expect(page.body).not.toContain(theirs);
    expect(page.body).not.toContain(live);
    expect((await viewer.get(`/portal/request-log?requestId=${theirs}`)).body).toContain('No failed request matches');
    // Switched to live, the live failure shows and the test one does not.
    await viewer.post('/portal/environment', { _csrf: viewer.csrf(), environment: 'live' });
    const livePage = await viewer.get('/portal/request-log');
    expect(livePage.body).toContain(live);
    expect(livePage.body).not.toContain(mine);
  });

  it('is purged after 7 days by the daily purge', async () => {
    const tenant = await t.newTenant('Purge Log Co');
    const old = await badRequest(tenant);
    const recent = await badRequest(tenant);
    await t.ctx.pool.query(
      `UPDATE failed_api_requests SET created_at = now() - interval '7 days 1 minute' WHERE request_id = $1`,
      [old],
    );
    await purgeExpiredTask.handler(t.ctx)({}, {} as never);
    expect(await logged(old)).toEqual([]);
    expect(await logged(recent)).toHaveLength(1);
  });
});

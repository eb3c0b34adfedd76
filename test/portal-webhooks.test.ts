import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Environment } from '../src/context.js';
import { createTestApp, type TestApp, type TestTenant } from './harness.js';
import { followSecret, memberSession, type PortalClient, postPairs, setProofAge, switchTo } from './portal-helpers.js';

/*
 * The webhook endpoints page (PORTAL-13): the session's organization and environment only, through the webhooks
 * service of the integrator API (its checks, its secret overlap); what it did is read back through the API.
 */

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' });
});
afterAll(() => t.close());

const URL_A = 'https://hooks.example.invalid/a';
const URL_B = 'https://hooks.example.invalid/b';
const SECRET = /whsec_[A-Za-z0-9+/=_-]{20,}/;

/** Creates an endpoint through the portal form. */
async function create(c: PortalClient, url: string, eventTypes: string[]) {
  await c.get('/portal/webhooks');
  const res = await followSecret(
    c,
    await postPairs(t, c, '/portal/webhooks', [
      ['url', url],
      ...eventTypes.map((e) => ['eventTypes', e] as [string, string]),
    ]),
  );
  const id = /href="\/portal\/webhooks\/(we_[A-Za-z0-9]+|[a-z]+_[A-Za-z0-9]+)"/.exec(res.body)?.[1] ?? '';
  return { res, id, secret: SECRET.exec(res.body)?.[0] ?? '' };
}

/** POSTs one of an endpoint's actions from its page. */
async function act(c: PortalClient, id: string, action: string, pairs: Array<[string, string]> = []) {
  await c.get('/portal/webhooks');
  return postPairs(t, c, `/portal/webhooks/${id}${action ? `/${action}` : ''}`, pairs);
}

/** The endpoint as the integrator API shows it. */
async function viaApi(tenant: TestTenant, id: string, env: Environment = 'test') {
  return tenant.api('GET', `/webhook-endpoints/${id}`, undefined, { env });
}

describe('webhook endpoints page', () => {
  it('lets a developer create an endpoint, its secret shown once, with field errors next to the fields', async () => {
    const tenant = await t.newTenant('Hooks Co');
    const { client: c } = await memberSession(t, tenant.organizationId, 'developer');
    const none = await create(c, URL_A, []);
    expect(none.res.statusCode).toBe(400);
    expect(none.res.body).toContain('aria-describedby="event-types-error"');
    expect(none.res.body).toContain('Choose at least one event type.');
    const plain = await create(c, 'http://hooks.example.invalid/a', ['filing.status_changed']);
    expect(plain.res.statusCode).toBe(400);
    expect(plain.res.body).toContain('aria-describedby="endpoint-url-error"');
    expect(plain.res.body).toContain('id="endpoint-url-error">must use https');
    expect(plain.res.body).toContain('value="http://hooks.example.invalid/a"');
    const unknown = await create(c, URL_A, ['order.exploded']);
    expect(unknown.res.statusCode).toBe(400);
    expect(unknown.res.body).toContain('Choose only event types from the list, each once.');

    const made = await create(c, URL_A, ['filing.status_changed', 'document.uploaded']);
    expect(made.res.statusCode).toBe(200);
    expect(made.secret).not.toBe('');
    const api = await viaApi(tenant, made.id);
    expect(api.statusCode).toBe(200);
    expect(api.json()).toMatchObject({ url: URL_A, eventTypes: ['filing.status_changed', 'document.uploaded'] });
    const list = await c.get('/portal/webhooks');
    expect(list.body).toContain(URL_A);
    expect(list.body).not.toContain(made.secret);
    expect((await c.get(`/portal/webhooks/${made.id}`)).body).not.toMatch(SECRET);
  });

  it('edits, disables, re-enables an auto-disabled endpoint, rolls its secret with the overlap and sends a test event', async () => {
    const tenant = await t.newTenant('Edit Co');
    const { client: c } = await memberSession(t, tenant.organizationId, 'admin');
    const { id } = await create(c, URL_A, ['filing.status_changed']);

    const bad = await act(c, id, '', [
      ['url', 'ftp://x'],
      ['eventTypes', 'document.uploaded'],
    ]);
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('id="endpoint-url-error"');
    expect((await viaApi(tenant, id)).json().url).toBe(URL_A);
    const saved = await act(c, id, '', [
      ['url', URL_B],
      ['eventTypes', 'document.uploaded'],
      ['eventTypes', 'compliance.deadline_missed'],
    ]);
    expect(saved.statusCode).toBe(303);
    expect((await viaApi(tenant, id)).json()).toMatchObject({
      url: URL_B,
      eventTypes: ['document.uploaded', 'compliance.deadline_missed'],
    });

    expect((await act(c, id, 'disable')).statusCode).toBe(303);
    expect((await viaApi(tenant, id)).json().disabled).toBe(true);
    const testWhileDisabled = await act(c, id, 'test');
    expect(testWhileDisabled.statusCode).toBe(303);
    expect((await c.get(`/portal/webhooks/${id}`)).body).toContain('enable it before sending a test event');

    // Disabled by the service after failing for days: re-enabling clears the reason and the failure clock.
    await t.ctx.pool.query(
      "UPDATE webhook_endpoints SET disabled = true, disabled_reason = 'Failing for 72 hours', failing_since = now() - interval '3 days' WHERE id = $1",
      [id],
    );
    const page = await c.get(`/portal/webhooks/${id}`);
    expect(page.body).toContain('Disabled: Failing for 72 hours');
    expect((await act(c, id, 'enable')).statusCode).toBe(303);
    expect((await viaApi(tenant, id)).json()).toMatchObject({
      disabled: false,
      disabledReason: null,
      failingSince: null,
    });

    const rolled = await followSecret(c, await act(c, id, 'roll-secret'));
    expect(rolled.statusCode).toBe(200);
    expect(rolled.body).toMatch(SECRET);
    expect(rolled.body).toContain('The previous secret keeps signing beside it until');
    const grace = Date.parse((await viaApi(tenant, id)).json().previousSecretExpiresAt) - Date.now();
    expect(grace / 3_600_000).toBeGreaterThan(23.9);

    const sent = await act(c, id, 'test');
    expect(sent.statusCode).toBe(303);
    const deliveries = await t.ctx.pool.query(
      "SELECT count(*)::int AS n FROM webhook_deliveries d JOIN events e ON e.id = d.event_id WHERE d.endpoint_id = $1 AND e.type = 'webhook.test'",
      [id],
    );
    expect(deliveries.rows[0].n).toBe(1);
  });

  it('deletes an endpoint once the box is ticked, as DELETE /webhook-endpoints/{id} does, and audits it', async () => {
    const tenant = await t.newTenant('Delete Co');
    const { client: c } = await memberSession(t, tenant.organizationId, 'developer');
    const { id } = await create(c, URL_A, ['filing.status_changed']);
    const unticked = await act(c, id, 'delete');
    expect(unticked.statusCode).toBe(303);
    expect(unticked.headers.location).toBe(`/portal/webhooks/${id}`);
    expect((await viaApi(tenant, id)).statusCode).toBe(200);

    const deleted = await act(c, id, 'delete', [['confirm', 'yes']]);
    expect(deleted.statusCode).toBe(303);
    expect(deleted.headers.location).toBe('/portal/webhooks');
    expect((await viaApi(tenant, id)).statusCode).toBe(404);
    const audit = await t.ctx.pool.query(
      "SELECT count(*)::int AS n FROM audit_log WHERE organization_id = $1 AND action = 'webhook_endpoint.deleted'",
      [tenant.organizationId],
    );
    expect(audit.rows[0].n).toBe(1);
  });

  it('shows every role the list and the endpoint without secrets, and refuses a viewer every write with 403', async () => {
    const tenant = await t.newTenant('Viewer Hooks Co');
    const { client: owner } = await memberSession(t, tenant.organizationId, 'owner');
    const { id } = await create(owner, URL_A, ['filing.status_changed']);
    for (const role of ['viewer', 'developer', 'admin', 'owner'] as const) {
      const { client } = await memberSession(t, tenant.organizationId, role);
      expect((await client.get('/portal/')).body, role).toContain('href="/portal/webhooks"');
      const list = await client.get('/portal/webhooks');
      expect(list.statusCode).toBe(200);
      expect(list.body).toContain(URL_A);
      expect(list.body.includes('action="/portal/webhooks"'), role).toBe(role !== 'viewer');
      const page = await client.get(`/portal/webhooks/${id}`);
      expect(page.statusCode).toBe(200);
      expect(page.body).not.toMatch(SECRET);
      expect(page.body.includes('/roll-secret'), role).toBe(role !== 'viewer');
    }
    const { client: v, memberId } = await memberSession(t, tenant.organizationId, 'viewer');
    for (const env of ['test', 'live'] as const) {
      await switchTo(v, env);
      await setProofAge(t, memberId, 0);
      expect(
        (
          await postPairs(t, v, '/portal/webhooks', [
            ['url', URL_B],
            ['eventTypes', 'document.uploaded'],
          ])
        ).statusCode,
      ).toBe(403);
      for (const action of ['', 'disable', 'enable', 'roll-secret', 'test']) {
        const res = await act(v, id, action, [
          ['url', URL_B],
          ['eventTypes', 'document.uploaded'],
        ]);
        expect(res.statusCode, action).toBe(403);
        expect(res.body).not.toMatch(SECRET);
      }
    }
    const api = (await viaApi(tenant, id)).json();
    expect(api).toMatchObject({ url: URL_A, disabled: false, previousSecretExpiresAt: null });
    expect((await tenant.api('GET', '/webhook-endpoints')).json().data).toHaveLength(1);
  });

  it("refuses another organization's endpoint and the other environment's with 404", async () => {
    const mine = await t.newTenant('Mine Hooks Co');
    const theirs = await t.newTenant('Theirs Hooks Co');
    const theirsTest = (
      await theirs.api('POST', '/webhook-endpoints', { url: URL_A, eventTypes: ['filing.status_changed'] })
    ).json().id;
    const mineLive = (
      await mine.api(
        'POST',
        '/webhook-endpoints',
        { url: URL_A, eventTypes: ['filing.status_changed'] },
        { env: 'live' },
      )
    ).json().id;
    const { client: c } = await memberSession(t, mine.organizationId, 'owner');
    for (const id of [theirsTest, mineLive]) {
      expect((await c.get(`/portal/webhooks/${id}`)).statusCode).toBe(404);
      for (const action of ['', 'disable', 'enable', 'roll-secret', 'test']) {
        const res = await act(c, id, action, [
          ['url', URL_B],
          ['eventTypes', 'document.uploaded'],
        ]);
        expect(res.statusCode, `${id} ${action}`).toBe(404);
        expect(res.body).not.toMatch(SECRET);
      }
    }
    expect((await theirs.api('GET', `/webhook-endpoints/${theirsTest}`)).json()).toMatchObject({
      url: URL_A,
      disabled: false,
    });
    expect((await viaApi(mine, mineLive, 'live')).json()).toMatchObject({ url: URL_A, disabled: false });
  });

  it('in test never touches live; in live, asks for the step-up first', async () => {
    const tenant = await t.newTenant('Env Hooks Co');
    const { client: c, memberId } = await memberSession(t, tenant.organizationId, 'owner');
    expect((await create(c, URL_A, ['filing.status_changed'])).res.statusCode).toBe(200);
    expect((await tenant.api('GET', '/webhook-endpoints', undefined, { env: 'live' })).json().data).toHaveLength(0);
    await switchTo(c, 'live');
    expect((await c.get('/portal/webhooks')).body).not.toContain(URL_A);
    await setProofAge(t, memberId, 16);
    const asked = await create(c, URL_B, ['filing.status_changed']);
    expect(asked.res.statusCode).toBe(303);
    expect(asked.res.headers.location).toBe('/portal/step-up?next=%2Fportal%2Fwebhooks');
    await setProofAge(t, memberId, 1);
    const made = await create(c, URL_B, ['filing.status_changed']);
    expect(made.res.statusCode).toBe(200);
    expect((await viaApi(tenant, made.id, 'live')).json().url).toBe(URL_B);
  });
});

describe('test events from the portal', () => {
  let limited: TestApp;
  beforeAll(async () => {
    limited = await createTestApp({ RATE_LIMIT_WEBHOOK_TESTS: '1' });
  });
  afterAll(() => limited.close());

  it("count against the API's per-tenant allowance of test events", async () => {
    const tenant = await limited.newTenant('Limited Co');
    const id = (
      await tenant.api('POST', '/webhook-endpoints', { url: URL_A, eventTypes: ['document.uploaded'] })
    ).json().id;
    const { client: c } = await memberSession(limited, tenant.organizationId, 'developer');
    await c.get(`/portal/webhooks/${id}`);
    expect((await c.post(`/portal/webhooks/${id}/test`, { _csrf: c.csrf() })).statusCode).toBe(303);
    const refused = await c.post(`/portal/webhooks/${id}/test`, { _csrf: c.csrf() });
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBeDefined();
    expect((await tenant.api('POST', `/webhook-endpoints/${id}/test`)).statusCode).toBe(429);
  });
});

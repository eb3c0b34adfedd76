import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTransaction } from '../src/lib/db.js';
import { newId } from '../src/lib/ids.js';
import { emitEvent } from '../src/modules/events/events.service.js';
import { HOST_NOT_PUBLIC_MESSAGE, NON_PUBLIC_MESSAGE } from '../src/modules/webhooks/url-guard.js';
import { sendWebhook } from '../src/modules/webhooks/webhook-client.js';
import { type BackgroundWorker, startWorker } from '../src/worker.js';
import { createTestApp, type TestApp, type TestTenant } from './harness.js';
import { startReceiver, waitFor, type Receiver } from './webhook-receiver.js';

// WH-13: https only and public addresses only: an address in the URL at creation/update, every address a host name
// resolves to before every delivery attempt (a host name is never looked up when saved).
let t: TestApp;
let strict: TestApp;
let worker: BackgroundWorker;
let r: Receiver;
beforeAll(async () => {
  [t, strict] = await Promise.all([
    createTestApp(),
    createTestApp({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false', WEBHOOK_RETRY_SCHEDULE: '1' }),
  ]);
  worker = await startWorker(strict.ctx);
  r = await startReceiver();
});
afterAll(async () => {
  await worker?.stop();
  await r?.close();
  await Promise.all([t?.close(), strict?.close()]);
});

const body = (overrides: Record<string, unknown> = {}) => ({
  url: 'https://93.184.215.14/hooks',
  eventTypes: ['filing.status_changed'],
  ...overrides,
});

describe('webhook URL rules with WEBHOOK_ALLOW_PRIVATE_NETWORKS=false', () => {
  const refused = [
    ['plain http', 'http://93.184.215.14/hooks', 'must use https'],
    ['IPv4 loopback', 'https://127.0.0.1/hooks', NON_PUBLIC_MESSAGE],
    ['IPv6 loopback', 'https://[::1]/hooks', NON_PUBLIC_MESSAGE],
    ['IPv4-mapped IPv6 loopback', 'https://[::ffff:127.0.0.1]/hooks', NON_PUBLIC_MESSAGE],
    ['private 10/8', 'https://10.1.2.3/hooks', NON_PUBLIC_MESSAGE],
    ['private 192.168/16', 'https://192.168.0.10/hooks', NON_PUBLIC_MESSAGE],
    ['link-local (cloud metadata)', 'https://169.254.169.254/latest', NON_PUBLIC_MESSAGE],
    ['carrier-grade NAT', 'https://100.64.0.1/hooks', NON_PUBLIC_MESSAGE],
    ['unspecified', 'https://0.0.0.0/hooks', NON_PUBLIC_MESSAGE],
    ['multicast', 'https://224.0.0.1/hooks', NON_PUBLIC_MESSAGE],
    ['IPv6 unique-local', 'https://[fd00::1]/hooks', NON_PUBLIC_MESSAGE],
    ['IPv6 link-local', 'https://[fe80::1]/hooks', NON_PUBLIC_MESSAGE],
    ['credentials in the URL', 'https://user:pw@93.184.215.14/hooks', 'user name'],
  ] as const;

  for (const [what, url, mention] of refused) {
    it(`refuses ${what}`, async () => {
      const tenant = await strict.newTenant();
      const res = await tenant.api('POST', '/webhook-endpoints', body({ url }));
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().errors).toEqual([{ field: 'url', message: expect.stringContaining(mention) }]);
    });
  }

  it('names the field and the kind of address', async () => {
    const tenant = await strict.newTenant();
    const res = await tenant.api('POST', '/webhook-endpoints', body({ url: 'https://10.1.2.3/hooks' }));
    expect(res.statusCode).toBe(400);
    expect(res.json().errors).toEqual([
      { field: 'url', message: 'is a private or loopback address; webhook URLs must use public addresses' },
    ]);
  });

  it('accepts an https URL on a public address, and checks a changed URL again', async () => {
    const tenant = await strict.newTenant();
    const res = await tenant.api('POST', '/webhook-endpoints', body({ url: 'https://93.184.215.14/hooks' }));
    expect(res.statusCode, res.body).toBe(201);
    const patch = await tenant.api('PATCH', `/webhook-endpoints/${res.json().id}`, { url: 'https://[::1]/hooks' });
    expect(patch.statusCode).toBe(400);
    expect(patch.json().errors[0].field).toBe('url');
  });

  it('answers a host name of a private address as one that does not resolve: accepted at create and update, then refused with one error at every attempt', async () => {
    // WH-13: `localhost` resolves to loopback; `.invalid` never resolves (RFC 6761), as a real integrator's host may
    // not be in DNS yet. Telling them apart would tell a prober which internal names exist.
    const tenant = await strict.newTenant();
    const urls = [`https://localhost:${r.port}/hooks`, `https://hooks.integrator.invalid:${r.port}/hooks`];
    const comparable = (res: { statusCode: number; json(): any }) => {
      const { id, url, secret, createdAt, updatedAt, ...rest } = res.json();
      return { status: res.statusCode, rest };
    };
    const created = await Promise.all(
      urls.map((url) => tenant.api('POST', '/webhook-endpoints', body({ url, eventTypes: ['document.uploaded'] }))),
    );
    expect(created[0]!.statusCode, created[0]!.body).toBe(201);
    expect(comparable(created[1]!)).toEqual(comparable(created[0]!));
    const moved = [];
    for (const url of urls) {
      const other = await tenant.api('POST', '/webhook-endpoints', body({ eventTypes: ['filing.status_changed'] }));
      moved.push(await tenant.api('PATCH', `/webhook-endpoints/${other.json().id}`, { url }));
    }
    expect(moved[0]!.statusCode, moved[0]!.body).toBe(200);
    expect(comparable(moved[1]!)).toEqual(comparable(moved[0]!));

    const event = await withTransaction(strict.ctx.pool, (tx) =>
      emitEvent(tx, { organizationId: tenant.organizationId, environment: 'test' }, 'document.uploaded', {}),
    );
    const deliveries = await waitFor('both deliveries to fail', async () => {
      const list = (await tenant.api('GET', `/webhook-deliveries?eventId=${event.id}`)).json().data;
      if (list.length !== 2 || list.some((d: any) => d.status !== 'failed')) return null;
      return Promise.all<any>(
        list.map(async (d: any) => (await tenant.api('GET', `/webhook-deliveries/${d.id}`)).json()),
      );
    });
    const seen = deliveries!.map((d: any) => ({
      failureReason: d.failureReason,
      attempts: d.attempts.map((a: any) => ({
        statusCode: a.statusCode,
        error: a.error,
        responseBody: a.responseBody,
      })),
    }));
    expect(seen[1]).toEqual(seen[0]);
    expect(seen[0].attempts[0]).toEqual({
      statusCode: null,
      error: `Refused before connecting: url ${HOST_NOT_PUBLIC_MESSAGE}`,
      responseBody: null,
    });
    expect(r.requests.length).toBe(0);
  });

  it('allows plain http and local addresses when private networks are allowed', async () => {
    const tenant = await t.newTenant();
    for (const url of ['http://localhost:8080/hooks', 'http://127.0.0.1:9/hooks', 'http://[::1]:9/x']) {
      expect((await tenant.api('POST', '/webhook-endpoints', body({ url }))).statusCode).toBe(201);
    }
  });
});

describe('the address check at delivery time', () => {
  /** An endpoint row whose URL passed the checks when saved but whose host now resolves to loopback (DNS rebinding). */
  async function endpointNowPointingAt(tenant: TestTenant, url: string): Promise<string> {
    const id = newId('webhookEndpoint');
    await strict.ctx.pool.query(
      `INSERT INTO webhook_endpoints (id, organization_id, environment, url, event_types, secret) VALUES ($1, $2, 'test', $3, '{document.uploaded}', 'whsec_x')`,
      [id, tenant.organizationId, url],
    );
    return id;
  }

  it('refuses to connect when the host resolves to a private address by the time of the attempt', async () => {
    const tenant = await strict.newTenant();
    const endpointId = await endpointNowPointingAt(tenant, `https://localhost:${r.port}/hooks`);
    const event = await withTransaction(strict.ctx.pool, (tx) =>
      emitEvent(tx, { organizationId: tenant.organizationId, environment: 'test' }, 'document.uploaded', {}),
    );
    const delivery = await waitFor('the delivery to fail', async () => {
      const [d] = (await tenant.api('GET', `/webhook-deliveries?eventId=${event.id}`)).json().data;
      return d?.status === 'failed' ? (await tenant.api('GET', `/webhook-deliveries/${d.id}`)).json() : null;
    });
    expect(delivery).toMatchObject({ endpointId, attemptCount: 2 });
    for (const a of delivery.attempts)
      expect(a).toMatchObject({ statusCode: null, error: `Refused before connecting: url ${HOST_NOT_PUBLIC_MESSAGE}` });
    expect(r.requests.length).toBe(0);
  });

  it('connects to the vetted address, whatever the host resolves to at connect time', async () => {
    // `.invalid` never resolves: the request can only arrive if the connection used the pinned address.
    const res = await sendWebhook({
      url: `http://rebound.invalid:${r.port}/pinned`,
      body: '{}',
      headers: { 'content-type': 'application/json' },
      timeoutMs: 5000,
      pinned: { address: '127.0.0.1', family: 4 },
    });
    expect(res).toMatchObject({ statusCode: 200, error: null });
    const got = r.requests.find((q) => q.path === '/pinned');
    expect(got?.headers.host).toBe(`rebound.invalid:${r.port}`);
  });
});

describe('response bodies of private targets', () => {
  it('are not kept: a loopback receiver answering with a body is recorded with its status and an empty body', async () => {
    const secret = `internal-${Date.now()}`;
    r.respond = () => ({ status: 200, body: secret });
    try {
      for (const url of [`http://127.0.0.1:${r.port}/a`, `http://localhost:${r.port}/b`]) {
        const res = await sendWebhook({
          url,
          body: '{}',
          headers: { 'content-type': 'application/json' },
          timeoutMs: 5000,
          pinned: null,
        });
        expect(res).toMatchObject({ statusCode: 200, responseBody: '', error: null });
      }
      const pinned = await sendWebhook({
        url: `http://rebound.invalid:${r.port}/c`,
        body: '{}',
        headers: {},
        timeoutMs: 5000,
        pinned: { address: '127.0.0.1', family: 4 },
      });
      expect(pinned).toMatchObject({ statusCode: 200, responseBody: '' });
    } finally {
      r.respond = () => ({ status: 200, body: 'ok' });
    }
  });

  it('never reach the delivery attempts a tenant can read', async () => {
    const tenant = await t.newTenant();
    r.respond = () => ({ status: 500, body: 'root:x:0:0:root:/root:/bin/bash' });
    try {
      const created = await tenant.api('POST', '/webhook-endpoints', {
        url: `http://127.0.0.1:${r.port}/private`,
        eventTypes: ['document.uploaded'],
      });
      expect(created.statusCode, created.body).toBe(201);
      const test = await tenant.api('POST', `/webhook-endpoints/${created.json().id}/test`);
      expect(test.statusCode, test.body).toBe(202);
      const w = await startWorker(t.ctx);
      try {
        const delivery = await waitFor('the test delivery', async () => {
          const d = (await tenant.api('GET', `/webhook-deliveries/${test.json().id}`)).json();
          return d.attemptCount >= 1 ? d : null;
        });
        expect(delivery.attempts[0]).toMatchObject({ statusCode: 500, responseBody: null });
      } finally {
        await w.stop();
      }
      const stored = await t.ctx.pool.query(
        "SELECT count(*)::int AS n FROM webhook_attempts WHERE response_body LIKE '%root:x%'",
      );
      expect(stored.rows[0].n).toBe(0);
    } finally {
      r.respond = () => ({ status: 200, body: 'ok' });
    }
  });

  it('from a public address are kept, up to 4 KB', async () => {
    r.respond = () => ({ status: 200, body: 'y'.repeat(10_000) });
    try {
      const res = await sendWebhook({
        url: `http://127.0.0.1:${r.port}/d`,
        body: '{}',
        headers: {},
        timeoutMs: 5000,
        pinned: null,
        keepBodyFrom: () => true,
      });
      expect(res.responseBody).toBe('y'.repeat(4096));
    } finally {
      r.respond = () => ({ status: 200, body: 'ok' });
    }
  });
});

describe('the private-network default (WEBHOOK_ALLOW_PRIVATE_NETWORKS unset)', () => {
  // Production runs without the variable: private and loopback receivers must be refused unless an operator opts in.
  let unset: TestApp;
  beforeAll(async () => {
    unset = await createTestApp({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: undefined });
  });
  afterAll(() => unset?.close());

  it('is off: endpoints at loopback, at 10/8 and on plain http are refused with 400', async () => {
    expect(unset.ctx.config.webhookAllowPrivateNetworks).toBe(false);
    const tenant = await unset.newTenant('Default Platform');
    const cases = [
      ['https://127.0.0.1/hooks', NON_PUBLIC_MESSAGE],
      ['http://127.0.0.1:8080/hooks', 'must use https'],
      ['https://10.1.2.3/hooks', NON_PUBLIC_MESSAGE],
    ] as const;
    for (const [url, mention] of cases) {
      const res = await tenant.api('POST', '/webhook-endpoints', body({ url }));
      expect(res.statusCode, `${url}: ${res.body}`).toBe(400);
      expect(res.json().errors).toEqual([{ field: 'url', message: expect.stringContaining(mention) }]);
    }
    expect((await tenant.api('GET', '/webhook-endpoints')).json().data).toEqual([]);
    // Moving an existing public endpoint to a private address is refused the same way.
    const created = await tenant.api('POST', '/webhook-endpoints', body());
    expect(created.statusCode, created.body).toBe(201);
    const moved = await tenant.api('PATCH', `/webhook-endpoints/${created.json().id}`, {
      url: 'https://10.1.2.3/hooks',
    });
    expect(moved.statusCode).toBe(400);
    expect(moved.json().errors).toEqual([{ field: 'url', message: expect.stringContaining(NON_PUBLIC_MESSAGE) }]);
    expect((await tenant.api('GET', `/webhook-endpoints/${created.json().id}`)).json().url).toBe(body().url);
  });
});

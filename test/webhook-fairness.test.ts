import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTransaction } from '../src/lib/db.js';
import { emitEvents } from '../src/modules/events/events.service.js';
import { DispatchQueues } from '../src/modules/webhooks/dispatch-queues.js';
import { claimDueDeliveries, releaseLeases, type ClaimedDelivery } from '../src/modules/webhooks/dispatch.repo.js';
import { startWebhookDispatcher, type WebhookDispatcher } from '../src/modules/webhooks/dispatcher.js';
import { createTestApp, type TestApp, type TestTenant } from './harness.js';
import { waitFor } from './webhook-receiver.js';

// WH-17: no organization holds more than WEBHOOK_ORGANIZATION_CONCURRENCY attempts of a process, and organizations
// take turns, both when rows are claimed and when claimed rows are started.

/** A receiver on 127.0.0.1 whose `/hang/{label}/…` paths accept and never answer and `/ok/{label}` answers 200. */
interface LabelReceiver {
  url: string;
  /** Requests open now, requests ever open at once, and requests ended, per label. */
  open: Map<string, number>;
  maxOpen: Map<string, number>;
  ended: Map<string, number>;
  /** When each label's first answered request arrived (performance.now()). */
  answeredAt: Map<string, number>;
  close(): Promise<void>;
}

async function startLabelReceiver(): Promise<LabelReceiver> {
  const r = { open: new Map(), maxOpen: new Map(), ended: new Map(), answeredAt: new Map() } as LabelReceiver;
  const bump = (map: Map<string, number>, label: string, n: number) => map.set(label, (map.get(label) ?? 0) + n);
  const server = http.createServer((req, res) => {
    const [, kind, label = ''] = (req.url ?? '').split('/');
    bump(r.open, label, 1);
    r.maxOpen.set(label, Math.max(r.maxOpen.get(label) ?? 0, r.open.get(label)!));
    req.socket.once('close', () => {
      bump(r.open, label, -1);
      bump(r.ended, label, 1);
    });
    req.resume();
    req.on('end', () => {
      if (kind === 'hang') return;
      if (!r.answeredAt.has(label)) r.answeredAt.set(label, performance.now());
      res.writeHead(200).end('ok');
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  r.close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return r;
}

async function endpoints(tenant: TestTenant, urls: string[]): Promise<string[]> {
  const ids: string[] = [];
  for (const url of urls) {
    const res = await tenant.api('POST', '/webhook-endpoints', { url, eventTypes: ['document.uploaded'] });
    expect(res.statusCode, res.body).toBe(201);
    ids.push(res.json().id);
  }
  return ids;
}

/** `n` events of the tenant, each delivered to every endpoint it has. */
function emit(t: TestApp, tenant: TestTenant, n: number) {
  return withTransaction(t.ctx.pool, (tx) =>
    emitEvents(
      tx,
      { organizationId: tenant.organizationId, environment: 'test' },
      Array.from({ length: n }, () => ({ type: 'document.uploaded' as const, data: {} })),
    ),
  );
}

describe('a dispatcher beside an organization with many hanging endpoints', () => {
  // 6 hanging endpoints x 2 per endpoint would take every one of the 8 slots without the organization's cap of 3;
  // the timeout is far longer than the test, so an event that waited for a hanging attempt to end would time it out.
  let t: TestApp;
  let receiver: LabelReceiver;
  let dispatcher: WebhookDispatcher;
  beforeAll(async () => {
    t = await createTestApp({
      WEBHOOK_CONCURRENCY: '8',
      WEBHOOK_ENDPOINT_CONCURRENCY: '2',
      WEBHOOK_ORGANIZATION_CONCURRENCY: '3',
      WEBHOOK_TIMEOUT_MS: '60000',
    });
    receiver = await startLabelReceiver();
    dispatcher = await startWebhookDispatcher(t.ctx);
  });
  afterAll(async () => {
    await dispatcher?.stop(0);
    await receiver?.close();
    await t?.close();
  });

  it('holds that organization to WEBHOOK_ORGANIZATION_CONCURRENCY attempts and sends another organization its event while they hang', async () => {
    const hanging = await t.newTenant('Hanging Org');
    await endpoints(
      hanging,
      Array.from({ length: 6 }, (_, i) => `${receiver.url}/hang/A/${i}`),
    );
    await emit(t, hanging, 4);
    // Everything the dispatcher may hold of it: 3 attempts under way and 3 claimed ahead of a free slot.
    await waitFor('the hanging organization to fill its share', async () => {
      const { rows } = await t.ctx.pool.query(
        `SELECT count(*)::int AS n FROM webhook_deliveries WHERE organization_id = $1 AND leased_by IS NOT NULL`,
        [hanging.organizationId],
      );
      return rows[0].n >= 6 && (receiver.open.get('A') ?? 0) >= 3;
    });
    await new Promise((r) => setTimeout(r, 500));
    expect(receiver.maxOpen.get('A')).toBe(3);

    const other = await t.newTenant('Other Org');
    await endpoints(other, [`${receiver.url}/ok/B`]);
    await emit(t, other, 1);
    await waitFor("the other organization's event", () => receiver.answeredAt.has('B'));
    // It went out beside the hanging attempts, not after one of them timed out and freed a slot.
    expect(receiver.ended.get('A') ?? 0).toBe(0);
    expect(receiver.open.get('A')).toBe(3);
    expect(receiver.maxOpen.get('A')).toBe(3);
  });
});

describe('claiming due deliveries', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t?.close());

  it('takes organizations in turn, not endpoints: four endpoints of one organization get the turns of one', async () => {
    const many = await t.newTenant('Many Endpoints');
    const one = await t.newTenant('One Endpoint');
    const manyEndpoints = await endpoints(
      many,
      [1, 2, 3, 4].map((i) => `https://93.184.215.14/${i}`),
    );
    await emit(t, many, 3);
    // Due later than all of the other organization's rows: taking endpoints in turn would give it no row at all.
    await endpoints(one, ['https://93.184.215.14/one']);
    await emit(t, one, 3);
    const claim = async (a: { limit: number; organizationCap?: number; room?: Record<string, number> }) => {
      const rows = await claimDueDeliveries(t.ctx.pool, {
        owner: 'test-claims',
        limit: a.limit,
        endpointCap: 10,
        organizationCap: a.organizationCap ?? 10,
        room: { byEndpoint: {}, byOrganization: a.room ?? {} },
        leaseMs: 60_000,
      });
      await releaseLeases(
        t.ctx.pool,
        'test-claims',
        rows.map((r) => r.id),
      );
      const of = (tenant: TestTenant) => rows.filter((r) => r.organization_id === tenant.organizationId);
      return { many: of(many), one: of(one) };
    };

    const turns = await claim({ limit: 4 });
    expect([turns.many.length, turns.one.length]).toEqual([2, 2]);
    // Within the organization its endpoints take turns.
    expect(new Set(turns.many.map((r) => r.endpoint_id)).size).toBe(2);
    expect(manyEndpoints).toEqual(expect.arrayContaining(turns.many.map((r) => r.endpoint_id)));

    const capped = await claim({ limit: 100, organizationCap: 2 });
    expect([capped.many.length, capped.one.length]).toEqual([2, 2]);

    const roomLeft = await claim({ limit: 100, room: { [many.organizationId]: 1 } });
    expect([roomLeft.many.length, roomLeft.one.length]).toEqual([1, 3]);
  });
});

describe('starting claimed rows', () => {
  const row = (organization: string, endpoint: string, n: number) =>
    ({ id: `${endpoint}-${n}`, organization_id: organization, endpoint_id: endpoint }) as ClaimedDelivery;

  it('alternates organizations and holds each to its cap, whatever its number of endpoints', () => {
    const queues = new DispatchQueues({ total: 8, organization: 3, endpoint: 2 });
    for (const e of ['a1', 'a2', 'a3', 'a4', 'a5', 'a6']) queues.add([row('A', e, 1), row('A', e, 2)]);
    queues.add([row('B', 'b1', 1), row('B', 'b1', 2), row('B', 'b1', 3)]);
    const started: ClaimedDelivery[] = [];
    for (let next = queues.next(); next; next = queues.next()) started.push(next);
    expect(started.map((r) => r.organization_id)).toEqual(['A', 'B', 'A', 'B', 'A']);
    // A's endpoints take turns too.
    expect(started.filter((r) => r.organization_id === 'A').map((r) => r.endpoint_id)).toEqual(['a1', 'a2', 'a3']);
    expect(queues.claimRoom().byOrganization).toEqual({ A: 0, B: 3 });

    // A freed slot of A goes to A's next endpoint; B stays at its endpoint's cap.
    queues.done(started[0]!);
    expect(queues.next()).toMatchObject({ organization_id: 'A', endpoint_id: 'a4' });
    expect(queues.next()).toBeNull();
  });
});

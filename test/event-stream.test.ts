import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { AuthenticationError, streamEvents, type StreamedEvent, type StreamStatus } from '../sdk/src/index.js';
import type { Environment, Tenant } from '../src/context.js';
import { withTransaction } from '../src/lib/db.js';
import { emitEvent, type EventType } from '../src/modules/events/events.service.js';
import { API_KEY_CHANNEL } from '../src/modules/organizations/api-key-cache.js';
import { tenantOf } from './factories.js';
import { call, fleetEnv, startApi } from './fleet.js';
import { createTestApp, type TestApp } from './harness.js';
import { listening } from './sdk-helpers.js';
import { credit, formationBody, newUser } from './orders-fixtures.js';
import type { ServiceProcess } from './service-process.js';
import { waitFor } from './webhook-receiver.js';

/*
 * GET /events/stream: the tenant's events as Server-Sent Events, in commit order, resumable with Last-Event-ID.
 * Read through the SDK's stream reader (sdk/src/event-stream.ts) against the app listening on a real port.
 */

let t: TestApp;
let origin: string;
beforeAll(async () => {
  t = await createTestApp({ EVENT_STREAM_MAX_PER_KEY: '2', EVENT_STREAM_HEARTBEAT_SECONDS: '0.3' });
  origin = await listening(t);
});
afterAll(() => t.close());

const streamUrl = (env: Environment = 'test', base = origin) =>
  `${base}${env === 'live' ? '/v1' : '/test/v1'}/events/stream`;

/** Commits one event of `type` for the tenant in its own transaction; returns its id. */
async function emit(
  tenant: Tenant,
  type: EventType = 'filing.status_changed',
  data: Record<string, unknown> = { orderId: 'order_x', filingStatus: 'pending' },
) {
  return (await withTransaction(t.ctx.pool, (tx) => emitEvent(tx, tenant, type, data))).id;
}

/** An open stream read in the background; `stop()` ends it. */
function open(
  apiKey: string,
  options: { env?: Environment; types?: string[]; lastEventId?: string; origin?: string } = {},
) {
  const stop = new AbortController();
  const events: StreamedEvent[] = [];
  /** When each event arrived (performance.now(), ms). */
  const arrivals: number[] = [];
  const statuses: StreamStatus[] = [];
  /** When each connection ended (performance.now(), ms). */
  const drops: number[] = [];
  const reading = (async () => {
    for await (const e of streamEvents(
      { url: streamUrl(options.env, options.origin), headers: { 'x-api-key': apiKey }, fetch },
      {
        signal: stop.signal,
        types: options.types,
        lastEventId: options.lastEventId,
        reconnectDelayMs: 100,
        onStatus: (s) => {
          statuses.push(s);
          if (s.state === 'disconnected') drops.push(performance.now());
        },
      },
    )) {
      events.push(e);
      arrivals.push(performance.now());
    }
  })();
  return {
    events,
    arrivals,
    drops,
    statuses,
    ids: () => events.map((e) => e.id),
    connected: () => waitFor('the stream to connect', () => statuses.some((s) => s.state === 'connected')),
    async stop() {
      stop.abort();
      await reading;
    },
    reading,
  };
}

describe('GET /events/stream', () => {
  it('sends each committed event with its id, its type and the envelope GET /events/{id} returns, byte for byte the webhook body', async () => {
    const tenant = await t.newTenant();
    const stream = open(tenant.keys.test);
    await stream.connected();
    const first = await emit(tenantOf(tenant));
    const second = await emit(tenantOf(tenant), 'document.uploaded', {
      documentId: 'doc_x',
      documentType: 'articles_of_organization',
    });
    await waitFor('two events', () => stream.events.length >= 2);
    await stream.stop();
    expect(stream.ids()).toEqual([first, second]);
    for (const e of stream.events) {
      const stored = (await tenant.api('GET', `/events/${e.id}`)).json();
      expect(e.event).toEqual(stored);
      expect(e.rawBody).toBe(JSON.stringify(stored));
      expect(e.type).toBe(stored.type);
    }
  });

  it("sends only the events of the key's own organization and environment", async () => {
    const tenant = await t.newTenant();
    const other = await t.newTenant('Other Org');
    const test = open(tenant.keys.test);
    const live = open(tenant.keys.live, { env: 'live' });
    await Promise.all([test.connected(), live.connected()]);
    const foreign = [await emit(tenantOf(other)), await emit(tenantOf(other, 'live'))];
    const liveId = await emit(tenantOf(tenant, 'live'));
    const testId = await emit(tenantOf(tenant));
    await waitFor('the test event', () => test.events.length >= 1);
    await waitFor('the live event', () => live.events.length >= 1);
    // Committed after the others: had they leaked into these streams they would have come first.
    const last = [await emit(tenantOf(tenant, 'live')), await emit(tenantOf(tenant))];
    await waitFor('the last events', () => test.events.length >= 2 && live.events.length >= 2);
    await Promise.all([test.stop(), live.stop()]);
    expect(test.ids()).toEqual([testId, last[1]]);
    expect(live.ids()).toEqual([liveId, last[0]]);
    expect([...test.ids(), ...live.ids()]).not.toContain(foreign[0]);
  });

  it('narrows to the types asked for', async () => {
    const tenant = await t.newTenant();
    const stream = open(tenant.keys.test, { types: ['document.uploaded'] });
    await stream.connected();
    await emit(tenantOf(tenant), 'filing.status_changed');
    const doc = await emit(tenantOf(tenant), 'document.uploaded', { documentId: 'doc_y' });
    await waitFor('the document event', () => stream.events.length >= 1);
    await stream.stop();
    expect(stream.ids()).toEqual([doc]);
  });

  it('resumes right after Last-Event-ID: the events committed while disconnected come first, none twice', async () => {
    const tenant = await t.newTenant();
    const stream = open(tenant.keys.test);
    await stream.connected();
    const seen = await emit(tenantOf(tenant));
    await waitFor('the first event', () => stream.events.length >= 1);
    await stream.stop();
    const missed = [
      await emit(tenantOf(tenant)),
      await emit(tenantOf(tenant), 'document.uploaded', { documentId: 'doc_z' }),
    ];
    const resumed = open(tenant.keys.test, { lastEventId: seen });
    await waitFor('the two missed events', () => resumed.events.length >= 2);
    const after = await emit(tenantOf(tenant));
    await waitFor('the next live event', () => resumed.events.length >= 3);
    await resumed.stop();
    expect(resumed.ids()).toEqual([...missed, after]);
  });

  it('loses nothing when the connection drops before the first event: it resumes from where the first connection started (EVT-8)', async () => {
    const tenant = await t.newTenant();
    // A fetch whose connection can be cut, and whose next connection waits until `release` is called.
    let cut = new AbortController();
    let gate: Promise<void> = Promise.resolve();
    let release: () => void = () => {};
    const sentLastEventIds: Array<string | null> = [];
    const droppable: typeof fetch = async (input, init) => {
      await gate;
      cut = new AbortController();
      sentLastEventIds.push(new Headers(init?.headers).get('last-event-id'));
      return fetch(input, { ...init, signal: AbortSignal.any([init!.signal!, cut.signal]) });
    };
    const stop = new AbortController();
    const events: StreamedEvent[] = [];
    const statuses: StreamStatus[] = [];
    const reading = (async () => {
      for await (const e of streamEvents(
        { url: streamUrl(), headers: { 'x-api-key': tenant.keys.test }, fetch: droppable },
        {
          signal: stop.signal,
          reconnectDelayMs: 50,
          onStatus: (s) => statuses.push(s),
        },
      ))
        events.push(e);
    })();
    await waitFor('the stream to connect', () => statuses.some((s) => s.state === 'connected'));
    // Give the position message time to arrive, then drop the connection with nothing received yet.
    await new Promise((resolve) => setTimeout(resolve, 300));
    gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    cut.abort();
    await waitFor('the disconnection', () => statuses.some((s) => s.state === 'disconnected'));
    const missed = [
      await emit(tenantOf(tenant)),
      await emit(tenantOf(tenant), 'document.uploaded', { documentId: 'doc_gap' }),
    ];
    release();
    await waitFor('the events committed while disconnected', () => events.length >= 2);
    stop.abort();
    await reading;
    expect(events.map((e) => e.id)).toEqual(missed);
    expect(sentLastEventIds[0]).toBeNull();
    expect(sentLastEventIds[1]).toMatch(/^pos_\d+$/);
  });

  it('starts a stream without Last-Event-ID with a position message (not an event) that Last-Event-ID accepts; refuses a position not reached yet', async () => {
    const tenant = await t.newTenant();
    const stop = new AbortController();
    const res = await fetch(streamUrl(), { headers: { 'x-api-key': tenant.keys.test }, signal: stop.signal });
    const reader = res.body!.getReader();
    let text = '';
    await waitFor(
      'the position message',
      async () => {
        const { value } = await reader.read();
        text += new TextDecoder().decode(value);
        return /\n\n/.test(text.replace(/^: heartbeat\n\n/gm, ''));
      },
      5000,
    );
    stop.abort();
    const position = /^id: (pos_\d+)$/m.exec(text)?.[1];
    expect(position).toBeDefined();
    expect(text).toMatch(/^event: position$/m);
    const id = await emit(tenantOf(tenant));
    const resumed = open(tenant.keys.test, { lastEventId: position });
    await waitFor('the event committed after the position', () => resumed.events.length >= 1);
    await resumed.stop();
    expect(resumed.ids()).toEqual([id]);
    const ahead = await fetch(streamUrl(), {
      headers: { 'x-api-key': tenant.keys.test, 'last-event-id': 'pos_99999999999999999999' },
    });
    expect(ahead.status).toBe(404);
    expect((await ahead.json()).errors).toEqual([
      { field: 'headers.last-event-id', message: expect.stringContaining('pos_99999999999999999999') },
    ]);
  });

  it('keeps commit order: an event whose transaction commits last is sent first if it was written first, never skipped', async () => {
    const tenant = await t.newTenant();
    const stream = open(tenant.keys.test);
    await stream.connected();
    const slow = await t.ctx.pool.connect();
    let early: string;
    try {
      await slow.query('BEGIN');
      early = (await emitEvent(slow, tenantOf(tenant), 'filing.status_changed', { orderId: 'order_early' })).id;
      const later = await emit(tenantOf(tenant));
      expect(early < later).toBe(true);
      // `later` is committed and the stream wakes for it (notification, and every 0.3 s heartbeat), yet it must wait
      // while the older transaction that wrote `early` is open: sending it now would put the position past `early`.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect(stream.ids()).toEqual([]);
      await slow.query('COMMIT');
      await waitFor('both events', () => stream.events.length >= 2);
      await stream.stop();
      // A stream that went by id alone would have sent `later` at once and then skipped `early` (a smaller id).
      expect(stream.ids()).toEqual([early, later]);
    } finally {
      await slow.query('ROLLBACK').catch(() => undefined);
      slow.release();
    }
  });

  it('is not held up by a long transaction in another database of the same server', async () => {
    const tenant = await t.newTenant();
    const elsewhere = new pg.Client({ connectionString: inject('pgAdminUrl') });
    await elsewhere.connect();
    try {
      await elsewhere.query('BEGIN');
      await elsewhere.query('CREATE TEMP TABLE long_load (n int)');
      await elsewhere.query('INSERT INTO long_load VALUES (1)');
      const stream = open(tenant.keys.test);
      await stream.connected();
      const id = await emit(tenantOf(tenant));
      // Held back only until the stream reads the precise boundary: well before the other transaction ends.
      await waitFor(
        "the event while the other database's transaction is still open",
        () => stream.events.length >= 1,
        10_000,
      );
      await stream.stop();
      expect(stream.ids()).toEqual([id]);
    } finally {
      await elsewhere.query('ROLLBACK').catch(() => undefined);
      await elsewhere.end();
    }
  });

  it('answers 404 naming Last-Event-ID for an event the tenant does not have, and 400 naming types for an unknown type', async () => {
    const tenant = await t.newTenant();
    const other = await t.newTenant('Someone Else');
    const theirs = await emit(tenantOf(other));
    const call = (query: string, headers: Record<string, string> = {}) =>
      fetch(`${streamUrl()}${query}`, { headers: { 'x-api-key': tenant.keys.test, ...headers } });
    const unknown = await call('', { 'last-event-id': theirs });
    expect(unknown.status).toBe(404);
    const body = await unknown.json();
    expect(body).toMatchObject({
      code: 'not_found',
      requestId: expect.any(String),
      errors: [{ field: 'headers.last-event-id', message: expect.stringContaining(theirs) }],
    });
    const badType = await call('?types=filing.status_changed,order.placed');
    expect(badType.status).toBe(400);
    expect((await badType.json()).errors).toEqual([
      { field: 'types', message: expect.stringContaining('order.placed') },
    ]);
  });

  it('refuses a key of the other environment or no key with 401, which the SDK does not retry', async () => {
    const tenant = await t.newTenant();
    expect((await fetch(streamUrl())).status).toBe(401);
    const wrong = await fetch(streamUrl('live'), { headers: { 'x-api-key': tenant.keys.test } });
    expect(wrong.status).toBe(401);
    expect((await wrong.json()).code).toBe('wrong_environment');
    const reading = streamEvents(
      { url: streamUrl('live'), headers: { 'x-api-key': tenant.keys.test }, fetch },
      { reconnectDelayMs: 10 },
    );
    await expect(reading.next()).rejects.toBeInstanceOf(AuthenticationError);
  });

  it('bounds the streams of one key (EVENT_STREAM_MAX_PER_KEY): one more answers 429 rate_limited until one closes', async () => {
    const tenant = await t.newTenant();
    const a = open(tenant.keys.test);
    const b = open(tenant.keys.test);
    await Promise.all([a.connected(), b.connected()]);
    const refused = await fetch(streamUrl(), { headers: { 'x-api-key': tenant.keys.test } });
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ code: 'rate_limited', message: expect.stringContaining('at most 2') });
    // Another key of the same organization has its own allowance.
    const live = open(tenant.keys.live, { env: 'live' });
    await live.connected();
    await Promise.all([a.stop(), live.stop()]);
    const c = open(tenant.keys.test);
    await c.connected();
    await Promise.all([b.stop(), c.stop()]);
  });

  it('sends heartbeat comments while idle, as text/event-stream with the request id', async () => {
    const tenant = await t.newTenant();
    const stop = new AbortController();
    const res = await fetch(streamUrl(), { headers: { 'x-api-key': tenant.keys.test }, signal: stop.signal });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
    const reader = res.body!.getReader();
    let text = '';
    await waitFor(
      'a heartbeat',
      async () => {
        const { value } = await reader.read();
        text += new TextDecoder().decode(value);
        return text.includes(': heartbeat');
      },
      5000,
    );
    stop.abort();
  });

  it('ends open streams when the server closes, so shutdown is not held up', async () => {
    const other = await createTestApp();
    const otherOrigin = await listening(other);
    const tenant = await other.newTenant();
    const res = await fetch(`${otherOrigin}/test/v1/events/stream`, { headers: { 'x-api-key': tenant.keys.test } });
    expect(res.status).toBe(200);
    const drained = res.body!.pipeTo(new WritableStream()).then(
      () => 'ended',
      () => 'ended',
    );
    await other.close();
    expect(await drained).toBe('ended');
  });

  it('records the tenant as streamed while a stream is open, so an order placed meanwhile wakes it at once (OPS-6)', async () => {
    // Heartbeats a minute apart: within the test, only the placement's wake-up can bring its events.
    const slow = await createTestApp({ EVENT_STREAM_HEARTBEAT_SECONDS: '60' });
    try {
      const tenant = await slow.newTenant();
      const user = await newUser(tenant);
      await credit(tenant, 10_000);
      const streamedRows = async () =>
        (
          await slow.ctx.pool.query(
            `SELECT 1 FROM event_stream_tenants
              WHERE organization_id = $1 AND environment = 'test' AND expires_at > now()`,
            [tenant.organizationId],
          )
        ).rowCount;
      expect(await streamedRows()).toBe(0);
      const stream = open(tenant.keys.test, { origin: await listening(slow) });
      await stream.connected();
      expect(await streamedRows()).toBe(1);
      // Past the one extra look a new stream takes (for placements already running when it was recorded).
      await new Promise((resolve) => setTimeout(resolve, 1200));
      const placed = await tenant.api('POST', '/orders', formationBody(user.id, 'DE'));
      expect(placed.statusCode, placed.body).toBe(201);
      await waitFor("the order's event", () => stream.events.some((e) => e.type === 'filing.status_changed'), 5000);
      await stream.stop();
      await waitFor('the tenant no longer recorded as streamed', async () => (await streamedRows()) === 0, 5000);
    } finally {
      await slow.close();
    }
  });

  it('sends a test event (POST /webhook-endpoints/{id}/test) within 100 ms of its answer, not at the next heartbeat', async () => {
    // Heartbeats a minute apart: within the test, only the test event's own wake-up can bring it.
    const slow = await createTestApp({ EVENT_STREAM_HEARTBEAT_SECONDS: '60' });
    try {
      const tenant = await slow.newTenant();
      const endpoint = (
        await tenant.api('POST', '/webhook-endpoints', {
          url: 'https://hooks.example.com/test-events',
          eventTypes: ['filing.status_changed'],
        })
      ).json();
      const stream = open(tenant.keys.test, { origin: await listening(slow), types: ['webhook.test'] });
      await stream.connected();
      // Past the one extra look a new stream takes (OPS-6), so that look cannot bring the events either.
      await new Promise((resolve) => setTimeout(resolve, 1200));
      const delays: number[] = [];
      for (let n = 1; n <= 3; n++) {
        const sent = await tenant.api('POST', `/webhook-endpoints/${endpoint.id}/test`);
        const answered = performance.now();
        expect(sent.statusCode, sent.body).toBe(202);
        await waitFor(`test event ${n}`, () => stream.events.length >= n, 5000);
        delays.push(stream.arrivals[n - 1]! - answered);
        expect(stream.events[n - 1]!.event).toMatchObject({ type: 'webhook.test', data: { endpointId: endpoint.id } });
      }
      await stream.stop();
      // The best of three: one wake-up delayed by a loaded machine does not make the test fail.
      expect(Math.min(...delays)).toBeLessThan(100);
      expect(Math.max(...delays)).toBeLessThan(2000);
    } finally {
      await slow.close();
    }
  });

  it('logs no error for any of the streams above', () => {
    const errors = t.logs.map((l) => JSON.parse(l)).filter((l) => l.level >= 50);
    expect(errors).toEqual([]);
  });
});

describe('a stream lives as long as its key resolves (EVT-9)', () => {
  it('revoking a key ends every stream opened with it on every process within 2 s; a reconnect gets 401; other keys stream on', async () => {
    const started: ServiceProcess[] = [];
    try {
      // Keys kept in memory for 10 minutes and heartbeats a minute apart: only the revocation's announcement can
      // end the streams within the test.
      const env = fleetEnv(t.ctx.config.databaseUrl!, {
        API_KEY_CACHE_SECONDS: '600',
        EVENT_STREAM_HEARTBEAT_SECONDS: '60',
      });
      const [a, b] = await Promise.all([startApi(env, started), startApi(env, started)]);
      const tenant = await t.newTenant('Revoked Streams');
      const revoked = [a, a, b].map((p) => open(tenant.keys.test, { origin: p.baseUrl }));
      const kept = [a, b].map((p) => open(tenant.keys.live, { env: 'live', origin: p.baseUrl }));
      await Promise.all([...revoked, ...kept].map((s) => s.connected()));
      const before = [await emit(tenantOf(tenant)), await emit(tenantOf(tenant, 'live'))];
      await waitFor('the first events on every stream', () => [...revoked, ...kept].every((s) => s.events.length));

      const revokedAt = performance.now();
      const revocation = await t.admin(
        'DELETE',
        `/organizations/${tenant.organizationId}/api-keys/${tenant.keyIds.test}`,
      );
      expect(revocation.statusCode, revocation.body).toBe(200);
      // Each stream ends; the SDK reconnects with the same key and gets 401, which it does not retry.
      await waitFor('every stream of the revoked key to end', () => revoked.every((s) => s.drops.length), 10_000);
      const ends = await Promise.allSettled(revoked.map((stream) => stream.reading));
      for (const end of ends)
        expect(end).toMatchObject({ status: 'rejected', reason: expect.any(AuthenticationError) });
      for (const stream of revoked) expect(stream.drops[0]! - revokedAt).toBeLessThan(2000);

      const after = [await emit(tenantOf(tenant)), await emit(tenantOf(tenant, 'live'))];
      await waitFor('the later live event on the live streams', () => kept.every((s) => s.events.length >= 2));
      await Promise.all(kept.map((s) => s.stop()));
      for (const stream of revoked) expect(stream.ids()).toEqual([before[0]]);
      for (const stream of kept) {
        expect(stream.ids()).toEqual([before[1], after[1]]);
        expect(stream.drops).toEqual([]);
      }
      for (const p of [a, b]) {
        expect(
          (await call(p.baseUrl, 'GET', '/test/v1/organization', undefined, { 'x-api-key': tenant.keys.test })).status,
        ).toBe(401);
        expect(p.service.logs().filter((l) => l.level >= 50)).toEqual([]);
      }
    } finally {
      for (const s of started) s.kill();
    }
  }, 420_000);

  it('ends a stream at a heartbeat once its key no longer resolves, even when no change was announced', async () => {
    const tenant = await t.newTenant('Silently Revoked');
    const stream = open(tenant.keys.test);
    await stream.connected();
    const first = await emit(tenantOf(tenant));
    await waitFor('the first event', () => stream.events.length >= 1);
    const unheard = await revokeUnannounced(tenant.keyIds.test);
    // Ended within a few 0.3 s heartbeats; the reconnect is refused, although the key had been kept in memory.
    await waitFor('the stream to end', () => stream.drops.length, 10_000);
    await expect(stream.reading).rejects.toBeInstanceOf(AuthenticationError);
    expect(await unheard()).toEqual([]);
    await emit(tenantOf(tenant));
    expect(stream.ids()).toEqual([first]);
    expect((await tenant.api('GET', '/organization')).statusCode).toBe(401);
  });

  it('ends at once a stream opened with a key revoked after it was kept in memory and before the stream listened', async () => {
    // Heartbeats a minute apart: within the test, only the look-up a new stream makes can end it.
    const slow = await createTestApp({ EVENT_STREAM_HEARTBEAT_SECONDS: '60' });
    try {
      const tenant = await slow.newTenant('Revoked Meanwhile');
      const origin = await listening(slow);
      // Another key's stream holds this process's listening connection open: the new stream opens none itself.
      const live = open(tenant.keys.live, { env: 'live', origin });
      await live.connected();
      expect((await tenant.api('GET', '/organization')).statusCode).toBe(200);
      const unheard = await revokeUnannounced(tenant.keyIds.test, slow);
      // Still passes the key cache, as a request can in the moment between a revocation and its announcement.
      expect((await tenant.api('GET', '/organization')).statusCode).toBe(200);
      const stream = open(tenant.keys.test, { origin });
      await waitFor('the stream to end', () => stream.drops.length, 10_000);
      await expect(stream.reading).rejects.toBeInstanceOf(AuthenticationError);
      expect(await unheard()).toEqual([]);
      expect(stream.statuses[0]).toMatchObject({ state: 'connected' });
      await live.stop();
      expect(live.drops).toEqual([]);
    } finally {
      await slow.close();
    }
  });
});

/**
 * Revokes a key with the announcing trigger switched off (as for a key whose expiry passes, or a change made while a
 * process could not hear it): no process is told. @returns what was announced on the key channel meanwhile (call it
 * once the test is done with the key; it stops listening).
 */
async function revokeUnannounced(keyId: string, app: TestApp = t): Promise<() => Promise<string[]>> {
  const heard = new pg.Client({ connectionString: app.ctx.config.databaseUrl! });
  const announcements: string[] = [];
  await heard.connect();
  heard.on('notification', (n) => announcements.push(n.payload ?? ''));
  await heard.query(`LISTEN ${API_KEY_CHANNEL}`);
  await withTransaction(app.ctx.pool, async (tx) => {
    await tx.query('SET LOCAL session_replication_role = replica');
    await tx.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [keyId]);
  });
  return async () => {
    await heard.end();
    return announcements;
  };
}

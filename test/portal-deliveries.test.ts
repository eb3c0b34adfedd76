import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Environment } from '../src/context.js';
import { withTransaction } from '../src/lib/db.js';
import { emitEvents, type EventType } from '../src/modules/events/events.service.js';
import { type BackgroundWorker, startWorker } from '../src/worker.js';
import { createTestApp, type TestApp, type TestTenant } from './harness.js';
import { memberSession } from './portal-helpers.js';
import { type Receiver, startReceiver, waitFor } from './webhook-receiver.js';

// One retry a tenth of a second after the first attempt: a receiver answering 500 fails a delivery within a second.
let t: TestApp;
let worker: BackgroundWorker;
let receiver: Receiver;
beforeAll(async () => {
  t = await createTestApp({ WEBHOOK_RETRY_SCHEDULE: '0.1' });
  worker = await startWorker(t.ctx);
  // Events whose file name is "ok" are acknowledged; every other one is refused with 500.
  receiver = await startReceiver((req) =>
    req.event.data.fileName === 'ok' ? { status: 200, body: 'ok' } : { status: 500, body: 'down' },
  );
});
afterAll(async () => {
  await worker?.stop();
  await receiver?.close();
  await t?.close();
});

async function endpoint(
  tenant: TestTenant,
  eventTypes = ['document.uploaded', 'filing.status_changed'],
  env: Environment = 'test',
) {
  const res = await tenant.api('POST', '/webhook-endpoints', { url: receiver.url, eventTypes }, { env });
  expect(res.statusCode, res.body).toBe(201);
  return res.json<{ id: string }>().id;
}

/** Emits one event per file name ("ok" ones are acknowledged). @returns the event ids. */
async function emit(
  tenant: TestTenant,
  fileNames: string[],
  type: EventType = 'document.uploaded',
  env: Environment = 'test',
) {
  const written = await withTransaction(t.ctx.pool, (tx) =>
    emitEvents(
      tx,
      { organizationId: tenant.organizationId, environment: env },
      fileNames.map((fileName) => ({ type, data: { fileName, companyId: 'comp_x', orderId: 'order_x' } })),
    ),
  );
  return written.map((e) => e.id);
}

interface DeliveryState {
  id: string;
  event_id: string;
  endpoint_id: string;
  status: string;
  attempt_count: number;
}

/** The deliveries of these events once none is pending, in the events' order. */
async function settled(eventIds: string[]): Promise<DeliveryState[]> {
  return waitFor<DeliveryState[] | null>(`deliveries of ${eventIds.length} events to settle`, async () => {
    const { rows } = await t.ctx.pool.query<DeliveryState>(
      'SELECT id, event_id, endpoint_id, status, attempt_count FROM webhook_deliveries WHERE event_id = ANY($1)',
      [eventIds],
    );
    if (rows.length < eventIds.length || rows.some((r) => r.status === 'pending')) return null;
    return eventIds.flatMap((e) => rows.filter((r) => r.event_id === e));
  }) as Promise<DeliveryState[]>;
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the delivery log', () => {
  it('filters by endpoint, status, event type and time range', async () => {
    const tenant = await t.newTenant('Delivery Log Co');
    const docs = await endpoint(tenant, ['document.uploaded']);
    const filings = await endpoint(tenant, ['filing.status_changed']);
    const [early] = await emit(tenant, ['early']);
    await pause(20);
    const middle = new Date();
    await pause(20);
    const [okEvent, failEvent] = await emit(tenant, ['ok', 'bad']);
    const [filingEvent] = await emit(tenant, ['ok'], 'filing.status_changed');
    const [d1, d2, d3, d4] = await settled([early!, okEvent!, failEvent!, filingEvent!]);
    expect([d1!.status, d2!.status, d3!.status, d4!.status]).toEqual(['failed', 'succeeded', 'failed', 'succeeded']);
    const { client } = await memberSession(t, tenant.organizationId, 'viewer');

    const shown = (body: string) => [d1, d2, d3, d4].map((d) => body.includes(d!.id));
    const all = await client.get('/portal/deliveries');
    expect(all.statusCode).toBe(200);
    expect(shown(all.body)).toEqual([true, true, true, true]);
    expect(shown((await client.get(`/portal/deliveries?endpoint=${filings}`)).body)).toEqual([
      false,
      false,
      false,
      true,
    ]);
    expect(shown((await client.get(`/portal/deliveries?endpoint=${docs}&status=failed`)).body)).toEqual([
      true,
      false,
      true,
      false,
    ]);
    expect(shown((await client.get('/portal/deliveries?type=filing.status_changed')).body)).toEqual([
      false,
      false,
      false,
      true,
    ]);
    const since = encodeURIComponent(middle.toISOString());
    expect(shown((await client.get(`/portal/deliveries?from=${since}`)).body)).toEqual([false, true, true, true]);
    expect(shown((await client.get(`/portal/deliveries?to=${since}`)).body)).toEqual([true, false, false, false]);
    expect(shown((await client.get(`/portal/deliveries?type=document.uploaded&from=${since}`)).body)).toEqual([
      false,
      true,
      true,
      false,
    ]);
    const bad = await client.get('/portal/deliveries?status=lost&from=yesterday');
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('id="f-status-error"');
    expect(bad.body).toContain('id="f-from-error"');
    // A range that ends before it starts is named at its end, as on the other pages, not answered "nothing matches".
    const backwards = await client.get('/portal/deliveries?from=2026-11-29T06:20&to=2026-11-29T06:10');
    expect(backwards.statusCode).toBe(400);
    expect(backwards.body).toContain('id="f-to-error"');
  });

  it('pages with a keyset link, the event type filter included', async () => {
    const tenant = await t.newTenant('Many Deliveries Co');
    await endpoint(tenant, ['document.uploaded']);
    const events = await emit(
      tenant,
      Array.from({ length: 51 }, () => 'ok'),
    );
    const deliveries = await settled(events);
    const { client } = await memberSession(t, tenant.organizationId, 'viewer');
    // Ids made in the same millisecond need not follow the order the events were emitted in, so the test asks what
    // keyset paging promises: 50 on the first page, the rest on the next, each delivery on exactly one page.
    const shown = (body: string) => deliveries.filter((d) => body.includes(d.id)).map((d) => d.id);
    for (const query of ['', 'type=document.uploaded&']) {
      const first = await client.get(`/portal/deliveries?${query}`);
      const next = /href="(\/portal\/deliveries\?[^"]*before=[^"]+)">Older deliveries/.exec(first.body)?.[1];
      expect(next).toBeDefined();
      const second = await client.get(next!.replace(/&amp;/g, '&'));
      const [onFirst, onSecond] = [shown(first.body), shown(second.body)];
      expect(onFirst).toHaveLength(50);
      expect(onSecond).toHaveLength(1);
      expect(onFirst).not.toContain(onSecond[0]);
    }
  });

  it('shows each attempt with its request and answer, and a resend adds an attempt', async () => {
    const tenant = await t.newTenant('Attempts Co');
    await endpoint(tenant, ['document.uploaded']);
    const [eventId] = await emit(tenant, ['bad']);
    const [delivery] = await settled([eventId!]);
    expect(delivery!.attempt_count).toBe(2);
    const developer = await memberSession(t, tenant.organizationId, 'developer');
    const page = await developer.client.get(`/portal/deliveries/${delivery!.id}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Attempt 2');
    expect(page.body).toContain(`service-delivery-id: ${delivery!.id}`);
    expect(page.body).toContain('content-type: application/json');
    expect(page.body).toContain(
      `{&quot;id&quot;:&quot;${eventId}&quot;,&quot;type&quot;:&quot;document.uploaded&quot;`,
    );
    expect(page.body).toMatch(/<dt>Response status<\/dt><dd>500<\/dd>/);
    expect(page.body).toMatch(/<dt>Duration<\/dt><dd>\d+ ms<\/dd>/);

    receiver.respond = (req) => (req.event.id === eventId ? { status: 200, body: 'ok' } : { status: 500 });
    const resent = await developer.client.post(`/portal/deliveries/${delivery!.id}/resend`, {
      _csrf: developer.client.csrf(),
    });
    expect(resent.statusCode).toBe(303);
    const [after] = await settled([eventId!]);
    expect(after).toMatchObject({ status: 'succeeded', attempt_count: 3 });
    const again = await developer.client.get(`/portal/deliveries/${delivery!.id}`);
    expect(again.body).toContain('Attempt 3');
    expect(again.body).toMatch(/<dt>Response status<\/dt><dd>200<\/dd>/);
    receiver.respond = (req) =>
      req.event.data.fileName === 'ok' ? { status: 200, body: 'ok' } : { status: 500, body: 'down' };
  });

  it("answers 404 for another organization's and the other environment's deliveries and hides them", async () => {
    const tenant = await t.newTenant('Own Deliveries Co');
    const other = await t.newTenant('Other Deliveries Co');
    await endpoint(tenant, ['document.uploaded']);
    await endpoint(other, ['document.uploaded']);
    await endpoint(tenant, ['document.uploaded'], 'live');
    const [mine] = await settled(await emit(tenant, ['ok']));
    const [theirs] = await settled(await emit(other, ['ok']));
    const [live] = await settled(await emit(tenant, ['ok'], 'document.uploaded', 'live'));
    const { client } = await memberSession(t, tenant.organizationId, 'admin');
    const list = await client.get('/portal/deliveries');
    expect(list.body).toContain(mine!.id);
    expect(list.body).not.toContain(theirs!.id);
    expect(list.body).not.toContain(live!.id);
    for (const d of [theirs!, live!]) {
      expect((await client.get(`/portal/deliveries/${d.id}`)).statusCode).toBe(404);
      const resend = await client.post(`/portal/deliveries/${d.id}/resend`, { _csrf: client.csrf() });
      expect(resend.statusCode).toBe(404);
    }
    const foreign = await client.post('/portal/deliveries/recoveries', {
      _csrf: client.csrf(),
      endpoint: theirs!.endpoint_id,
      since: new Date(Date.now() - 60_000).toISOString(),
    });
    expect(foreign.statusCode).toBe(404);
  });
});

describe('recovery of failed deliveries', () => {
  it('re-queues exactly the failed deliveries of the endpoint since the moment, and shows its progress', async () => {
    const tenant = await t.newTenant('Recovery Co');
    const ep = await endpoint(tenant, ['document.uploaded']);
    const otherEp = await endpoint(tenant, ['document.uploaded']);
    const beforeEvents = await emit(tenant, ['bad']);
    await pause(20);
    const since = new Date();
    await pause(20);
    const afterEvents = await emit(tenant, ['bad', 'ok', 'bad']);
    const after = await settled(afterEvents);
    const onEp = (ds: DeliveryState[]) => ds.filter((d) => d.endpoint_id === ep);
    const [failedA, succeeded, failedB] = onEp(after);
    expect([failedA!.status, succeeded!.status, failedB!.status]).toEqual(['failed', 'succeeded', 'failed']);
    const beforeOnEp = onEp(await settled(beforeEvents))[0]!;

    // From now on the receiver acknowledges everything: the re-queued deliveries succeed.
    receiver.respond = () => ({ status: 200, body: 'ok' });
    const { client } = await memberSession(t, tenant.organizationId, 'developer');
    await client.get('/portal/deliveries/recoveries');
    const started = await client.post('/portal/deliveries/recoveries', {
      _csrf: client.csrf(),
      endpoint: ep,
      since: since.toISOString(),
    });
    expect(started.statusCode).toBe(303);
    const progressUrl = String(started.headers.location);
    expect(progressUrl).toMatch(/^\/portal\/deliveries\/recoveries\/whrec_/);
    const done = await waitFor('the recovery to finish', async () => {
      const page = await client.get(progressUrl);
      return page.body.includes('<dt>State</dt><dd>done</dd>') ? page : null;
    }).then((page) => page!);
    expect(done.body).toContain('<dt>Total</dt><dd>2</dd>');
    expect(done.body).toContain('<dt>Re-queued</dt><dd>2</dd>');
    expect(done.body).toContain('<progress');

    const final = await settled(after.map((d) => d.event_id));
    const byId = new Map(final.map((d) => [d.id, d]));
    expect(byId.get(failedA!.id)).toMatchObject({ status: 'succeeded', attempt_count: 3 });
    expect(byId.get(failedB!.id)).toMatchObject({ status: 'succeeded', attempt_count: 3 });
    expect(byId.get(succeeded!.id)).toMatchObject({ status: 'succeeded', attempt_count: 1 });
    // The other endpoint's failures and the failure from before the moment stay as they were.
    for (const d of after.filter((x) => x.endpoint_id === otherEp && x.status === 'failed'))
      expect(byId.get(d.id)).toMatchObject({ status: 'failed', attempt_count: 2 });
    const [stillBefore] = (
      await t.ctx.pool.query<DeliveryState>('SELECT status, attempt_count FROM webhook_deliveries WHERE id = $1', [
        beforeOnEp.id,
      ])
    ).rows;
    expect(stillBefore).toMatchObject({ status: 'failed', attempt_count: 2 });

    const list = await client.get('/portal/deliveries/recoveries');
    expect(list.body).toContain(progressUrl);
    receiver.respond = (req) =>
      req.event.data.fileName === 'ok' ? { status: 200, body: 'ok' } : { status: 500, body: 'down' };
  });

  it("refuses a disabled endpoint, a moment to come, and another organization's recovery", async () => {
    const tenant = await t.newTenant('Recovery Refusals Co');
    const other = await t.newTenant('Recovery Other Co');
    const ep = await endpoint(tenant, ['document.uploaded']);
    const theirEp = await endpoint(other, ['document.uploaded']);
    const { client } = await memberSession(t, tenant.organizationId, 'owner');
    const owner = (await memberSession(t, other.organizationId, 'owner')).client;
    await client.get('/portal/deliveries/recoveries');
    const future = await client.post('/portal/deliveries/recoveries', {
      _csrf: client.csrf(),
      endpoint: ep,
      since: new Date(Date.now() + 3_600_000).toISOString(),
    });
    expect(future.statusCode).toBe(400);
    expect(future.body).toContain('must be a moment in the past');
    const missing = await client.post('/portal/deliveries/recoveries', {
      _csrf: client.csrf(),
      endpoint: '',
      since: '',
    });
    expect(missing.statusCode).toBe(400);
    expect(missing.body).toContain('id="rec-endpoint-error"');
    expect(missing.body).toContain('id="rec-since-error"');
    expect((await tenant.api('PATCH', `/webhook-endpoints/${ep}`, { disabled: true })).statusCode).toBe(200);
    const disabled = await client.post('/portal/deliveries/recoveries', {
      _csrf: client.csrf(),
      endpoint: ep,
      since: new Date(Date.now() - 60_000).toISOString(),
    });
    expect(disabled.statusCode).toBe(409);
    await owner.get('/portal/deliveries/recoveries');
    const theirs = await owner.post('/portal/deliveries/recoveries', {
      _csrf: owner.csrf(),
      endpoint: theirEp,
      since: new Date(Date.now() - 60_000).toISOString(),
    });
    expect(theirs.statusCode).toBe(303);
    expect((await client.get(String(theirs.headers.location))).statusCode).toBe(404);
    expect((await owner.get(String(theirs.headers.location))).statusCode).toBe(200);
  });

  it('refuses resend and recovery to a viewer with 403, and shows a viewer neither', async () => {
    const tenant = await t.newTenant('Viewer Deliveries Co');
    const ep = await endpoint(tenant, ['document.uploaded']);
    const [delivery] = await settled(await emit(tenant, ['bad']));
    const { client } = await memberSession(t, tenant.organizationId, 'viewer');
    const page = await client.get(`/portal/deliveries/${delivery!.id}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).not.toContain('/resend');
    const resend = await client.post(`/portal/deliveries/${delivery!.id}/resend`, { _csrf: client.csrf() });
    expect(resend.statusCode).toBe(403);
    const recoveries = await client.get('/portal/deliveries/recoveries');
    expect(recoveries.body).not.toContain('action="/portal/deliveries/recoveries"');
    const recover = await client.post('/portal/deliveries/recoveries', {
      _csrf: client.csrf(),
      endpoint: ep,
      since: new Date(Date.now() - 60_000).toISOString(),
    });
    expect(recover.statusCode).toBe(403);
    const { rows } = await t.ctx.pool.query(
      'SELECT count(*)::int AS n FROM webhook_recoveries WHERE organization_id = $1',
      [tenant.organizationId],
    );
    expect(rows[0].n).toBe(0);
    const [unchanged] = await settled([delivery!.event_id]);
    expect(unchanged).toMatchObject({ status: 'failed', attempt_count: 2 });
  });
});

import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTransaction } from '../src/lib/db.js';
import { emitEvent, type EventType } from '../src/modules/events/events.service.js';
import { type BackgroundWorker, startWorker } from '../src/worker.js';
import { createTestApp, type TestApp, type TestTenant } from './harness.js';
import { refusedPort, startReceiver, verifyWithStripe, waitFor, type Receiver } from './webhook-receiver.js';

// Retries after ~1 s (three of them): the whole policy runs in seconds. The timeout is generous, so a receiver
// that answers at once is never cut off on a busy machine and the attempt counts below are exact; the timeout
// test shortens it for itself.
let t: TestApp;
let worker: BackgroundWorker;
const receivers: Receiver[] = [];
beforeAll(async () => {
  t = await createTestApp({ WEBHOOK_RETRY_SCHEDULE: '1,1,1', WEBHOOK_TIMEOUT_MS: '15000' });
  worker = await startWorker(t.ctx);
});
afterAll(async () => {
  await worker?.stop();
  await Promise.all(receivers.map((r) => r.close()));
  await t?.close();
});

async function receiver(...args: Parameters<typeof startReceiver>): Promise<Receiver> {
  const r = await startReceiver(...args);
  receivers.push(r);
  return r;
}

async function endpoint(
  tenant: TestTenant,
  url: string,
  eventTypes: string[] = ['filing.status_changed', 'document.uploaded'],
) {
  const res = await tenant.api('POST', '/webhook-endpoints', { url, eventTypes });
  expect(res.statusCode, res.body).toBe(201);
  return res.json<{ id: string; secret: string }>();
}

/** Emits an event the way every module does: inside a transaction, through emitEvent. */
function emit(
  tenant: TestTenant,
  type: EventType = 'document.uploaded',
  data: Record<string, unknown> = { documentType: 'company', fileName: 'articles.pdf' },
) {
  return withTransaction(t.ctx.pool, (tx) =>
    emitEvent(tx, { organizationId: tenant.organizationId, environment: 'test' }, type, data),
  );
}

async function deliveriesOf(tenant: TestTenant, query = '') {
  return (await tenant.api('GET', `/webhook-deliveries${query}`)).json<{ data: any[]; hasMore: boolean }>().data;
}

/** Deliveries of the organization (both environments) not yet finished. */
async function pendingDeliveries(organizationId: string): Promise<number> {
  const { rows } = await t.ctx.pool.query(
    `SELECT count(*)::int AS n FROM webhook_deliveries WHERE organization_id = $1 AND status = 'pending'`,
    [organizationId],
  );
  return rows[0].n;
}

async function settled(tenant: TestTenant, eventId: string) {
  return waitFor(`delivery of ${eventId} to settle`, async () => {
    const [d] = await deliveriesOf(tenant, `?eventId=${eventId}`);
    return d && d.status !== 'pending' ? (await tenant.api('GET', `/webhook-deliveries/${d.id}`)).json() : null;
  });
}

describe('webhook delivery', () => {
  it("POSTs the envelope, signed so that Stripe's constructEvent verifies it with the endpoint secret", async () => {
    const tenant = await t.newTenant();
    const r = await receiver();
    const ep = await endpoint(tenant, r.url);
    const event = await emit(tenant);
    await waitFor('the event', () => r.requests.length === 1);
    const req = r.requests[0]!;
    expect(verifyWithStripe(req, ep.secret)).toEqual(event);
    expect(JSON.parse(req.rawBody)).toEqual({
      id: event.id,
      type: 'document.uploaded',
      createdAt: event.createdAt,
      data: event.data,
    });
    expect(event.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers['service-event-id']).toBe(event.id);
    expect(req.headers['user-agent']).toMatch(/Webhooks/);
    expect(String(req.headers['service-signature'])).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(() => verifyWithStripe(req, `${ep.secret}x`)).toThrow();
    const delivery = await settled(tenant, event.id);
    expect(delivery).toMatchObject({
      status: 'succeeded',
      endpointId: ep.id,
      eventType: 'document.uploaded',
      attemptCount: 1,
      failureReason: null,
    });
    expect(delivery.attempts).toEqual([
      expect.objectContaining({ attemptNumber: 1, statusCode: 200, responseBody: null, error: null, url: r.url }),
    ]);
  });

  it('sends only to enabled endpoints subscribed to the type, of the same environment', async () => {
    const tenant = await t.newTenant();
    const [docs, filings, off, live] = await Promise.all([receiver(), receiver(), receiver(), receiver()]);
    await endpoint(tenant, docs.url, ['document.uploaded']);
    await endpoint(tenant, filings.url, ['filing.status_changed']);
    const disabled = await endpoint(tenant, off.url, ['document.uploaded']);
    expect((await tenant.api('PATCH', `/webhook-endpoints/${disabled.id}`, { disabled: true })).json()).toMatchObject({
      disabled: true,
    });
    expect(
      (
        await tenant.api(
          'POST',
          '/webhook-endpoints',
          { url: live.url, eventTypes: ['document.uploaded'] },
          { env: 'live' },
        )
      ).statusCode,
    ).toBe(201);
    const event = await emit(tenant, 'document.uploaded');
    await waitFor('the subscribed endpoint', () => docs.requests.length === 1);
    expect(docs.requests[0]!.event.id).toBe(event.id);
    // Absence is asserted once the system has settled: the event's one delivery is done and no delivery of the
    // organization in either environment is still due, so nothing could still reach the other receivers.
    expect(await settled(tenant, event.id)).toMatchObject({ status: 'succeeded' });
    await waitFor(
      'no delivery of the organization still due',
      async () => (await pendingDeliveries(tenant.organizationId)) === 0,
    );
    expect((await deliveriesOf(tenant, `?eventId=${event.id}`)).length).toBe(1);
    expect([filings.requests.length, off.requests.length, live.requests.length]).toEqual([0, 0, 0]);
  });

  it('retries a receiver that fails twice and delivers on the third attempt, recording every attempt', async () => {
    const tenant = await t.newTenant();
    const big = 'x'.repeat(10_000);
    const r = await receiver((_req, n) =>
      n === 1 ? { status: 500, body: big } : n === 2 ? { status: 503, body: 'busy' } : { status: 204 },
    );
    const ep = await endpoint(tenant, r.url);
    const event = await emit(tenant);
    const delivery = await settled(tenant, event.id);
    expect(delivery).toMatchObject({ status: 'succeeded', attemptCount: 3 });
    expect(delivery.attempts.map((a: any) => [a.attemptNumber, a.statusCode])).toEqual([
      [1, 500],
      [2, 503],
      [3, 204],
    ]);
    // The receiver is on loopback: what it answers is never kept (WH-16).
    expect(delivery.attempts.map((a: any) => a.responseBody)).toEqual([null, null, null]);
    expect(delivery.attempts.every((a: any) => a.durationMs >= 0)).toBe(true);
    expect(r.requests.map((q) => q.event.id)).toEqual([event.id, event.id, event.id]);
    for (const req of r.requests) expect(verifyWithStripe(req, ep.secret)).toEqual(event);
    // A later success ends the failure streak the first attempts started.
    expect((await tenant.api('GET', `/webhook-endpoints/${ep.id}`)).json().failingSince).toBeNull();
  });

  it('treats a timeout as a failure and retries', async () => {
    const tenant = await t.newTenant();
    const r = await receiver((_req, n) => (n === 1 ? 'hang' : { status: 200 }));
    await endpoint(tenant, r.url);
    const before = t.ctx.config.webhookTimeoutMs;
    t.ctx.config.webhookTimeoutMs = 1000;
    let event: Awaited<ReturnType<typeof emit>>;
    try {
      event = await emit(tenant);
      await waitFor('the first attempt to time out', async () => {
        const [d] = await deliveriesOf(tenant, `?eventId=${event.id}`);
        return d && d.attemptCount >= 1;
      });
    } finally {
      t.ctx.config.webhookTimeoutMs = before;
    }
    // The retry runs with the generous timeout again, so it gets the receiver's 200 however busy the machine is.
    const delivery = await settled(tenant, event.id);
    expect(delivery.status).toBe('succeeded');
    expect(delivery.attempts[0]).toMatchObject({
      attemptNumber: 1,
      statusCode: null,
      error: expect.stringContaining('Timed out after 1000 ms'),
    });
    expect(delivery.attempts[1]).toMatchObject({ attemptNumber: 2, statusCode: 200, error: null });
  });

  it('records a refused connection and gives up when the schedule is exhausted', async () => {
    const tenant = await t.newTenant();
    // Port 1 (tcpmux) on loopback: privileged and unused, so nothing of ours can be listening there. A port a test
    // server just closed could be taken again by any process meanwhile.
    const url = `http://127.0.0.1:${await refusedPort()}/hooks`;
    const ep = await endpoint(tenant, url);
    const event = await emit(tenant);
    const delivery = await settled(tenant, event.id);
    expect(delivery.status).toBe('failed');
    expect(delivery.attemptCount).toBe(4); // the first try and one retry per schedule entry
    expect(delivery.attempts.every((a: any) => a.statusCode === null && /ECONNREFUSED/.test(a.error))).toBe(true);
    expect(delivery.failureReason).toMatch(/Gave up after 4 attempts/);
    expect(delivery.nextAttemptAt).toBeNull();
    const after = (await tenant.api('GET', `/webhook-endpoints/${ep.id}`)).json();
    expect(after).toMatchObject({ disabled: false, failingSince: expect.any(String) });
  });

  it('disables the endpoint at once when it answers 410 Gone', async () => {
    const tenant = await t.newTenant();
    const r = await receiver(() => ({ status: 410, body: 'gone' }));
    const ep = await endpoint(tenant, r.url);
    const event = await emit(tenant);
    const delivery = await settled(tenant, event.id);
    expect(delivery).toMatchObject({
      status: 'failed',
      attemptCount: 1,
      failureReason: expect.stringContaining('410'),
    });
    expect((await tenant.api('GET', `/webhook-endpoints/${ep.id}`)).json()).toMatchObject({
      disabled: true,
      disabledReason: expect.stringContaining('410'),
    });
    const next = await emit(tenant);
    expect(await deliveriesOf(tenant, `?eventId=${next.id}`)).toEqual([]);
    expect(r.requests.length).toBe(1);
  });

  it('disables an endpoint that has been failing for WEBHOOK_DISABLE_AFTER_HOURS', async () => {
    const tenant = await t.newTenant();
    const r = await receiver(() => ({ status: 500 }));
    const ep = await endpoint(tenant, r.url);
    // Its failures started 121 hours ago (default limit 120).
    await t.ctx.pool.query(`UPDATE webhook_endpoints SET failing_since = now() - interval '121 hours' WHERE id = $1`, [
      ep.id,
    ]);
    const event = await emit(tenant);
    const delivery = await settled(tenant, event.id);
    expect(delivery).toMatchObject({
      status: 'failed',
      attemptCount: 1,
      failureReason: expect.stringContaining('Endpoint disabled'),
    });
    expect((await tenant.api('GET', `/webhook-endpoints/${ep.id}`)).json()).toMatchObject({
      disabled: true,
      disabledReason: expect.stringContaining('120 hours'),
    });
  });

  it('ends pending deliveries of a deleted endpoint without calling it again', async () => {
    const tenant = await t.newTenant();
    const r = await receiver(() => ({ status: 500 }));
    const ep = await endpoint(tenant, r.url);
    const event = await emit(tenant);
    await waitFor('the first attempt', () => r.requests.length === 1);
    await tenant.api('DELETE', `/webhook-endpoints/${ep.id}`);
    const delivery = await settled(tenant, event.id);
    expect(delivery).toMatchObject({ status: 'failed', failureReason: 'Endpoint deleted' });
    expect(r.requests.length).toBe(1);
  });

  it('signs with both secrets for 24 hours after a rotation (two v1 entries, both verify)', async () => {
    const tenant = await t.newTenant();
    const r = await receiver();
    const ep = await endpoint(tenant, r.url);
    const rotated = (await tenant.api('POST', `/webhook-endpoints/${ep.id}/rotate-secret`)).json();
    const event = await emit(tenant);
    await waitFor('the event', () => r.requests.length === 1);
    const req = r.requests[0]!;
    expect(String(req.headers['service-signature'])).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    expect(verifyWithStripe(req, rotated.secret)).toEqual(event);
    expect(verifyWithStripe(req, ep.secret)).toEqual(event);
    // WH-3: the new secret's entry comes first, so a receiver that reads only the first v1 verifies with the new
    // secret.
    const [t0, firstV1] = String(req.headers['service-signature']).split(',');
    const hmac = (secret: string) =>
      `v1=${createHmac('sha256', secret)
        .update(`${t0.slice(2)}.${req.rawBody}`)
        .digest('hex')}`;
    expect(firstV1).toBe(hmac(rotated.secret));
    expect(firstV1).not.toBe(hmac(ep.secret));
    // Once the 24 hours are over, only the new secret signs.
    await t.ctx.pool.query(
      `UPDATE webhook_endpoints SET previous_secret_expires_at = now() - interval '1 second' WHERE id = $1`,
      [ep.id],
    );
    await emit(tenant);
    await waitFor('the second event', () => r.requests.length === 2);
    const later = r.requests[1]!;
    expect(String(later.headers['service-signature'])).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(() => verifyWithStripe(later, ep.secret)).toThrow();
    expect(verifyWithStripe(later, rotated.secret)).toMatchObject({ id: later.event.id });
  });
});

describe('test events', () => {
  it('sends webhook.test to that endpoint only, once, as an inspectable delivery', async () => {
    const tenant = await t.newTenant();
    const [target, other] = await Promise.all([receiver(), receiver()]);
    const ep = await endpoint(tenant, target.url);
    await endpoint(tenant, other.url);
    const res = await tenant.api('POST', `/webhook-endpoints/${ep.id}/test`);
    expect(res.statusCode).toBe(202);
    expect(res.json()).toMatchObject({
      id: expect.stringMatching(/^wd_/),
      endpointId: ep.id,
      eventType: 'webhook.test',
      status: 'pending',
    });
    await waitFor('the test event', () => target.requests.length === 1);
    const req = target.requests[0]!;
    expect(verifyWithStripe(req, ep.secret)).toMatchObject({ type: 'webhook.test', data: { endpointId: ep.id } });
    const d = await settled(tenant, req.event.id);
    expect(d).toMatchObject({ id: res.json().id, status: 'succeeded', attemptCount: 1 });
    // Settled, and nothing else due: the other endpoint got no delivery and no request.
    await waitFor(
      'no delivery of the organization still due',
      async () => (await pendingDeliveries(tenant.organizationId)) === 0,
    );
    expect((await deliveriesOf(tenant)).map((x) => x.endpointId)).toEqual([ep.id]);
    expect(other.requests.length).toBe(0);
  });

  it('does not retry a failed test event nor start the failure clock', async () => {
    const tenant = await t.newTenant();
    const r = await receiver(() => ({ status: 500 }));
    const ep = await endpoint(tenant, r.url);
    const sent = (await tenant.api('POST', `/webhook-endpoints/${ep.id}/test`)).json();
    await waitFor('the attempt', () => r.requests.length === 1);
    const d = await settled(tenant, r.requests[0]!.event.id);
    expect(d).toMatchObject({ id: sent.id, status: 'failed', attemptCount: 1 });
    expect((await tenant.api('GET', `/webhook-endpoints/${ep.id}`)).json().failingSince).toBeNull();
  });

  it('answers 409 for a disabled endpoint', async () => {
    const tenant = await t.newTenant();
    const ep = await endpoint(tenant, 'http://127.0.0.1:9/x');
    await tenant.api('PATCH', `/webhook-endpoints/${ep.id}`, { disabled: true });
    const res = await tenant.api('POST', `/webhook-endpoints/${ep.id}/test`);
    expect(res.statusCode).toBe(409);
  });
});

describe('webhook deliveries API', () => {
  it('lists deliveries newest first, filtered by endpoint, event and status, with cursor pagination', async () => {
    const tenant = await t.newTenant();
    const [ok, failing] = await Promise.all([receiver(), receiver(() => ({ status: 410 }))]);
    const a = await endpoint(tenant, ok.url);
    const b = await endpoint(tenant, failing.url);
    const e1 = await emit(tenant);
    await waitFor('both deliveries of e1 settled', async () => {
      const ds = await deliveriesOf(tenant, `?eventId=${e1.id}`);
      return ds.length === 2 && ds.every((d) => d.status !== 'pending');
    });
    const e2 = await emit(tenant);
    await settled(tenant, e2.id);
    const all = await deliveriesOf(tenant);
    expect(all.map((d) => d.eventId)).toEqual([e2.id, e1.id, e1.id]);
    expect((await deliveriesOf(tenant, `?endpointId=${b.id}`)).map((d) => d.eventId)).toEqual([e1.id]);
    expect((await deliveriesOf(tenant, `?eventId=${e2.id}`)).map((d) => d.endpointId)).toEqual([a.id]);
    expect((await deliveriesOf(tenant, '?status=failed')).map((d) => d.endpointId)).toEqual([b.id]);
    expect((await deliveriesOf(tenant, '?status=succeeded')).length).toBe(2);
    const page1 = (await tenant.api('GET', '/webhook-deliveries?limit=2')).json();
    expect(page1).toMatchObject({ object: 'list', hasMore: true });
    const page2 = (await tenant.api('GET', `/webhook-deliveries?limit=2&startingAfter=${page1.data[1].id}`)).json();
    expect([...page1.data, ...page2.data].map((d: any) => d.id)).toEqual(all.map((d) => d.id));
    expect(page2.hasMore).toBe(false);
    const bad = await tenant.api('GET', '/webhook-deliveries?status=lost');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors[0].field).toBe('status');
  });

  it('resends a succeeded delivery as a new attempt, signed afresh', async () => {
    const tenant = await t.newTenant();
    const r = await receiver();
    const ep = await endpoint(tenant, r.url);
    const event = await emit(tenant);
    const first = await settled(tenant, event.id);
    const res = await tenant.api('POST', `/webhook-deliveries/${first.id}/resend`);
    expect(res.statusCode).toBe(202);
    expect(res.json()).toMatchObject({ id: first.id, status: 'pending' });
    await waitFor('the resent event', () => r.requests.length === 2);
    expect(verifyWithStripe(r.requests[1]!, ep.secret)).toEqual(event);
    const after = await waitFor('the resend to settle', async () => {
      const d = (await tenant.api('GET', `/webhook-deliveries/${first.id}`)).json();
      return d.status === 'succeeded' && d.attemptCount === 2 ? d : null;
    });
    expect(after.attempts.map((a: any) => a.attemptNumber)).toEqual([1, 2]);
  });

  it('resends a failed delivery once, without automatic retries', async () => {
    const tenant = await t.newTenant();
    const r = await receiver((_q, n) => (n <= 4 ? { status: 500 } : { status: 400 }));
    await endpoint(tenant, r.url);
    const event = await emit(tenant);
    const failed = await settled(tenant, event.id);
    expect(failed).toMatchObject({ status: 'failed', attemptCount: 4 });
    expect((await tenant.api('POST', `/webhook-deliveries/${failed.id}/resend`)).statusCode).toBe(202);
    const after = await settled(tenant, event.id);
    expect(after).toMatchObject({
      status: 'failed',
      attemptCount: 5,
      failureReason: expect.stringContaining('HTTP 400'),
    });
    expect(r.requests.length).toBe(5);
  });

  it('resends a delivery waiting for its next retry at once, without a second attempt at the old time', async () => {
    const tenant = await t.newTenant();
    const r = await receiver((_req, n) => (n === 1 ? { status: 500, body: 'down' } : { status: 200, body: 'ok' }));
    const ep = await endpoint(tenant, r.url);
    // As during a long wait of the default schedule: the retry after the first failure is an hour away.
    const schedule = t.ctx.config.webhookRetryScheduleSeconds;
    t.ctx.config.webhookRetryScheduleSeconds = [3600];
    let event: Awaited<ReturnType<typeof emit>>;
    let d: { id: string };
    try {
      event = await emit(tenant);
      [d] = await deliveriesOf(tenant, `?eventId=${event.id}`);
      await waitFor(
        'the retry to be scheduled',
        async () => (await tenant.api('GET', `/webhook-deliveries/${d.id}`)).json().attemptCount === 1,
      );
    } finally {
      t.ctx.config.webhookRetryScheduleSeconds = schedule;
    }
    const waiting = (await tenant.api('GET', `/webhook-deliveries/${d.id}`)).json();
    expect(waiting).toMatchObject({ status: 'pending', nextAttemptAt: expect.any(String) });
    expect(Date.parse(waiting.nextAttemptAt) - Date.now()).toBeGreaterThan(30 * 60_000);
    const res = await tenant.api('POST', `/webhook-deliveries/${d.id}/resend`);
    expect(res.statusCode, res.body).toBe(202);
    const done = await settled(tenant, event.id);
    expect(done).toMatchObject({ status: 'succeeded', attemptCount: 2 });
    expect(verifyWithStripe(r.requests[1]!, ep.secret)).toMatchObject({ id: event.id });
    expect(done.nextAttemptAt).toBeNull();
    expect(r.requests.length).toBe(2);
  });

  it('disables after a fractional WEBHOOK_DISABLE_AFTER_HOURS', async () => {
    const tenant = await t.newTenant();
    const r = await receiver(() => ({ status: 500 }));
    const ep = await endpoint(tenant, r.url);
    await t.ctx.pool.query(`UPDATE webhook_endpoints SET failing_since = now() - interval '31 minutes' WHERE id = $1`, [
      ep.id,
    ]);
    const before = t.ctx.config.webhookDisableAfterHours;
    t.ctx.config.webhookDisableAfterHours = 0.5;
    try {
      const delivery = await settled(tenant, (await emit(tenant)).id);
      expect(delivery).toMatchObject({ status: 'failed', attemptCount: 1 });
    } finally {
      t.ctx.config.webhookDisableAfterHours = before;
    }
    expect((await tenant.api('GET', `/webhook-endpoints/${ep.id}`)).json()).toMatchObject({
      disabled: true,
      disabledReason: expect.stringContaining('0.5 hours'),
    });
  });

  it('refuses to resend a pending delivery or one whose endpoint is disabled (409)', async () => {
    const tenant = await t.newTenant();
    const r = await receiver();
    const ep = await endpoint(tenant, r.url);
    // Disabled and re-enabled: the endpoint takes events again (the delivery below exists only if it does).
    expect((await tenant.api('PATCH', `/webhook-endpoints/${ep.id}`, { disabled: true })).json()).toMatchObject({
      disabled: true,
    });
    expect((await tenant.api('PATCH', `/webhook-endpoints/${ep.id}`, { disabled: false })).json()).toMatchObject({
      disabled: false,
    });
    const pending = await withTransaction(t.ctx.pool, async (tx) => {
      // A delivery whose next attempt is scheduled far ahead (as during a long retry wait).
      const ev = await emitEvent(
        tx,
        { organizationId: tenant.organizationId, environment: 'test' },
        'document.uploaded',
        {},
      );
      await tx.query(`UPDATE webhook_deliveries SET next_attempt_at = now() + interval '1 hour' WHERE event_id = $1`, [
        ev.id,
      ]);
      return ev;
    });
    const ds = await deliveriesOf(tenant, `?eventId=${pending.id}`);
    expect(ds.map((x) => x.endpointId)).toEqual([ep.id]);
    const [d] = ds;
    const res = await tenant.api('POST', `/webhook-deliveries/${d.id}/resend`);
    expect(res.statusCode).toBe(409);
    expect(res.json().message).toContain('pending');
    await t.ctx.pool.query(`UPDATE webhook_deliveries SET status = 'failed' WHERE id = $1`, [d.id]);
    await tenant.api('PATCH', `/webhook-endpoints/${ep.id}`, { disabled: true });
    const disabled = await tenant.api('POST', `/webhook-deliveries/${d.id}/resend`);
    expect(disabled.statusCode).toBe(409);
    expect(disabled.json().message).toContain('disabled');
  });
});

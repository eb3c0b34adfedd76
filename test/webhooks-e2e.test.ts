import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BackgroundWorker, startWorker } from '../src/worker.js';
import { harborLightFormation, ok } from './e2e-fixtures.js';
import { createTestApp, type TestApp } from './harness.js';
import { startReceiver, verifyWithStripe, waitFor, type Receiver } from './webhook-receiver.js';

// The main job end to end (TEN-5, FIL-2, EVT-3, EVT-4, WH-2): a formation placed in test mode, advanced through pending
// and exception (465) to filed, with articles uploaded; a real HTTP receiver on localhost must get exactly the events
// that describe it.
let t: TestApp;
let worker: BackgroundWorker;
let r: Receiver;
beforeAll(async () => {
  t = await createTestApp();
  worker = await startWorker(t.ctx);
  r = await startReceiver();
});
afterAll(async () => {
  await worker?.stop();
  await r?.close();
  await t?.close();
});

describe('end to end: formation in test mode to a real webhook receiver', () => {
  it('delivers every status change and the articles, signed, in order of event id', async () => {
    const tenant = await t.newTenant('E2E Platform');
    const endpoint = await ok(
      await tenant.api('POST', '/webhook-endpoints', {
        url: r.url,
        eventTypes: ['filing.status_changed', 'document.uploaded'],
      }),
      201,
    );
    await ok(await tenant.api('POST', '/test_helpers/balance-credits', { amount: 2000 }), 201);
    const user = await ok(
      await tenant.api('POST', '/users', { fullName: 'Grace Hopper', email: 'grace@example.com' }),
      201,
    );
    const placed = await ok(
      await tenant.api('POST', '/orders', harborLightFormation(user.id, ['Harbor Light Holdings LLC'])),
      201,
    );
    expect(placed.items).toHaveLength(1);
    const order = placed.items[0];
    const advance = async (body: Record<string, unknown>) =>
      ok(await tenant.api('POST', `/test_helpers/orders/${order.orderId}/advance`, body), 200);
    await advance({ filingStatus: 'pending' });
    await advance({
      filingStatus: 'exception',
      exceptionCode: '465',
      exceptionMessage: 'Harbor Light Ventures LLC is taken in Delaware',
    });
    await advance({ filingStatus: 'pending' });
    await advance({ filingStatus: 'filed', filingDate: '2025-03-14' });
    const doc = await ok(
      await tenant.api('POST', `/test_helpers/orders/${order.orderId}/documents`, {
        documentType: 'articles_of_organization',
      }),
      201,
    );

    await waitFor('six events at the receiver', () => r.requests.length >= 6);
    await waitFor('every delivery to settle', async () => {
      const list = (await tenant.api('GET', '/webhook-deliveries?limit=100')).json().data;
      return list.length === 6 && list.every((d: { status: string }) => d.status === 'succeeded');
    });
    expect(r.requests).toHaveLength(6);
    for (const req of r.requests) verifyWithStripe(req, endpoint.secret);

    const status = (filingStatus: string, extra: Record<string, unknown> = {}) => ({
      type: 'filing.status_changed',
      data: {
        orderId: order.orderId,
        companyId: placed.companyId,
        orderType: 'formation',
        filingStatus,
        filingDate: null,
        filingType: null,
        subscriptionStatus: null,
        ...extra,
      },
    });
    // Ordering is not promised across retries; with none here, event ids (time-sortable) give the true order.
    const received = r.requests.map((q) => q.event).sort((a, b) => (a.id < b.id ? -1 : 1));
    expect(received.map(({ type, data }) => ({ type, data }))).toEqual([
      status('submitted'),
      status('pending'),
      status('exception', {
        exceptionCode: '465',
        exceptionReason: 'Entity name not available',
        exceptionMessage: 'Harbor Light Ventures LLC is taken in Delaware',
      }),
      status('pending'),
      status('filed', { filingDate: '2025-03-14' }),
      {
        type: 'document.uploaded',
        data: {
          orderId: order.orderId,
          companyId: placed.companyId,
          documentId: doc.documentId,
          documentType: 'articles_of_organization',
          fileName: doc.fileName,
          fileType: 'application/pdf',
          fileUrl: expect.stringMatching(/^https?:\/\//),
          createdAt: doc.createdAt,
        },
      },
    ]);
    for (const e of received) {
      expect(e.id).toMatch(/^evt_/);
      expect(e.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
    expect(new Set(received.map((e) => e.id)).size).toBe(6);
  });
});

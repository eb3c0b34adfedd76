import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AuthenticationError,
  FilingCompliance,
  InsufficientBalanceError,
  InvalidRequestError,
  NotFoundError,
  type Schemas,
  type WebhookEvent,
} from '../sdk/src/index.js';
import { validatorCompiler } from '../src/lib/validation.js';
import { WEBHOOK_EVENT_SCHEMAS } from '../src/modules/webhooks/webhook-payloads.js';
import { type BackgroundWorker, startWorker } from '../src/worker.js';
import { address } from './e2e-fixtures.js';
import { uniqueEmail } from './factories.js';
import { createTestApp, type TestApp, type TestTenant } from './harness.js';
import { baseUrlsOf, listening, sdkClient } from './sdk-helpers.js';
import { startReceiver, verifyWithStripe, waitFor, type Receiver } from './webhook-receiver.js';

/*
 * The main job driven THROUGH THE SDK against the service listening on a real port: every call below goes
 * through the generated operation table and types, so a route whose path, parameters or answer no longer match
 * the SDK fails here. Webhooks reach a real local receiver and are verified with the SDK's constructEvent.
 */

let t: TestApp;
let worker: BackgroundWorker;
let receiver: Receiver;
let origin: string;
let tenant: TestTenant;
beforeAll(async () => {
  t = await createTestApp();
  worker = await startWorker(t.ctx);
  receiver = await startReceiver();
  origin = await listening(t);
  tenant = await t.newTenant('SDK Platform');
});
afterAll(async () => {
  await worker?.stop();
  await receiver?.close();
  await t?.close();
});

const formation = (userId: string, legalName: string): Schemas['OrderRequest'] => ({
  userId,
  filingState: 'DE',
  formation: {
    company: {
      legalName,
      entityType: 'LLC',
      structureType: 'MEMBER',
      principalAddress: address,
      mailingAddress: address,
      officers: [
        { type: 'PERSON', firstName: 'Ada', lastName: 'Lovelace', title: 'Managing Member', address, isPrimary: true },
      ],
    },
  },
  registeredAgent: { isChangeOfAgent: false },
});

describe('the main job through the SDK', () => {
  it('user, formation order (company), advance, document, and webhooks verified with constructEvent', async () => {
    const fc = new FilingCompliance({ apiKey: tenant.keys.test, baseUrls: baseUrlsOf(origin) });
    expect(fc.environment).toBe('test');
    expect(fc.baseUrl).toBe(`${origin}/test/v1`);

    const endpoint = await fc.createWebhookEndpoint({
      url: receiver.url,
      eventTypes: ['filing.status_changed', 'document.uploaded'],
    });
    expect(endpoint.secret).toMatch(/^whsec_/);
    await fc.createTestBalanceCredit({ amount: 2000 });
    const user = await fc.createUser({ fullName: 'Ada Lovelace', email: uniqueEmail('ada') });
    const placed = await fc.createOrder(formation(user.id, 'Analytical Engines LLC'));
    const company = await fc.getCompany({ companyIdOrSlug: placed.companyId });
    expect(company).toMatchObject({ legalName: 'Analytical Engines LLC', slug: 'analytical-engines-llc' });
    expect((await fc.getCompany({ companyIdOrSlug: company.slug })).id).toBe(company.id);
    const order = placed.items.find((i) => i.orderType === 'formation')!;
    const advanced = await fc.advanceTestOrder(
      { orderId: order.orderId },
      { filingStatus: 'filed', filingDate: '2025-03-14' },
    );
    expect(advanced).toMatchObject({ orderId: order.orderId, filingStatus: 'filed', filingDate: '2025-03-14' });
    const document = await fc.createTestDocument(
      { orderId: order.orderId },
      { documentType: 'articles_of_organization' },
    );
    expect(await fc.getDocument({ documentId: document.documentId })).toMatchObject({
      documentId: document.documentId,
      companyId: company.id,
      fileType: 'application/pdf',
    });
    expect((await fc.listDocuments({ companyId: company.id })).data.map((d) => d.documentId)).toEqual([
      document.documentId,
    ]);

    // formation submitted + registered agent submitted, formation filed, the articles.
    await waitFor('four webhooks at the receiver', () => receiver.requests.length >= 4);
    const events: WebhookEvent[] = receiver.requests.map((req) => {
      const event = fc.webhooks.constructEvent(req.rawBody, req.headers['service-signature'], endpoint.secret);
      verifyWithStripe(req, endpoint.secret);
      const matches = validatorCompiler({
        schema: WEBHOOK_EVENT_SCHEMAS[event.type],
        httpPart: 'body',
        method: 'POST',
        url: '/',
      }) as ((v: unknown) => boolean) & { errors?: unknown };
      expect(matches(event), `${event.type} matches the documented payload: ${JSON.stringify(matches.errors)}`).toBe(
        true,
      );
      return event;
    });
    const listed = (await fc.listEvents({ limit: 100 })).data;
    expect(events.map((e) => e.id).sort()).toEqual(listed.map((e) => e.id).sort());
    const filed = events.find(
      (e) => e.type === 'filing.status_changed' && e.data.orderId === order.orderId && e.data.filingStatus === 'filed',
    );
    expect(filed?.type === 'filing.status_changed' && filed.data.filingDate).toBe('2025-03-14');
    const uploaded = events.find((e) => e.type === 'document.uploaded');
    expect(uploaded?.type === 'document.uploaded' && uploaded.data.documentId).toBe(document.documentId);
  });

  it('throws typed errors carrying code, requestId and the bad fields', async () => {
    const fc = sdkClient(origin, tenant.keys.test);
    const missing = await fc
      .getCompany({ companyIdOrSlug: 'comp_01hzzzzzzzzzzzzzzzzzzzzzzz' })
      .catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(NotFoundError);
    expect(missing).toMatchObject({
      status: 404,
      code: 'not_found',
      requestId: expect.stringMatching(/^req_/),
      errors: [],
    });

    const invalid = await fc.createUser({ fullName: 'No Mail', email: 'not-an-email' }).catch((e: unknown) => e);
    expect(invalid).toBeInstanceOf(InvalidRequestError);
    expect(invalid).toMatchObject({
      status: 400,
      code: 'validation_error',
      errors: [{ field: 'email', message: expect.any(String) }],
    });

    const poor = await t.newTenant('Poor Platform');
    const broke = sdkClient(origin, poor.keys.test);
    const user = await broke.createUser({ fullName: 'Ada', email: uniqueEmail() });
    const refused = await broke.createOrder(formation(user.id, 'Penniless LLC')).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(InsufficientBalanceError);
    expect(refused).toMatchObject({ status: 402, code: 'insufficient_balance' });

    // A live key goes to the live address, where the test helpers do not exist.
    const live = sdkClient(origin, tenant.keys.live);
    expect(live.baseUrl).toBe(`${origin}/v1`);
    await expect(live.createTestBalanceCredit({ amount: 5 })).rejects.toBeInstanceOf(NotFoundError);
    const wrongPlace = new FilingCompliance({ apiKey: tenant.keys.live, baseUrls: { live: `${origin}/test/v1` } });
    await expect(wrongPlace.getOrganization()).rejects.toMatchObject({
      code: 'wrong_environment',
      constructor: AuthenticationError,
    });
    expect(() => new FilingCompliance({ apiKey: 'pk_nope' })).toThrow(/sk_live_ or sk_test_/);
  });

  it('sends a new Idempotency-Key on every POST (none on GET), and a given one replays the first answer', async () => {
    const sent: Array<{ method: string; key: string | null }> = [];
    const spying: typeof fetch = async (input, init) => {
      const request = input instanceof Request ? input : new Request(input, init);
      sent.push({ method: request.method, key: request.headers.get('idempotency-key') });
      return fetch(request);
    };
    const fc = new FilingCompliance({ apiKey: tenant.keys.test, baseUrls: baseUrlsOf(origin), fetch: spying });
    const email = uniqueEmail('idem');
    const first = await fc.createUser({ fullName: 'Idem Potent', email }, { idempotencyKey: 'user-create-1' });
    const again = await fc.createUser({ fullName: 'Idem Potent', email }, { idempotencyKey: 'user-create-1' });
    expect(again.id).toBe(first.id);
    await fc.getUser({ userIdOrEmail: email });
    await fc.createTestBalanceCredit({ amount: 1 });
    await fc.createTestBalanceCredit({ amount: 1 });
    expect(sent.map((s) => s.method)).toEqual(['POST', 'POST', 'GET', 'POST', 'POST']);
    expect(sent[0].key).toBe('user-create-1');
    expect(sent[2].key).toBeNull();
    expect(sent[3].key).toMatch(/^[0-9a-f-]{36}$/);
    expect(sent[4].key).toMatch(/^[0-9a-f-]{36}$/);
    expect(sent[3].key).not.toBe(sent[4].key);
  });

  it('iterates every item of a list across pages with for await, newest first, each once', async () => {
    const fresh = await t.newTenant('Pager');
    const fc = sdkClient(origin, fresh.keys.test);
    const created: string[] = [];
    for (let i = 0; i < 5; i++)
      created.push((await fc.createUser({ fullName: `User ${i}`, email: uniqueEmail(`page${i}`) })).id);
    const firstPage = await fc.listUsers({ limit: 2 });
    expect(firstPage).toMatchObject({ object: 'list', hasMore: true });
    expect(firstPage.data.map((u) => u.id)).toEqual([created[4], created[3]]);
    const seen: string[] = [];
    for await (const user of fc.listUsers({ limit: 2 })) seen.push(user.id);
    expect(seen).toEqual([...created].reverse());
    expect((await fc.listUsers({ limit: 2 }).toArray(3)).map((u) => u.id)).toEqual([
      created[4],
      created[3],
      created[2],
    ]);
  });
});

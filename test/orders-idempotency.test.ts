import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp, type TestTenant } from './harness.js';
import { waitFor } from './webhook-receiver.js';
import { sha256 } from '../src/lib/secrets.js';
import { findOrderDetail } from '../src/modules/filings/filings.repo.js';
import { balanceCents, counts, credit, einObject, formationBody, newUser, TEST_SSN } from './orders-fixtures.js';

/* Idempotency-Key on POST requests (IDEM-1 to IDEM-5), shown on POST /orders and one other POST route. */

let t: TestApp;
let tenant: TestTenant;
let userId: string;
beforeAll(async () => {
  t = await createTestApp();
  tenant = await t.newTenant('Idem Org');
  userId = (await newUser(tenant)).id;
  await credit(tenant, 10_000);
});
afterAll(() => t.close());

const withKey = (key: string) => ({ headers: { 'idempotency-key': key } });

/** JSON with object keys sorted at every level: how anyone would canonicalise a request before hashing it. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

describe('Idempotency-Key', () => {
  it('replays the first response for the same key and body: one order, one charge', async () => {
    const body = formationBody(userId, 'DE');
    const first = await tenant.api('POST', '/orders', body, withKey('order-1'));
    expect(first.statusCode, first.body).toBe(201);
    const afterFirst = { balance: await balanceCents(tenant), counts: await counts(t, tenant.organizationId) };
    // The same body with keys in another order is the same request.
    const reordered = Object.fromEntries(Object.entries(body).reverse());
    const second = await tenant.api('POST', '/orders', reordered, withKey('order-1'));
    expect(second.statusCode).toBe(201);
    expect(second.json()).toEqual(first.json());
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(await balanceCents(tenant)).toBe(afterFirst.balance);
    expect(await counts(t, tenant.organizationId)).toEqual(afterFirst.counts);
  });

  it("replays refusals the handler decided on (a 404 for a company that is not the tenant's)", async () => {
    const body = { userId, filingState: 'DE', ein: einObject(), companyId: 'comp_01hzzzzzzzzzzzzzzzzzzzzzzz' };
    const first = await tenant.api('POST', '/orders', body, withKey('bad-1'));
    expect(first.statusCode, first.body).toBe(404);
    const second = await tenant.api('POST', '/orders', body, withKey('bad-1'));
    expect(second.statusCode).toBe(404);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.json()).toEqual(first.json());
    // The body names the first request; the headers name both.
    expect(second.headers['original-request']).toBe(first.json().requestId);
    expect(second.headers['x-request-id']).not.toBe(first.json().requestId);
  });

  it('remembers no validation refusal: the corrected request runs under the same key (IDEM-3)', async () => {
    const refused = await tenant.api(
      'POST',
      '/orders',
      formationBody(userId, 'CA', { formation: { expedited: true } }),
      withKey('fix-1'),
    );
    expect(refused.statusCode).toBe(400);
    expect(refused.json().code).toBe('validation_error');
    const fixed = await tenant.api('POST', '/orders', formationBody(userId, 'CA'), withKey('fix-1'));
    expect(fixed.statusCode, fixed.body).toBe(201);
    expect(fixed.headers['idempotent-replayed']).toBeUndefined();
    const user = await tenant.api('POST', '/users', { fullName: '', email: 'bad' }, withKey('fix-2'));
    expect(user.statusCode).toBe(400);
    const created = await tenant.api(
      'POST',
      '/users',
      { fullName: 'Fixed Name', email: 'fixed.name@example.com' },
      withKey('fix-2'),
    );
    expect(created.statusCode, created.body).toBe(201);
  });

  it('422 idempotency_key_reused for the same key with another body or endpoint', async () => {
    const first = await tenant.api('POST', '/orders', formationBody(userId, 'NV'), withKey('reuse-1'));
    expect(first.statusCode).toBe(201);
    const other = await tenant.api('POST', '/orders', formationBody(userId, 'WY'), withKey('reuse-1'));
    expect(other.statusCode).toBe(422);
    expect(other.json().code).toBe('idempotency_key_reused');
    const otherRoute = await tenant.api('POST', '/orders/quote', formationBody(userId, 'NV'), withKey('reuse-1'));
    expect(otherRoute.statusCode).toBe(422);
  });

  it('409 idempotency_key_in_use while the first request is still running', async () => {
    const body = formationBody(userId, 'AZ');
    // Hold the tenant's balance row so the first request waits inside its transaction.
    const blocker = await t.ctx.pool.connect();
    await blocker.query('BEGIN');
    await blocker.query('SELECT 1 FROM balances WHERE organization_id = $1 AND environment = $2 FOR UPDATE', [
      tenant.organizationId,
      'test',
    ]);
    const firstP = tenant.api('POST', '/orders', body, withKey('slow-1'));
    // Wait until the first request has claimed the key; without the claim the 409 below would test nothing.
    await waitFor(
      'the first request to claim idempotency key slow-1',
      async () => (await t.ctx.pool.query(`SELECT status FROM idempotency_keys WHERE key = 'slow-1'`)).rowCount! > 0,
    );
    const concurrent = await tenant.api('POST', '/orders', body, withKey('slow-1'));
    expect(concurrent.statusCode).toBe(409);
    expect(concurrent.json().code).toBe('idempotency_key_in_use');
    await blocker.query('COMMIT');
    blocker.release();
    const first = await firstP;
    expect(first.statusCode, first.body).toBe(201);
    const replay = await tenant.api('POST', '/orders', body, withKey('slow-1'));
    expect(replay.json()).toEqual(first.json());
  });

  it('a retry after the first request died between its commit and saving its response gets the same orders, charged once', async () => {
    const body = formationBody(userId, 'WY');
    const first = await tenant.api('POST', '/orders', body, withKey('crash-1'));
    expect(first.statusCode, first.body).toBe(201);
    const after = { balance: await balanceCents(tenant), counts: await counts(t, tenant.organizationId) };
    // What a process killed right after COMMIT leaves behind: the key still running, claimed over 5 minutes ago.
    await t.ctx.pool.query(
      `UPDATE idempotency_keys SET status = 'running', response_status = NULL, response_body = NULL, created_at = now() - interval '10 minutes'
        WHERE organization_id = $1 AND key = 'crash-1'`,
      [tenant.organizationId],
    );
    const retry = await tenant.api('POST', '/orders', body, withKey('crash-1'));
    expect(retry.statusCode, retry.body).toBe(201);
    expect(retry.json().companyId).toBe(first.json().companyId);
    expect(retry.json().items.map((i: { orderId: string }) => i.orderId)).toEqual(
      first.json().items.map((i: { orderId: string }) => i.orderId),
    );
    expect(await balanceCents(tenant)).toBe(after.balance);
    expect(await counts(t, tenant.organizationId)).toEqual(after.counts);
  });

  it('keys are per organization: another organization may use the same key', async () => {
    const body = formationBody(userId, 'FL');
    const a = await tenant.api('POST', '/orders/quote', body, withKey('shared-key'));
    expect(a.statusCode).toBe(200);
    const other = await t.newTenant();
    const otherUser = await newUser(other);
    const b = await other.api('POST', '/orders/quote', formationBody(otherUser.id, 'FL'), withKey('shared-key'));
    expect(b.statusCode).toBe(200);
    expect(b.headers['idempotent-replayed']).toBeUndefined();
  });

  it('a key used at /test/v1 is new at /v1: the same key and body create a live user, not a replay (IDEM-1, TEN-6)', async () => {
    const body = { fullName: 'Grace Hopper', email: `grace.${Date.now().toString(36)}@example.com` };
    const test = await tenant.api('POST', '/users', body, withKey('both-envs-user'));
    expect(test.statusCode, test.body).toBe(201);
    const live = await tenant.api('POST', '/users', body, { env: 'live', ...withKey('both-envs-user') });
    expect(live.statusCode, live.body).toBe(201);
    expect(live.headers['idempotent-replayed']).toBeUndefined();
    expect(live.json().id).not.toBe(test.json().id);
    expect((await tenant.api('GET', `/users/${live.json().id}`, undefined, { env: 'live' })).statusCode).toBe(200);
    // At /v1 the key is now the live request's: a retry there replays it.
    const again = await tenant.api('POST', '/users', body, { env: 'live', ...withKey('both-envs-user') });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(live.json());
  });

  it('a key used for an order at /test/v1 places the live order at /v1 and charges the live balance (IDEM-1, IDEM-5)', async () => {
    // Users belong to one environment (TEN-3), so the live request names the live user; the rest of the body and
    // the key are the same.
    const liveUser = await newUser(tenant, 'live');
    const credited = await t.admin('POST', `/organizations/${tenant.organizationId}/balance-credits`, {
      environment: 'live',
      amount: 2_000,
    });
    expect(credited.statusCode, credited.body).toBe(201);
    const key = withKey('both-envs-order');
    const testBefore = await balanceCents(tenant);
    const test = await tenant.api('POST', '/orders', formationBody(userId, 'WY'), key);
    expect(test.statusCode, test.body).toBe(201);
    const testCharge = testBefore - (await balanceCents(tenant));
    expect(testCharge).toBeGreaterThan(0);

    const testAfter = await balanceCents(tenant);
    const liveBefore = await balanceCents(tenant, 'live');
    const live = await tenant.api('POST', '/orders', formationBody(liveUser.id, 'WY'), { env: 'live', ...key });
    expect(live.statusCode, live.body).toBe(201);
    expect(live.headers['idempotent-replayed']).toBeUndefined();
    const liveIds = live.json().items.map((i: { orderId: string }) => i.orderId);
    const testIds = test.json().items.map((i: { orderId: string }) => i.orderId);
    expect(liveIds.filter((id: string) => testIds.includes(id))).toEqual([]);
    expect(live.json().companyId).not.toBe(test.json().companyId);
    // The live balance pays exactly the live order's items (the same formation costs the same in both), and the test
    // balance nothing more.
    const liveItemsCents = live
      .json()
      .items.reduce((sum: number, i: { amount: number }) => sum + Math.round(i.amount * 100), 0);
    expect(liveItemsCents).toBe(testCharge);
    expect(liveBefore - (await balanceCents(tenant, 'live'))).toBe(liveItemsCents);
    expect(await balanceCents(tenant)).toBe(testAfter);
    const { rows } = await t.ctx.pool.query(
      `SELECT environment, count(*)::int AS n FROM order_groups WHERE organization_id = $1 AND idempotency_key = $2
        GROUP BY environment ORDER BY environment`,
      [tenant.organizationId, 'both-envs-order'],
    );
    expect(rows).toEqual([
      { environment: 'live', n: 1 },
      { environment: 'test', n: 1 },
    ]);
  });

  it('does not remember 5xx answers: a retry runs again', async () => {
    const body = formationBody(userId, 'NY');
    // Make the first attempt fail inside its transaction with an internal error (a constraint the insert breaks).
    await t.ctx.pool.query(`ALTER TABLE order_groups ADD CONSTRAINT temp_fail CHECK (filing_state <> 'NY') NOT VALID`);
    const first = await tenant.api('POST', '/orders', body, withKey('fail-1'));
    await t.ctx.pool.query('ALTER TABLE order_groups DROP CONSTRAINT temp_fail');
    expect(first.statusCode).toBe(500);
    const second = await tenant.api('POST', '/orders', body, withKey('fail-1'));
    expect(second.statusCode, second.body).toBe(201);
    expect(second.headers['idempotent-replayed']).toBeUndefined();
  });

  it('does not remember a 402: after adding funds the same key and body place the order, once', async () => {
    const broke = await t.newTenant('Idem Broke Org');
    const brokeUser = await newUser(broke);
    const body = formationBody(brokeUser.id, 'DE');
    const refused = await broke.api('POST', '/orders', body, withKey('topup-1'));
    expect(refused.statusCode, refused.body).toBe(402);
    const again = await broke.api('POST', '/orders', body, withKey('topup-1'));
    expect(again.statusCode).toBe(402);
    expect(again.headers['idempotent-replayed']).toBeUndefined();

    await credit(broke, 1_000);
    const placed = await broke.api('POST', '/orders', body, withKey('topup-1'));
    expect(placed.statusCode, placed.body).toBe(201);
    expect(placed.headers['idempotent-replayed']).toBeUndefined();
    const charged = await balanceCents(broke);
    expect(charged).toBeLessThan(100_000);
    const replayed = await broke.api('POST', '/orders', body, withKey('topup-1'));
    expect(replayed.statusCode).toBe(201);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(replayed.json()).toEqual(placed.json());
    expect(await balanceCents(broke)).toBe(charged);
  });

  it('without the header nothing is remembered; a key longer than 255 characters is refused', async () => {
    const body = formationBody(userId, 'DE');
    const a = await tenant.api('POST', '/orders/quote', body);
    const b = await tenant.api('POST', '/orders/quote', body);
    expect(a.statusCode).toBe(200);
    expect(b.headers['idempotent-replayed']).toBeUndefined();
    const long = await tenant.api('POST', '/orders/quote', body, withKey('k'.repeat(256)));
    expect(long.statusCode).toBe(400);
  });

  it("keeps nothing from which the EIN responsible party's SSN could be recovered by guessing", async () => {
    // Someone who can read the database has the stored request (the SSN reduced to its last four digits) and
    // idempotency_keys.request_hash. An unkeyed hash of the request would confirm a guessed SSN in 10^5 tries.
    const first = await tenant.api(
      'POST',
      '/orders',
      formationBody(userId, 'WY', { extra: { ein: einObject() } }),
      withKey('ein-ssn-1'),
    );
    expect(first.statusCode, first.body).toBe(201);
    // The request as kept, or put together again from the orders when the group keeps no copy (ORD-19).
    const detail = await findOrderDetail(t.ctx.pool, first.json().items[0].orderId);
    const group = { request: detail!.group_request as { ein: { responsibleParty: Record<string, unknown> } } };
    const {
      rows: [key],
    } = await t.ctx.pool.query('SELECT request_hash FROM idempotency_keys WHERE key = $1', ['ein-ssn-1']);
    expect(JSON.stringify(group.request)).not.toContain(TEST_SSN);
    const { taxIdLast4, ...party } = group.request.ein.responsibleParty;
    expect(taxIdLast4).toBe(TEST_SSN.slice(-4));
    const guess = { ...group.request, ein: { ...group.request.ein, responsibleParty: { ...party, taxId: TEST_SSN } } };
    for (const route of ['/test/v1/orders', '/orders']) {
      expect(sha256(canonical({ route, params: {}, body: guess }))).not.toBe(key.request_hash);
    }
    // The key still does its job.
    const retry = await tenant.api(
      'POST',
      '/orders',
      formationBody(userId, 'WY', { extra: { ein: einObject() } }),
      withKey('ein-ssn-1'),
    );
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.json()).toEqual(first.json());
  });

  it('applies to other POST routes (POST /users)', async () => {
    const payload = { fullName: 'Idem User', email: `idem.${Date.now()}@example.com` };
    const first = await tenant.api('POST', '/users', payload, withKey('user-1'));
    expect(first.statusCode).toBe(201);
    const second = await tenant.api('POST', '/users', payload, withKey('user-1'));
    expect(second.statusCode).toBe(201);
    expect(second.json().id).toBe(first.json().id);
  });

  it('is documented in OpenAPI on POST routes', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    const params = doc.paths['/orders'].post.parameters as Array<{ in: string; name: string }>;
    expect(params.some((p) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key')).toBe(true);
  });
});

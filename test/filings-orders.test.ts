import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp, type TestTenant } from './harness.js';
import { balanceCents, credit, einObject, formationBody, newUser, toCents } from './orders-fixtures.js';

/*
 * The filing pipeline on orders placed through POST /orders (FIL-2, FIL-6 to FIL-8, TEN-5, EVT-3): test-helper moves,
 * the cancellation reversal seen through the public balance and ledger, and the company fields a filing sets.
 */

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

interface Item {
  orderId: string;
  orderType: string;
  amount: number;
  filingStatus: string;
  subscriptionStatus: string | null;
}

async function placeBundle(): Promise<{ tenant: TestTenant; companyId: string; items: Record<string, Item> }> {
  const tenant = await t.newTenant();
  await credit(tenant, 5_000);
  const user = await newUser(tenant);
  const body = formationBody(user.id, 'DE', {
    extra: { ein: einObject(), registeredAgent: { isChangeOfAgent: false } },
  });
  delete (body.formation as Record<string, unknown>).registeredAgent;
  const res = await tenant.api('POST', '/orders', body);
  expect(res.statusCode, res.body).toBe(201);
  const items = Object.fromEntries((res.json().items as Item[]).map((i) => [i.orderType, i]));
  return { tenant, companyId: res.json().companyId, items };
}

const advance = (tenant: TestTenant, orderId: string, body: Record<string, unknown>) =>
  tenant.api('POST', `/test_helpers/orders/${orderId}/advance`, body);

describe('filings of orders placed through the API', () => {
  it('cancelling a balance-billed order gives its whole debit back as reversal entries', async () => {
    const { tenant, items } = await placeBundle();
    const formation = items.formation;
    const before = await balanceCents(tenant);
    const res = await advance(tenant, formation.orderId, { filingStatus: 'cancelled' });
    expect(res.statusCode).toBe(200);
    expect(await balanceCents(tenant)).toBe(before + toCents(formation.amount));

    const ledger = (await tenant.api('GET', '/balance-transactions?limit=100')).json().data as Array<{
      id: string;
      type: string;
      amount: number;
      orderId: string;
      reversesTransactionId: string | null;
    }>;
    const debits = ledger.filter((e) => e.orderId === formation.orderId && e.type === 'debit');
    const reversals = ledger.filter((e) => e.orderId === formation.orderId && e.type === 'reversal');
    expect(reversals.map((r) => [r.reversesTransactionId, r.amount]).sort()).toEqual(
      debits.map((d) => [d.id, -d.amount]).sort(),
    );
    // The other orders of the request keep their debits.
    expect(ledger.filter((e) => e.orderId !== formation.orderId && e.type === 'reversal')).toEqual([]);
  });

  it('cancelling the registered agent subscription reports subscriptionStatus canceled', async () => {
    const { tenant, items } = await placeBundle();
    expect(items.registered_agent.subscriptionStatus).toBe('active');
    const res = await advance(tenant, items.registered_agent.orderId, { filingStatus: 'cancelled' });
    expect(res.json()).toMatchObject({ filingStatus: 'cancelled', subscriptionStatus: 'canceled' });
  });

  it('a filed formation dates the company and a filed EIN order gives it an EIN', async () => {
    const { tenant, companyId, items } = await placeBundle();
    await advance(tenant, items.formation.orderId, { filingStatus: 'pending' });
    await advance(tenant, items.formation.orderId, { filingStatus: 'filed', filingDate: '2025-03-04' });
    await advance(tenant, items.ein.orderId, { filingStatus: 'filed' });
    const company = (await tenant.api('GET', `/companies/${companyId}`)).json();
    expect(company).toMatchObject({
      formationDate: '2025-03-04',
      formationState: 'DE',
      ein: expect.stringMatching(/^00-\d{7}$/),
    });
    const again = await advance(tenant, items.formation.orderId, { filingStatus: 'cancelled' });
    expect(again.statusCode).toBe(409);
  });

  it('FIL-13: an EIN paid by its formation cannot be filed once that formation is cancelled, and can be cancelled', async () => {
    const { tenant, companyId, items } = await placeBundle();
    expect(items.ein.amount).toBe(0);
    expect((await advance(tenant, items.formation.orderId, { filingStatus: 'cancelled' })).statusCode).toBe(200);
    expect((await advance(tenant, items.ein.orderId, { filingStatus: 'pending' })).statusCode).toBe(200);

    const filed = await advance(tenant, items.ein.orderId, { filingStatus: 'filed' });
    expect(filed.statusCode, filed.body).toBe(409);
    expect(filed.json().code).toBe('invalid_transition');
    expect(filed.json().message).toContain(items.ein.orderId);
    expect((await tenant.api('GET', `/companies/${companyId}`)).json().ein).toBeNull();

    expect((await advance(tenant, items.ein.orderId, { filingStatus: 'cancelled' })).statusCode).toBe(200);
  });

  it('emits one filing.status_changed per move, after the submitted one of POST /orders', async () => {
    const { tenant, items } = await placeBundle();
    const id = items.formation.orderId;
    await advance(tenant, id, { filingStatus: 'pending' });
    await advance(tenant, id, {
      filingStatus: 'exception',
      exceptionCode: '465',
      exceptionMessage: 'Name not available',
    });
    await advance(tenant, id, { filingStatus: 'pending' });
    await advance(tenant, id, { filingStatus: 'filed' });
    const events = (await tenant.api('GET', `/events?orderId=${id}`)).json().data.reverse();
    expect(events.map((e: { data: { filingStatus: string } }) => e.data.filingStatus)).toEqual([
      'submitted',
      'pending',
      'exception',
      'pending',
      'filed',
    ]);
    expect(events[2].data).toMatchObject({
      exceptionCode: '465',
      exceptionReason: 'Entity name not available',
      exceptionMessage: 'Name not available',
    });
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findOrderDetail } from '../src/modules/filings/filings.repo.js';
import { requestToKeep, sameJson } from '../src/modules/orders/placed-request.js';
import { createTestApp, type TestApp, type TestTenant } from './harness.js';
import { credit, einObject, formationCompany, newUser } from './orders-fixtures.js';

// ORD-19 (with ORD-12): an order group keeps no copy of a request its orders give back exactly; readers still see
// the whole request.

let t: TestApp;
let tenant: TestTenant;
let userId: string;
beforeAll(async () => {
  t = await createTestApp();
  tenant = await t.newTenant();
  await credit(tenant, 10_000);
  userId = (await newUser(tenant)).id;
});
afterAll(() => t.close());

/** A formation + ein + registeredAgent body, as the bench places them. */
function explicitBody(name: string) {
  return {
    userId,
    filingState: 'DE',
    formation: { company: formationCompany('LLC', { legalName: name }), expedited: false },
    ein: einObject(),
    registeredAgent: { isChangeOfAgent: false },
  };
}

/** The request as ORD-12 keeps it: the EIN responsible party's tax id reduced to its last four digits. */
function asKept(body: ReturnType<typeof explicitBody>) {
  const { taxId: _, ...party } = body.ein.responsibleParty;
  return { ...body, ein: { ...body.ein, responsibleParty: { ...party, taxIdLast4: '6789' } } };
}

async function place(body: Record<string, unknown>) {
  const res = await tenant.api('POST', '/orders', body);
  expect(res.statusCode, res.body).toBe(201);
  const orderId: string = res.json().items[0].orderId;
  const { rows } = await t.ctx.pool.query(
    'SELECT g.request FROM order_groups g JOIN orders o ON o.group_id = g.id WHERE o.id = $1',
    [orderId],
  );
  return { orderId, kept: rows[0].request as Record<string, unknown> | null };
}

describe('the request an order group keeps', () => {
  it('keeps no copy when the orders give it back, and the order page still shows the whole request', async () => {
    const body = explicitBody('Kept Nothing LLC');
    const { orderId, kept } = await place(body);
    expect(kept).toBeNull();
    const shown = (await findOrderDetail(t.ctx.pool, orderId))!.group_request;
    expect(shown).toMatchObject(asKept(body));
    expect(JSON.stringify(shown)).not.toContain('"taxId"');
  });

  it('puts back companyId for an order on an existing company', async () => {
    const body = { userId, filingState: 'DE', companyId: await formedCompany(), annualReport: { filingYear: 2026 } };
    const { orderId, kept } = await place(body);
    expect(kept).toBeNull();
    expect((await findOrderDetail(t.ctx.pool, orderId))!.group_request).toEqual(body);
  });

  it('keeps the request whole when its orders carry more (the filing year the placement chose)', async () => {
    const body = { userId, filingState: 'DE', companyId: await formedCompany(), annualReport: {} };
    const { orderId, kept } = await place(body);
    expect(kept).toEqual(body);
    expect((await findOrderDetail(t.ctx.pool, orderId))!.group_request).toEqual(body);
  });
});

async function formedCompany(): Promise<string> {
  const formed = await tenant.api('POST', '/orders', explicitBody(`Existing ${Date.now()} LLC`));
  expect(formed.statusCode, formed.body).toBe(201);
  return formed.json().companyId;
}

describe('requestToKeep', () => {
  const group = { userId: 'user_1', filingState: 'DE', companyId: 'comp_1', formsCompany: true };
  const formation = { company: { legalName: 'A LLC' }, expedited: false };

  it('drops only what the placement added, and keeps a request that differs in anything else', () => {
    const orders = [{ orderType: 'formation', details: { ...formation, formationTier: 1 } }];
    const request = { userId: 'user_1', filingState: 'DE', formation };
    expect(requestToKeep(request, group, orders)).toBeNull();
    const told = { ...request, formation: { ...formation, formationTier: 1 } };
    expect(requestToKeep(told, group, orders)).toBe(told);
    const otherState = { ...request, filingState: 'WY' };
    expect(requestToKeep(otherState, group, orders)).toBe(otherState);
    const withCompany = { ...request, companyId: 'comp_1' };
    expect(requestToKeep(withCompany, group, orders)).toBe(withCompany);
  });

  it("drops a foreign qualification's agentSource, which the placement adds, and nothing else of it", () => {
    const onCompany = { ...group, formsCompany: false };
    const fq = { registeredAgent: { type: 'PERSON', firstName: 'Grace' } };
    const orders = [{ orderType: 'foreign_qualification', details: { ...fq, agentSource: 'supplied' } }];
    const request = { userId: 'user_1', filingState: 'DE', companyId: 'comp_1', foreignQualification: fq };
    expect(requestToKeep(request, onCompany, orders)).toBeNull();
    const withSource = { ...request, foreignQualification: { ...fq, agentSource: 'supplied' } };
    expect(requestToKeep(withSource, onCompany, orders)).toBe(withSource);
  });

  it('compares as JSON: key order does not count, undefined is absent, arrays keep their order', () => {
    expect(sameJson({ a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 2 }], a: 1 })).toBe(true);
    expect(sameJson({ a: 1, b: undefined }, { a: 1 })).toBe(true);
    expect(sameJson({ a: 1 }, { a: 1, b: null })).toBe(false);
    expect(sameJson([1, 2], [2, 1])).toBe(false);
    expect(sameJson({ a: [] }, { a: {} })).toBe(false);
    expect(sameJson({ a: '1' }, { a: 1 })).toBe(false);
  });
});

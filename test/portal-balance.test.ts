import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from './factories.js';
import { createTestApp, type TestApp, type TestTenant } from './harness.js';
import { credit, formationBody } from './orders-fixtures.js';
import { memberSession } from './portal-helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

interface Txn {
  id: string;
  type: string;
  amount: number;
  balanceAfter: number;
  lineType: string | null;
  description: string;
  orderId: string | null;
  createdAt: string;
}

/** Every balance transaction of the tenant's environment through the API, newest first. */
async function apiLedger(tenant: TestTenant, env: 'test' | 'live' = 'test'): Promise<Txn[]> {
  const out: Txn[] = [];
  let after = '';
  for (;;) {
    const res = await tenant.api(
      'GET',
      `/balance-transactions?limit=100${after ? `&startingAfter=${after}` : ''}`,
      undefined,
      {
        env,
      },
    );
    const page = res.json<{ data: Txn[]; hasMore: boolean }>();
    out.push(...page.data);
    if (!page.hasMore) return out;
    after = page.data.at(-1)!.id;
  }
}

/** Parses the CSV export (RFC 4180, CRLF) into records keyed by the header. */
function parseCsv(text: string): Array<Record<string, string>> {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted && c === '"' && text[i + 1] === '"') {
      cell += '"';
      i++;
    } else if (quoted && c === '"') quoted = false;
    else if (quoted) cell += c;
    else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(cell);
      cell = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      i++;
    } else cell += c;
  }
  const [header, ...body] = rows;
  return body.map((r) => Object.fromEntries(header!.map((h, i) => [h, r[i] ?? ''])));
}

const entriesOf = (html: string) => [...html.matchAll(/<tr data-entry="(txn_[a-z0-9]+)">/g)].map((m) => m[1]!);

describe('portal balance', () => {
  it('shows the balance and the ledger of the session’s environment, filtered by type and dates', async () => {
    const tenant = await t.newTenant('Ledger Co');
    await credit(tenant, 1000);
    await credit(tenant, 250.5);
    const user = await createUser(tenant);
    expect((await tenant.api('POST', '/orders', formationBody(user.id, 'DE'))).statusCode).toBe(201);
    await t.admin('POST', `/organizations/${tenant.organizationId}/balance-credits`, {
      environment: 'live',
      amount: 77,
    });
    const ledger = await apiLedger(tenant);
    const balance = (await tenant.api('GET', '/organization')).json().balance as number;

    const { client } = await memberSession(t, tenant.organizationId, 'admin');
    const page = await client.get('/portal/balance');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(
      `<dd data-balance>$${balance.toLocaleString('en-US', { minimumFractionDigits: 2 })}</dd>`,
    );
    expect(entriesOf(page.body)).toEqual(ledger.map((e) => e.id));
    expect(page.body).not.toContain('$77.00');

    const credits = ledger.filter((e) => e.type === 'credit').map((e) => e.id);
    const debits = ledger.filter((e) => e.type === 'debit').map((e) => e.id);
    expect(debits.length).toBeGreaterThan(0);
    expect(entriesOf((await client.get('/portal/balance?type=credit')).body)).toEqual(credits);
    expect(entriesOf((await client.get('/portal/balance?type=debit')).body)).toEqual(debits);
    const today = new Date().toISOString().slice(0, 10);
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    expect(entriesOf((await client.get(`/portal/balance?from=${today}&to=${today}`)).body)).toHaveLength(ledger.length);
    expect(entriesOf((await client.get(`/portal/balance?from=${tomorrow}`)).body)).toEqual([]);
    const backwards = await client.get(`/portal/balance?from=${tomorrow}&to=${today}`);
    expect(backwards.body).toContain('to: must not be before the start date');
  });

  it('pages the ledger with a cursor and exports exactly the filtered ledger as CSV, in dollars', async () => {
    const tenant = await t.newTenant('Export Co');
    for (let i = 1; i <= 52; i++) await credit(tenant, i + 0.25);
    const user = await createUser(tenant);
    expect((await tenant.api('POST', '/orders', formationBody(user.id, 'WY'))).statusCode).toBe(201);
    const ledger = await apiLedger(tenant);
    const { client } = await memberSession(t, tenant.organizationId, 'owner');

    const first = await client.get('/portal/balance');
    const next = /href="(\/portal\/balance\?after=txn_[a-z0-9]+)" rel="next"/.exec(first.body)![1]!;
    const second = await client.get(next);
    expect([...entriesOf(first.body), ...entriesOf(second.body)]).toEqual(ledger.map((e) => e.id));

    const csv = await client.get('/portal/balance/ledger.csv');
    expect(csv.statusCode).toBe(200);
    expect(csv.headers['content-type']).toContain('text/csv');
    expect(csv.headers['content-disposition']).toMatch(/^attachment; filename="ledger-test-\d{4}-\d{2}-\d{2}\.csv"$/);
    const rows = parseCsv(csv.body);
    expect(rows).toEqual(
      ledger.map((e) => ({
        id: e.id,
        createdAt: e.createdAt,
        type: e.type,
        lineType: e.lineType ?? '',
        description: e.description,
        orderId: e.orderId ?? '',
        reversesTransactionId: '',
        amount: e.amount.toFixed(2),
        balanceAfter: e.balanceAfter.toFixed(2),
        currency: 'USD',
      })),
    );
    const debitsCsv = parseCsv((await client.get('/portal/balance/ledger.csv?type=debit')).body);
    expect(debitsCsv.map((r) => r.id)).toEqual(ledger.filter((e) => e.type === 'debit').map((e) => e.id));
    expect(debitsCsv.every((r) => r.amount!.startsWith('-'))).toBe(true);
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    expect(parseCsv((await client.get(`/portal/balance/ledger.csv?from=${tomorrow}`)).body)).toEqual([]);
    expect((await client.get('/portal/balance/ledger.csv?from=yesterday')).statusCode).toBe(400);
  });

  it('shows only the session’s organization and environment: other ledgers never appear', async () => {
    const mine = await t.newTenant('Own Ledger Co');
    const theirs = await t.newTenant('Their Ledger Co');
    await credit(mine, 10);
    await credit(theirs, 20);
    await t.admin('POST', `/organizations/${mine.organizationId}/balance-credits`, { environment: 'live', amount: 30 });
    const [theirEntry] = await apiLedger(theirs);
    const [liveEntry] = await apiLedger(mine, 'live');
    const { client } = await memberSession(t, mine.organizationId, 'owner');
    const page = await client.get('/portal/balance');
    expect(entriesOf(page.body)).toEqual((await apiLedger(mine)).map((e) => e.id));
    const csv = (await client.get('/portal/balance/ledger.csv')).body;
    expect(csv).not.toContain(theirEntry!.id);
    expect(csv).not.toContain(liveEntry!.id);
    expect(entriesOf((await client.get(`/portal/balance?after=${theirEntry!.id}`)).body)).toEqual([]);
    await client.get('/portal/');
    await client.post('/portal/environment', { _csrf: client.csrf(), environment: 'live' });
    expect(entriesOf((await client.get('/portal/balance')).body)).toEqual([liveEntry!.id]);
    expect(parseCsv((await client.get('/portal/balance/ledger.csv')).body).map((r) => r.id)).toEqual([liveEntry!.id]);
  });

  it('refuses the balance, its export and the prices to developers and viewers', async () => {
    const tenant = await t.newTenant('No Billing Co');
    await credit(tenant, 10);
    for (const role of ['developer', 'viewer'] as const) {
      const { client } = await memberSession(t, tenant.organizationId, role);
      const home = await client.get('/portal/');
      for (const path of ['/portal/balance', '/portal/balance/ledger.csv', '/portal/prices']) {
        const res = await client.get(path);
        expect(res.statusCode, `${role} ${path}`).toBe(403);
        expect(res.body).toContain(`Your role (${role})`);
        expect(res.body).not.toContain('$10.00');
      }
      expect(home.body).not.toContain('href="/portal/balance"');
      const change = await client.post('/portal/prices/formation_tier_1', {
        _csrf: client.csrf(),
        retailAmount: '999',
      });
      expect(change.statusCode).toBe(403);
      const revert = await client.post('/portal/prices/formation_tier_1/revert', { _csrf: client.csrf() });
      expect(revert.statusCode).toBe(403);
    }
    const prices = await tenant.api('GET', '/organization/prices');
    expect(prices.json().data.every((p: { retailAmount: number | null }) => p.retailAmount === null)).toBe(true);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTransaction } from '../src/lib/db.js';
import { emitEvent } from '../src/modules/events/events.service.js';
import { consoleClient, newOperator, signIn, type ConsoleClient } from './console-helpers.js';
import { createUser } from './factories.js';
import { createTestApp, type TestApp, type TestTenant } from './harness.js';
import { balanceCents, einObject, formationBody, formationCompany, TEST_SSN } from './orders-fixtures.js';

// CONS-2 to CONS-4 without a browser: the queue, the order page and guarded actions over HTTP.
let t: TestApp;
let c: ConsoleClient;
let operator: Awaited<ReturnType<typeof newOperator>>;
let tenant: TestTenant;

beforeAll(async () => {
  t = await createTestApp();
  operator = await newOperator(t.ctx.pool, 'Ada Admin');
  c = consoleClient(t.app);
  await signIn(c, operator.email, operator.password);
  tenant = await t.newTenant('Queue Platform');
  for (const environment of ['live', 'test']) {
    const res = await t.admin('POST', `/organizations/${tenant.organizationId}/balance-credits`, {
      environment,
      amount: 5000,
      note: 'float',
    });
    expect(res.statusCode, res.body).toBe(201);
  }
});
afterAll(() => t.close());

async function placeFormation(env: 'live' | 'test', state = 'DE', extra: Record<string, unknown> = {}) {
  const user = await createUser(tenant, env);
  const res = await tenant.api('POST', '/orders', formationBody(user.id, state, { extra }), { env });
  expect(res.statusCode, res.body).toBe(201);
  return res.json<{ companyId: string; items: Array<{ orderId: string; orderType: string }> }>();
}

const statusOf = async (orderId: string) =>
  (await t.ctx.pool.query('SELECT filing_status FROM orders WHERE id = $1', [orderId])).rows[0].filing_status;
const flashOf = (res: { headers: Record<string, unknown> }) => {
  const cookie = ([] as string[])
    .concat((res.headers['set-cookie'] as string[]) ?? [])
    .find((s) => s.startsWith('fcs_console_flash='));
  return cookie ? JSON.parse(Buffer.from(cookie.split(';')[0].split('=')[1], 'base64url').toString()) : null;
};

describe('work queue', () => {
  it('lists live orders oldest first by default, test orders only on the test switch, and filters', async () => {
    const first = (await placeFormation('live', 'DE')).items[0].orderId;
    const second = (await placeFormation('live', 'WY')).items[0].orderId;
    const testOrder = (await placeFormation('test', 'DE')).items[0].orderId;

    const live = (await c.get('/console/queue')).body;
    expect(live.indexOf(first)).toBeGreaterThan(0);
    expect(live.indexOf(second)).toBeGreaterThan(live.indexOf(first));
    expect(live).not.toContain(testOrder);
    expect((await c.get('/console/queue?environment=test')).body).toContain(testOrder);

    const wy = (await c.get('/console/queue?state=WY')).body;
    expect(wy).toContain(second);
    expect(wy).not.toContain(first);
    expect(
      (await c.get(`/console/queue?organizationId=${tenant.organizationId}&orderType=formation&status=submitted`)).body,
    ).toContain(first);
    expect((await c.get('/console/queue?status=exception')).body).not.toContain(first);
  });

  it('searches by order id, company id or a piece of the legal name, alone or with other filters', async () => {
    const user = await createUser(tenant, 'live');
    const named = await tenant.api(
      'POST',
      '/orders',
      formationBody(user.id, 'NV', {
        formation: { company: formationCompany('LLC', { legalName: 'Zephyr Quill 50% Holdings LLC' }) },
      }),
      { env: 'live' },
    );
    expect(named.statusCode, named.body).toBe(201);
    const orderId = named.json().items[0].orderId;
    const other = (await placeFormation('live', 'NV')).items[0].orderId;
    for (const query of [
      'q=zephyr%20quill',
      'q=Quill&state=NV',
      `q=Quill&orderType=formation&organizationId=${tenant.organizationId}`,
      `q=${orderId}`,
      `q=${named.json().companyId}&status=submitted`,
    ]) {
      const res = await c.get(`/console/queue?${query}`);
      expect(res.statusCode, query).toBe(200);
      expect(res.body, query).toContain(orderId);
      expect(res.body, query).not.toContain(other);
    }
    // LIKE wildcards typed in the search are taken literally.
    const percent = await c.get('/console/queue?q=50%25%20Hold');
    expect(percent.body).toContain(orderId);
    expect((await c.get('/console/queue?q=%25')).body).not.toContain(other);
  });

  it('says which filters of the address it could not apply, instead of silently listing more', async () => {
    const res = await c.get('/console/queue?status=filed&organizationId=garbage');
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain(
      'Not applied (not a value the queue filters by): status &quot;filed&quot;, organization',
    );
    expect((await c.get('/console/queue?status=pending')).body).not.toContain('Not applied');
  });

  it('answers any page number without an error page', async () => {
    for (const page of ['2', '99999999999999999999999', '9'.repeat(400), '-3', 'x']) {
      const res = await c.get(`/console/queue?page=${page}`);
      expect(res.statusCode, `page=${page.slice(0, 12)}`).toBe(200);
    }
  });
});

describe('order page', () => {
  it('shows the EIN answers with the SSN masked', async () => {
    const placed = await placeFormation('live', 'DE', { ein: einObject() });
    const ein = placed.items.find((i) => i.orderType === 'ein')!;
    const page = (await c.get(`/console/orders/${ein.orderId}`)).body;
    expect(page).toContain('responsibleParty.lastName');
    expect(page).toContain('Handmade furniture');
    expect(page).toContain('6789');
    expect(page).not.toContain(TEST_SSN);
    expect(page).not.toContain(TEST_SSN.replace(/-/g, ''));
    // The kind of number is no secret: the whole request shows it, only the number is masked.
    expect(page).toMatch(/taxIdType&quot;: &quot;SSN&quot;/);
  });

  it('FIL-13: withholds filing an EIN whose bundled formation is cancelled, on the page and at review', async () => {
    const placed = await placeFormation('live', 'DE', { ein: einObject() });
    const formation = placed.items.find((i) => i.orderType === 'formation')!;
    const ein = placed.items.find((i) => i.orderType === 'ein')!;
    expect(
      (await t.admin('POST', `/orders/${formation.orderId}/transitions`, { filingStatus: 'cancelled' })).statusCode,
    ).toBe(200);
    const page = (await c.get(`/console/orders/${ein.orderId}`)).body;
    expect(page).not.toContain('<h3>Mark filed</h3>');
    expect(page).toContain('was ordered with a formation that is cancelled');
    const review = await c.post(`/console/orders/${ein.orderId}/review`, {
      _csrf: c.csrf(),
      action: 'filed',
      filingDate: new Date().toISOString().slice(0, 10),
      ein: '12-7654321',
    });
    expect(flashOf(review)).toMatchObject({ kind: 'error', text: expect.stringContaining('cannot be filed') });
    expect(await statusOf(ein.orderId)).toBe('submitted');
  });

  it('ORD-RA-6: flags the details a supplied agent lacks, for the filing team to ask for', async () => {
    const user = await createUser(tenant, 'live');
    const res = await tenant.api(
      'POST',
      '/orders',
      formationBody(user.id, 'DE', { formation: { registeredAgent: { type: 'PERSON', lastName: 'Hopper' } } }),
      { env: 'live' },
    );
    expect(res.statusCode, res.body).toBe(201);
    const formation = res.json().items.find((i: { orderType: string }) => i.orderType === 'formation');
    const page = (await c.get(`/console/orders/${formation.orderId}`)).body;
    expect(page).toContain('Details missing: firstName, addressStreet, addressCity, addressState, addressZip');
    expect(page).toContain('exception 469');

    const complete = await placeFormation('live');
    const full = complete.items.find((i) => i.orderType === 'formation')!;
    expect((await c.get(`/console/orders/${full.orderId}`)).body).not.toContain('Details missing');
  });

  it('answers 404 for an unknown order', async () => {
    const res = await c.get('/console/orders/order_01doesnotexist000000000000');
    expect(res.statusCode).toBe(404);
    expect(res.body).toContain('Not found');
  });
});

describe('order actions', () => {
  it('does nothing without the confirmation box, and records the operator when confirmed', async () => {
    const orderId = (await placeFormation('live')).items[0].orderId;
    await c.get(`/console/orders/${orderId}`);
    const review = await c.post(`/console/orders/${orderId}/review`, { _csrf: c.csrf(), action: 'pending' });
    expect(review.statusCode).toBe(200);
    expect(review.body).toContain('I have checked the details above');
    expect(await statusOf(orderId)).toBe('submitted');

    const unconfirmed = await c.post(`/console/orders/${orderId}/transition`, { _csrf: c.csrf(), action: 'pending' });
    expect(unconfirmed.statusCode).toBe(400);
    expect(await statusOf(orderId)).toBe('submitted');

    const done = await c.post(`/console/orders/${orderId}/transition`, {
      _csrf: c.csrf(),
      action: 'pending',
      confirm: 'yes',
    });
    expect(done.statusCode).toBe(303);
    expect(flashOf(done)).toMatchObject({ kind: 'ok' });
    expect(await statusOf(orderId)).toBe('pending');
    const { rows } = await t.ctx.pool.query(
      `SELECT actor FROM order_status_history WHERE order_id = $1 AND to_status = 'pending'`,
      [orderId],
    );
    expect(rows).toEqual([{ actor: `operator:${operator.id}` }]);
    expect((await c.get(`/console/orders/${orderId}`)).body).toContain(
      `Ada Admin &lt;${operator.email}&gt; (operator:${operator.id})`,
    );
  });

  it('refuses a move the pipeline forbids and a live EIN filed without its EIN, with the reason', async () => {
    const placed = await placeFormation('live', 'DE', { ein: einObject() });
    const ein = placed.items.find((i) => i.orderType === 'ein')!.orderId;
    await c.get(`/console/orders/${ein}`);
    const noEin = await c.post(`/console/orders/${ein}/review`, {
      _csrf: c.csrf(),
      action: 'filed',
      filingDate: new Date().toISOString().slice(0, 10),
    });
    expect(noEin.statusCode).toBe(303);
    expect(flashOf(noEin)).toMatchObject({ kind: 'error', text: expect.stringContaining('ein') });

    const resolve = await c.post(`/console/orders/${ein}/review`, {
      _csrf: c.csrf(),
      action: 'resolve',
      resumeTo: 'pending',
    });
    expect(flashOf(resolve)).toMatchObject({ kind: 'error', text: expect.stringContaining('nothing to resolve') });

    const filed = await c.post(`/console/orders/${ein}/transition`, {
      _csrf: c.csrf(),
      action: 'filed',
      ein: '12-3456789',
      confirm: 'yes',
    });
    expect(flashOf(filed)).toMatchObject({ kind: 'ok' });
    const company = await t.ctx.pool.query('SELECT ein FROM companies WHERE id = $1', [placed.companyId]);
    expect(company.rows[0].ein).toBe('12-3456789');
  });

  it('shows the reversal before cancelling and makes exactly that reversal', async () => {
    const before = await balanceCents(tenant, 'live');
    const orderId = (await placeFormation('live')).items[0].orderId;
    const charged = before - (await balanceCents(tenant, 'live'));
    expect(charged).toBeGreaterThan(0);
    await c.get(`/console/orders/${orderId}`);
    const review = await c.post(`/console/orders/${orderId}/review`, { _csrf: c.csrf(), action: 'cancel' });
    expect(review.body).toContain('Reversal that will be made');
    const total = /class="num reversal-total">([^<]+)</.exec(review.body)![1];
    expect(total).toBe(`$${(charged / 100).toFixed(2)}`);
    expect(await balanceCents(tenant, 'live')).toBe(before - charged);

    const done = await c.post(`/console/orders/${orderId}/transition`, {
      _csrf: c.csrf(),
      action: 'cancel',
      confirm: 'yes',
    });
    expect(flashOf(done)).toMatchObject({ kind: 'ok', text: expect.stringContaining('reversed') });
    expect(await statusOf(orderId)).toBe('cancelled');
    expect(await balanceCents(tenant, 'live')).toBe(before);
    const { rows } = await t.ctx.pool.query(
      `SELECT DISTINCT created_by FROM ledger_entries WHERE order_id = $1 AND type = 'reversal'`,
      [orderId],
    );
    expect(rows).toEqual([{ created_by: `operator:${operator.id}` }]);
  });

  it('refuses an upload without the CSRF token and stores nothing', async () => {
    const orderId = (await placeFormation('live')).items[0].orderId;
    const boundary = '----consoletest';
    const part = (name: string, value: string) =>
      `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
    const payload = `${part('documentType', 'articles_of_organization')}${part('confirm', 'yes')}--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.4\n%%EOF\n\r\n--${boundary}--\r\n`;
    const cookie = [...c.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await t.app.inject({
      method: 'POST',
      url: `/console/orders/${orderId}/documents`,
      payload,
      headers: { cookie, 'content-type': `multipart/form-data; boundary=${boundary}` },
    });
    expect(res.statusCode).toBe(403);
    const { rows } = await t.ctx.pool.query('SELECT count(*)::int AS n FROM documents WHERE order_id = $1', [orderId]);
    expect(rows[0].n).toBe(0);
  });

  it('refuses with a 400 page, storing nothing, an upload that holds a NUL or cannot be read as a multipart form', async () => {
    const orderId = (await placeFormation('live')).items[0].orderId;
    await c.get(`/console/orders/${orderId}`);
    const b = '----consoletest';
    const part = (name: string, value: string) =>
      `--${b}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
    const file = (filename: string) =>
      `--${b}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.4\n%%EOF\n\r\n`;
    const form = (documentType: string, filename: string) =>
      `${part('_csrf', c.csrf())}${part('documentType', documentType)}${part('confirm', 'yes')}${file(filename)}--${b}--\r\n`;
    const whole = `multipart/form-data; boundary=${b}`;
    const refused: Array<[string, string, string]> = [
      ['a NUL in a field', form('articles_of\u0000organization', 'a.pdf'), whole],
      ['a NUL in a file name', form('articles_of_organization', 'a\u0000.pdf'), whole],
      ['no boundary', form('articles_of_organization', 'a.pdf'), 'multipart/form-data'],
      ['another boundary', form('articles_of_organization', 'a.pdf'), 'multipart/form-data; boundary=other'],
      ['a body cut short', form('articles_of_organization', 'a.pdf').slice(0, -20), whole],
      [
        'a JSON field that is not JSON',
        `${part('_csrf', c.csrf())}--${b}\r\nContent-Disposition: form-data; name="meta"\r\nContent-Type: application/json\r\n\r\n{not json\r\n--${b}--\r\n`,
        whole,
      ],
    ];
    const cookie = [...c.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    for (const [what, payload, contentType] of refused) {
      const res = await t.app.inject({
        method: 'POST',
        url: `/console/orders/${orderId}/documents`,
        payload,
        headers: { cookie, 'content-type': contentType },
      });
      expect(res.statusCode, what).toBe(400);
      expect(res.headers['content-type'], what).toMatch(/text\/html/);
    }
    const count = async () =>
      (await t.ctx.pool.query('SELECT count(*)::int AS n FROM documents WHERE order_id = $1', [orderId])).rows[0].n;
    expect(await count()).toBe(0);
    // The same form, whole and clean, is stored.
    const stored = await t.app.inject({
      method: 'POST',
      url: `/console/orders/${orderId}/documents`,
      payload: form('articles_of_organization', 'a.pdf'),
      headers: { cookie, 'content-type': whole },
    });
    expect(stored.statusCode).toBe(303);
    expect(await count()).toBe(1);
  });
});

describe('business pages', () => {
  it('creates an organization whose keys are shown once and work, credits its live balance with a note, revokes a key', async () => {
    await c.get('/console/organizations');
    const created = await c.post('/console/organizations', { _csrf: c.csrf(), name: 'Console Made Co' });
    expect(created.statusCode).toBe(201);
    const keys = [...created.body.matchAll(/<code class="new-key">(sk_(live|test)_[^<]+)<\/code>/g)].map((m) => m[1]);
    expect(keys).toHaveLength(2);
    const orgId = /\/console\/organizations\/(org_[a-z0-9]+)\/credit/.exec(created.body)![1];
    const liveKey = keys.find((k) => k.startsWith('sk_live_'))!;
    const me = await t.app.inject({ method: 'GET', url: '/v1/organization', headers: { 'x-api-key': liveKey } });
    expect(me.json()).toMatchObject({ id: orgId, balance: 0 });
    // Shown once: the organization page afterwards has only the redacted keys.
    const page = await c.get(`/console/organizations/${orgId}`);
    expect(page.body).not.toContain(liveKey);

    const noNote = await c.post(`/console/organizations/${orgId}/credit`, {
      _csrf: c.csrf(),
      amount: '1,250.50',
      confirm: 'yes',
    });
    expect(flashOf(noNote)).toMatchObject({ kind: 'error' });
    // LIM-3: the console has the admin API's bound on a credit.
    const huge = await c.post(`/console/organizations/${orgId}/credit`, {
      _csrf: c.csrf(),
      amount: '10,000,000.01',
      note: 'Typo',
      confirm: 'yes',
    });
    expect(flashOf(huge)).toMatchObject({ kind: 'error', text: expect.stringContaining('at most 10,000,000 dollars') });
    const credit = await c.post(`/console/organizations/${orgId}/credit`, {
      _csrf: c.csrf(),
      amount: '1,250.50',
      note: 'Wire ref 7781',
      confirm: 'yes',
    });
    expect(flashOf(credit)).toMatchObject({ kind: 'ok' });
    const after = await t.app.inject({ method: 'GET', url: '/v1/organization', headers: { 'x-api-key': liveKey } });
    expect(after.json().balance).toBe(1250.5);
    const { rows } = await t.ctx.pool.query(
      `SELECT environment, description, created_by FROM ledger_entries WHERE organization_id = $1`,
      [orgId],
    );
    expect(rows).toEqual([
      { environment: 'live', description: 'Wire ref 7781', created_by: `operator:${operator.id}` },
    ]);

    const keyId = /\/keys\/(key_[a-z0-9]+)\/revoke/.exec(page.body)![1];
    const revoke = await c.post(`/console/organizations/${orgId}/keys/${keyId}/revoke`, {
      _csrf: c.csrf(),
      confirm: 'yes',
    });
    expect(flashOf(revoke)).toMatchObject({ kind: 'ok' });
    const { rows: k } = await t.ctx.pool.query('SELECT revoked_at FROM api_keys WHERE id = $1', [keyId]);
    expect(k[0].revoked_at).not.toBeNull();

    // A domain set by an operator waits for its DNS record like any other, unless the operator vouches for it.
    const domain = await c.post(`/console/organizations/${orgId}/domain`, {
      _csrf: c.csrf(),
      whiteLabelDomain: 'filings.console-made.com',
    });
    expect(flashOf(domain)).toMatchObject({ kind: 'ok', text: expect.stringContaining('pending') });
    const pendingPage = (await c.get(`/console/organizations/${orgId}`)).body;
    expect(pendingPage).toContain('value="filings.console-made.com"');
    expect(pendingPage).toContain('_fcs-domain-verification.filings.console-made.com');
    expect(
      (await t.app.inject({ method: 'GET', url: '/', headers: { host: 'filings.console-made.com' } })).statusCode,
    ).toBe(404);
    const vouched = await c.post(`/console/organizations/${orgId}/domain`, {
      _csrf: c.csrf(),
      whiteLabelDomain: 'filings.console-made.com',
      verified: 'yes',
    });
    expect(flashOf(vouched)).toMatchObject({ kind: 'ok', text: expect.stringContaining('in effect') });
    const { rows: d } = await t.ctx.pool.query(
      'SELECT white_label_domain_verified_at FROM organizations WHERE id = $1',
      [orgId],
    );
    expect(d[0].white_label_domain_verified_at).not.toBeNull();
  });

  it('creates an organization with a technical contact and shows it; shows disabled webhook endpoints first and prominently', async () => {
    await c.get('/console/organizations');
    const bad = await c.post('/console/organizations', {
      _csrf: c.csrf(),
      name: 'Typo Co',
      contactEmail: 'alerts.typo.example',
    });
    expect(flashOf(bad)).toMatchObject({ kind: 'error', text: expect.stringContaining('contactEmail') });
    const created = await c.post('/console/organizations', {
      _csrf: c.csrf(),
      name: 'Alerted Co',
      contactEmail: 'alerts@alerted.example',
    });
    expect(created.statusCode).toBe(201);
    const orgId = /\/console\/organizations\/(org_[a-z0-9]+)\/credit/.exec(created.body)![1];
    expect((await c.get(`/console/organizations/${orgId}`)).body).toMatch(
      /Technical contact:[\s\S]*alerts@alerted\.example/,
    );

    // An organization without a contact whose endpoint the delivery policy disabled.
    const silent = await t.newTenant('Silent Hooks Co');
    const ep = await silent.api('POST', '/webhook-endpoints', {
      url: 'https://hooks.silent.example/in',
      eventTypes: ['document.uploaded'],
    });
    expect(ep.statusCode, ep.body).toBe(201);
    // No worker runs here: the event's delivery stays due and the backlog shows it.
    await withTransaction(t.ctx.pool, (tx) =>
      emitEvent(tx, { organizationId: silent.organizationId, environment: 'test' }, 'document.uploaded', {}),
    );
    await t.ctx.pool.query(
      `UPDATE webhook_endpoints SET disabled = true, disabled_reason = 'The endpoint answered 410 Gone' WHERE id = $1`,
      [ep.json().id],
    );
    const overview = (await c.get('/console/webhooks')).body;
    const callout = overview.slice(overview.indexOf('id="disabled-endpoints"'), overview.indexOf('</section>'));
    expect(callout).toContain(ep.json().id);
    expect(callout).toContain('The endpoint answered 410 Gone');
    expect(callout).toContain('no contact');
    expect(overview).toMatch(
      /id="delivery-backlog">\s*<strong>Delivery backlog: [1-9]\d* due deliver(y|ies), the oldest due for [\d.]+ s/,
    );
    const health = (await c.get(`/console/webhooks/${silent.organizationId}`)).body;
    expect(health).toMatch(
      /id="disabled-endpoints"[\s\S]*1 disabled endpoint[\s\S]*hooks\.silent\.example[\s\S]*no technical contact email/,
    );
  });

  it('sets an organization wholesale override and edits a state fee, keeping the source', async () => {
    await c.get('/console/prices');
    const set = await c.post(`/console/prices/organizations/${tenant.organizationId}/registered_agent`, {
      _csrf: c.csrf(),
      wholesaleAmount: '42',
    });
    expect(flashOf(set)).toMatchObject({ kind: 'ok' });
    const prices = (await c.get(`/console/prices?organizationId=${tenant.organizationId}`)).body;
    expect(prices).toMatch(/registered_agent[\s\S]*?\$42\.00[\s\S]*?override/);

    // WY's fees are shared by every test of this file: put back as seeded even when an assertion fails.
    const seeded = (await t.admin('GET', '/state-fees')).json().data.find((f: { state: string }) => f.state === 'WY');
    try {
      const before = (await c.get('/console/fees/WY')).body;
      expect(before).toContain('Source');
      const res = await c.post('/console/fees/WY', {
        _csrf: c.csrf(),
        llcFormation: '104.00',
        note: 'Fee change notice 2025-07',
        expeditedWas: '103.75',
        expeditedFormation: '103.75',
      });
      expect(flashOf(res)).toMatchObject({ kind: 'ok' });
      const { rows } = await t.ctx.pool.query(
        `SELECT llc_formation_cents, updated_by, source FROM state_fees WHERE state = 'WY'`,
      );
      expect(rows[0]).toMatchObject({ llc_formation_cents: 10400, updated_by: `operator:${operator.id}` });
      expect(rows[0].source.sources.length).toBeGreaterThan(0);
      expect((await c.get('/console/fees/WY')).body).toContain('Fee change notice 2025-07');
      // A fee the form sends emptied is refused by its label, and nothing is saved.
      const emptied = await c.post('/console/fees/WY', { _csrf: c.csrf(), llcFormation: '', note: 'oops' });
      expect(flashOf(emptied)).toMatchObject({ kind: 'error', text: expect.stringContaining('LLC formation') });
      expect((await t.ctx.pool.query(`SELECT llc_formation_cents FROM state_fees WHERE state = 'WY'`)).rows[0]).toEqual(
        { llc_formation_cents: 10400 },
      );
    } finally {
      const restored = await t.admin('PUT', '/state-fees/WY', {
        llcFormation: seeded.llcFormation,
        expeditedFormation: seeded.expeditedFormation,
      });
      expect(restored.statusCode, restored.body).toBe(200);
    }
  });
});

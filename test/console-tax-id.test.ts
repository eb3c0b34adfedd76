import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transitionOrder } from '../src/modules/filings/filings.service.js';
import { destroyExpiredTaxIds } from '../src/modules/orders/ein-tax-ids.js';
import { consoleClient, newOperator, signIn, type ConsoleClient } from './console-helpers.js';
import { createUser } from './factories.js';
import { createTestApp, type TestApp, type TestTenant } from './harness.js';
import { einObject, formationBody } from './orders-fixtures.js';

// ORD-EIN-7 in the console: "Reveal tax id" on an EIN order's page asks why, shows the number and the SS-4 worksheet
// on a page no browser keeps, and records who saw it, when, why and from where.
let t: TestApp;
let c: ConsoleClient;
let operator: Awaited<ReturnType<typeof newOperator>>;
let tenant: TestTenant;
const CLIENT = '198.51.100.23';

beforeAll(async () => {
  t = await createTestApp();
  operator = await newOperator(t.ctx.pool, 'Rita Revealer');
  c = consoleClient(t.app, {}, CLIENT);
  await signIn(c, operator.email, operator.password);
  tenant = await t.newTenant('Reveal Platform');
  await t.admin('POST', `/organizations/${tenant.organizationId}/balance-credits`, {
    environment: 'live',
    amount: 5000,
    note: 'float',
  });
  await tenant.api('POST', '/test_helpers/balance-credits', { amount: 5000 });
});
afterAll(() => t.close());

/** Places a formation with an EIN whose responsible party has `taxId`. @returns the EIN order's id. */
async function einOrder(env: 'live' | 'test', taxId: string): Promise<string> {
  const user = await createUser(tenant, env);
  const ein = einObject({ responsibleParty: { ...einObject().responsibleParty, taxId } });
  const res = await tenant.api('POST', '/orders', formationBody(user.id, 'WY', { extra: { ein } }), { env });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().items.find((i: { orderType: string }) => i.orderType === 'ein').orderId;
}

const reveals = async (orderId: string) =>
  (await t.ctx.pool.query('SELECT actor, reason, client_address FROM tax_id_reveals WHERE order_id = $1', [orderId]))
    .rows;

const flashOf = (res: { headers: Record<string, unknown> }) => {
  const cookie = ([] as string[])
    .concat((res.headers['set-cookie'] as string[]) ?? [])
    .find((s) => s.startsWith('fcs_console_flash='));
  return cookie ? JSON.parse(Buffer.from(cookie.split(';')[0].split('=')[1], 'base64url').toString()) : null;
};

describe('Reveal tax id in the console', () => {
  for (const env of ['live', 'test'] as const) {
    it(`${env}: asks why, shows the number and the SS-4 worksheet on an uncached page, and records the reveal on the order page`, async () => {
      const taxId = env === 'live' ? '219-58-3746' : '229-58-3746';
      const orderId = await einOrder(env, taxId);
      const digits = taxId.replace(/-/g, '');
      const page = await c.get(`/console/orders/${orderId}`);
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain(`href="/console/orders/${orderId}/tax-id"`);
      expect(page.body).toContain('Nobody has revealed this tax id.');
      expect(page.body).not.toContain(taxId);
      expect(page.body).not.toContain(digits);

      const form = await c.get(`/console/orders/${orderId}/tax-id`);
      expect(form.statusCode).toBe(200);
      expect(form.body).toContain('name="reason"');
      expect(form.body).not.toContain(taxId);

      // No reason: the form again, nothing shown, nothing recorded.
      const blank = await c.post(`/console/orders/${orderId}/tax-id`, { _csrf: c.csrf(), reason: '  ' });
      expect(blank.statusCode).toBe(400);
      expect(blank.body).toContain('Reason: is required');
      expect(blank.body).not.toContain(taxId);
      // Without the session's CSRF token: refused.
      expect((await c.post(`/console/orders/${orderId}/tax-id`, { reason: 'no token' })).statusCode).toBe(403);
      expect(await reveals(orderId)).toEqual([]);

      const shown = await c.post(`/console/orders/${orderId}/tax-id`, {
        _csrf: c.csrf(),
        reason: 'SS-4 via the IRS online assistant',
      });
      expect(shown.statusCode).toBe(200);
      expect(shown.body).toContain(taxId);
      expect(String(shown.headers['cache-control'])).toMatch(/no-store/);
      expect(String(shown.headers['cache-control'])).toMatch(/no-cache/);
      expect(shown.headers.pragma).toBe('no-cache');
      // Shown for 60 seconds: the block the stylesheet hides, and the note it shows then.
      expect(shown.body).toContain('class="reveal-timed"');
      expect(shown.body).toContain('class="reveal-expired-note"');
      expect(shown.body).not.toMatch(/<script/i);
      const css = (await c.get('/console/assets/console.css')).body;
      expect(css).toMatch(/\.reveal-timed\s*{\s*animation: reveal-hide 0s linear 60s forwards;/);
      // The worksheet: every SS-4 line number, with the order's values.
      const rows = [
        ...shown.body.matchAll(/<tr><th scope="row" class="mono">([^<]+)<\/th><td>[^<]*<\/td><td>([^<]*)<\/td><\/tr>/g),
      ];
      const lines = rows.map((m) => m[1]);
      for (const n of ['1', '2', '3', '4a', '4b', '5a', '5b', '6', '7a', '7b', '8a', '8b', '8c', '9a', '9b']) {
        expect(lines, n).toContain(n);
      }
      for (const n of ['10', '11', '12', '13', '14', '15', '16', '17', '18', 'Designee']) expect(lines, n).toContain(n);
      const value = (n: string) => rows.find((m) => m[1] === n)![2];
      expect(value('1')).toBe('Acme Holdings LLC');
      expect(value('7a')).toBe('Ada Lovelace');
      expect(value('7b')).toBe(taxId);
      expect(value('8a')).toBe('Yes');
      expect(value('8b')).toBe('1');
      expect(value('9a')).toBe('Other: disregarded entity (single-member LLC)');
      expect(value('10')).toBe('Started new business');
      expect(value('12')).toBe('December');
      expect(value('16')).toBe('Retail');
      expect(value('17')).toBe('Handmade furniture');
      expect(value('18')).toBe('No');
      expect(value('3')).toBe('');

      expect(await reveals(orderId)).toEqual([
        { actor: `operator:${operator.id}`, reason: 'SS-4 via the IRS online assistant', client_address: CLIENT },
      ]);
      const after = (await c.get(`/console/orders/${orderId}`)).body;
      expect(after).toContain('SS-4 via the IRS online assistant');
      expect(after).toContain('Rita Revealer');
      expect(after).toContain(CLIENT);
      expect(after).not.toContain(taxId);
      expect(after).not.toContain(digits);
    });
  }

  it('says when the number was destroyed, offers no reveal any more, and records nothing', async () => {
    const orderId = await einOrder('test', '239-58-3746');
    await transitionOrder(t.ctx, null, orderId, { filingStatus: 'filed' }, 'cli');
    await destroyExpiredTaxIds(t.ctx.pool, 0);
    const page = (await c.get(`/console/orders/${orderId}`)).body;
    expect(page).toContain('Destroyed on');
    expect(page).not.toContain(`href="/console/orders/${orderId}/tax-id"`);
    await c.get(`/console/orders/${orderId}/tax-id`);
    const res = await c.post(`/console/orders/${orderId}/tax-id`, { _csrf: c.csrf(), reason: 'too late' });
    expect(res.statusCode).toBe(303);
    const today = new Date().toISOString().slice(0, 10);
    expect(flashOf(res)).toEqual({ kind: 'error', text: expect.stringContaining(`destroyed on ${today}`) });
    expect(await reveals(orderId)).toEqual([]);
  });

  it('has no reveal for an order that is no EIN order', async () => {
    const user = await createUser(tenant, 'test');
    const res = await tenant.api('POST', '/orders', formationBody(user.id, 'WY'));
    const orderId = res.json().items[0].orderId;
    const page = (await c.get(`/console/orders/${orderId}`)).body;
    expect(page).not.toContain('/tax-id"');
    await c.get(`/console/orders/${orderId}/tax-id`);
    const refused = await c.post(`/console/orders/${orderId}/tax-id`, { _csrf: c.csrf(), reason: 'curious' });
    expect(refused.statusCode).toBe(303);
    expect(flashOf(refused).text).toContain('only EIN orders have a tax id');
  });
});

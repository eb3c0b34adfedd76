import { createHmac, pbkdf2Sync } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { boot } from '../src/boot.js';
import { loadConfig } from '../src/config.js';
import { createPool } from '../src/lib/db.js';
import { newId } from '../src/lib/ids.js';
import { type BackgroundWorker, startWorker } from '../src/worker.js';
import { card, csrfOf, einForm, setDashboardBilling, signIn } from './dashboard-helpers.js';
import { createCompany } from './factories.js';
import { runCli } from './cli-runner.js';
import { createTestApp, TEST_DATA_ENCRYPTION_KEY, type TestApp, type TestTenant } from './harness.js';
import { einObject, listPrice } from './orders-fixtures.js';
import { startReceiver, waitFor, type Receiver } from './webhook-receiver.js';

// The app here connects exactly as a deployed service does: its pools log in as fcs_app, a member of fcs_service.
let t: TestApp;
let worker: BackgroundWorker;
let r: Receiver;
// The owner's connection (DATABASE_URL's user), to write rows the service may not change and to read what it did.
let owner: pg.Pool;
beforeAll(async () => {
  t = await createTestApp({
    DATABASE_SERVICE_ROLE: 'fcs_service',
    DASHBOARD_BASE_URL: 'http://localhost:3000/dashboard',
  });
  owner = createPool(t.ctx.config.databaseUrl!, 2);
  worker = await startWorker(t.ctx);
  r = await startReceiver();
});
afterAll(async () => {
  await worker?.stop();
  await r?.close();
  await owner?.end();
  await t?.close();
});

/** True when a stored SCRAM-SHA-256 verifier is `password`'s: recomputed from its salt, the server key matches. */
function serverKeyOf(verifier: string, password: string): boolean {
  const [, iterations, salt, serverKey] = /^SCRAM-SHA-256\$(\d+):([^$]+)\$[^:]+:(.+)$/.exec(verifier)!;
  const salted = pbkdf2Sync(password, Buffer.from(salt!, 'base64'), Number(iterations), 32, 'sha256');
  return createHmac('sha256', salted).update('Server Key').digest('base64') === serverKey;
}

const ownerName = () => decodeURIComponent(new URL(t.ctx.config.databaseUrl!).username);

/** A sandbox card payment of an EIN order at dashboard checkout (customer billing): the company and its order. */
async function cardPaidOrder(tenant: TestTenant) {
  await setDashboardBilling(tenant, 'customer');
  const { user, company } = await createCompany(tenant);
  const s = await signIn(t, tenant, { userId: user.id, companyId: company.id });
  const page = await s.get(`/companies/${company.id}/checkout/ein`);
  const res = await s.post(`/companies/${company.id}/checkout/ein`, {
    _csrf: csrfOf(page.body),
    filingState: 'DE',
    ...einForm,
    ...card('4242 4242 4242 4242'),
  });
  expect(res.statusCode, res.body).toBe(303);
  const { rows } = await t.ctx.pool.query('SELECT id, amount_cents FROM orders WHERE company_id = $1', [company.id]);
  return { company, order: rows[0] as { id: string; amount_cents: number } };
}

describe("the service's database role", () => {
  it('is the default, logged in as fcs_app; `none` keeps the connecting user', () => {
    expect(loadConfig({})).toMatchObject({
      databaseServiceRole: 'fcs_service',
      databaseAppRole: 'fcs_app',
      databaseAppPassword: null,
    });
    expect(loadConfig({ DATABASE_SERVICE_ROLE: 'none' }).databaseServiceRole).toBeNull();
    expect(() => loadConfig({ DATABASE_SERVICE_ROLE: 'x; DROP' })).toThrow(/DATABASE_SERVICE_ROLE/);
  });

  it('every pooled connection logs in as fcs_app, which is a member of fcs_service and of no other role', async () => {
    const { rows } = await t.ctx.pool.query(
      `SELECT session_user AS login, r.rolsuper AS superuser,
              ARRAY(SELECT m.roleid::regrole::text FROM pg_auth_members m WHERE m.member = r.oid) AS member_of
         FROM pg_roles r WHERE r.rolname = session_user`,
    );
    expect(rows).toEqual([{ login: 'fcs_app', superuser: false, member_of: ['fcs_service'] }]);
  });

  it("SET ROLE NONE or RESET ROLE on a pooled connection cannot reach the owner's rights", async () => {
    const tenant = await t.newTenant('Reset Role Co');
    expect((await tenant.api('POST', '/test_helpers/balance-credits', { amount: 25 })).statusCode).toBe(201);
    const client = await t.ctx.pool.connect();
    try {
      for (const back of ['SET ROLE NONE', 'RESET ROLE', 'RESET ALL', 'RESET SESSION AUTHORIZATION']) {
        await client.query(back);
        const { rows } = await client.query(
          'SELECT current_user AS role, rolsuper AS superuser FROM pg_roles WHERE rolname = current_user',
        );
        expect(rows, back).toEqual([{ role: 'fcs_app', superuser: false }]);
        for (const sql of [
          `UPDATE balances SET balance_cents = balance_cents + 100000 WHERE organization_id = '${tenant.organizationId}'`,
          'DELETE FROM payments',
          'DELETE FROM payment_provider_events',
          'DELETE FROM ledger_entries',
          'DROP TABLE ledger_entries',
        ])
          await expect(client.query(sql), `${back}; ${sql}`).rejects.toThrow(/permission denied|must be owner/);
      }
      await expect(client.query(`SET ROLE ${ownerName()}`)).rejects.toThrow(/permission denied/);
      await expect(client.query(`SET SESSION AUTHORIZATION ${ownerName()}`)).rejects.toThrow(/permission denied/);
    } finally {
      client.release();
    }
    expect((await tenant.api('GET', '/organization')).json().balance).toBe(25);
  });

  it('cannot drop, alter or truncate the ledger, nor update or delete its entries, nor delete orders or balances', async () => {
    const tenant = await t.newTenant();
    expect((await tenant.api('POST', '/test_helpers/balance-credits', { amount: 25 })).statusCode).toBe(201);
    const refused = [
      'DROP TABLE ledger_entries',
      'DROP TABLE ledger_entries CASCADE',
      'ALTER TABLE ledger_entries ADD COLUMN note2 text',
      'ALTER TABLE ledger_entries DISABLE TRIGGER ALL',
      'DROP TRIGGER ledger_entries_append_only ON ledger_entries',
      'TRUNCATE ledger_entries',
      `UPDATE ledger_entries SET amount_cents = amount_cents * 2 WHERE organization_id = '${tenant.organizationId}'`,
      `DELETE FROM ledger_entries WHERE organization_id = '${tenant.organizationId}'`,
      `UPDATE events SET data = '{}' WHERE organization_id = '${tenant.organizationId}'`,
      'DELETE FROM order_status_history',
      `DELETE FROM orders WHERE organization_id = '${tenant.organizationId}'`,
      `DELETE FROM balances WHERE organization_id = '${tenant.organizationId}'`,
      'CREATE TABLE sneaky (id int)',
      'ALTER TABLE balances DROP CONSTRAINT IF EXISTS balances_pkey',
      'DROP TABLE graphile_worker._private_jobs',
      'DELETE FROM schema_migrations',
    ];
    for (const sql of refused)
      await expect(t.ctx.pool.query(sql), sql).rejects.toThrow(/permission denied|must be owner/);
    const { rows } = await t.ctx.pool.query(
      'SELECT count(*)::int AS n FROM ledger_entries WHERE organization_id = $1',
      [tenant.organizationId],
    );
    expect(rows[0].n).toBe(1);
  });

  it('moves a balance only through the ledger, and neither changes nor removes payments, their statuses or Stripe events', async () => {
    const tenant = await t.newTenant('Insert Only Co');
    expect((await tenant.api('POST', '/test_helpers/balance-credits', { amount: 25 })).statusCode).toBe(201);
    const { order } = await cardPaidOrder(tenant);
    const eventId = `evt_${newId('event')}`;
    await owner.query(`INSERT INTO payment_provider_events (id, provider, type) VALUES ($1, 'stripe', 'test')`, [
      eventId,
    ]);
    const org = tenant.organizationId;
    const refused = [
      `UPDATE balances SET balance_cents = balance_cents + 100000 WHERE organization_id = '${org}'`,
      `UPDATE balances SET updated_at = now() WHERE organization_id = '${org}'`,
      `INSERT INTO balances (organization_id, environment, balance_cents) VALUES ('${org}', 'live', 100000)`,
      `SELECT 1 FROM balances WHERE organization_id = '${org}' FOR UPDATE`,
      `UPDATE payments SET amount_cents = 1, status = 'declined' WHERE organization_id = '${org}'`,
      `DELETE FROM payments WHERE organization_id = '${org}'`,
      `UPDATE payment_statuses SET status = 'declined'`,
      'DELETE FROM payment_statuses',
      `UPDATE payment_provider_events SET checkout_id = NULL WHERE id = '${eventId}'`,
      `DELETE FROM payment_provider_events WHERE id = '${eventId}'`,
      'TRUNCATE payments, payment_statuses, payment_provider_events CASCADE',
    ];
    for (const sql of refused)
      await expect(t.ctx.pool.query(sql), sql).rejects.toThrow(/permission denied|must be owner/);
    expect((await tenant.api('GET', '/organization')).json().balance).toBe(25);
    const { rows } = await owner.query(
      `SELECT p.amount_cents, payment_status(p.id) AS status,
              (SELECT count(*)::int FROM payment_provider_events WHERE id = $2) AS events
         FROM payments p JOIN orders o ON o.group_id = p.group_id WHERE o.id = $1`,
      [order.id, eventId],
    );
    expect(rows).toEqual([{ amount_cents: order.amount_cents, status: 'succeeded', events: 1 }]);
  });

  it('places, cancels and refunds through that role: debits and reversals post, a card-paid order is refunded', async () => {
    const tenant = await t.newTenant('Still Works Co');
    expect((await tenant.api('POST', '/test_helpers/balance-credits', { amount: 1000 })).statusCode).toBe(201);
    const { user, company } = await createCompany(tenant);
    const placed = await tenant.api('POST', '/orders', {
      userId: user.id,
      companyId: company.id,
      filingState: 'DE',
      ein: einObject(),
    });
    expect(placed.statusCode, placed.body).toBe(201);
    const orderId = placed.json().items[0].orderId;
    expect((await tenant.api('GET', '/organization')).json().balance).toBeLessThan(1000);
    const cancelled = await tenant.api('POST', `/test_helpers/orders/${orderId}/advance`, {
      filingStatus: 'cancelled',
    });
    expect(cancelled.statusCode, cancelled.body).toBe(200);
    expect((await tenant.api('GET', '/organization')).json().balance).toBe(1000);
    const txns = (await tenant.api('GET', '/balance-transactions')).json().data.map((x: { type: string }) => x.type);
    expect(txns.slice(0, 2)).toEqual(['reversal', 'debit']);

    const paid = await cardPaidOrder(tenant);
    expect(paid.order.amount_cents).toBe(listPrice('ein'));
    const cancel = await t.admin('POST', `/orders/${paid.order.id}/transitions`, { filingStatus: 'cancelled' });
    expect(cancel.statusCode, cancel.body).toBe(200);
    const { rows } = await t.ctx.pool.query('SELECT amount_cents FROM card_refunds WHERE order_id = $1', [
      paid.order.id,
    ]);
    expect(rows).toEqual([{ amount_cents: paid.order.amount_cents }]);
  });

  it("a payment's status is its newest status row: one refunded since is not refunded again when its order is cancelled", async () => {
    const tenant = await t.newTenant('Status Rows Co');
    const { order } = await cardPaidOrder(tenant);
    const payment = (
      await t.ctx.pool.query('SELECT p.id FROM payments p JOIN orders o ON o.group_id = p.group_id WHERE o.id = $1', [
        order.id,
      ])
    ).rows[0].id;
    await t.ctx.pool.query(
      `INSERT INTO payment_statuses (payment_id, status, message) VALUES ($1, 'refunded', 'refunded by the bank')`,
      [payment],
    );
    const { rows } = await t.ctx.pool.query(
      `SELECT status AS recorded, payment_status(id) AS now,
              ARRAY(SELECT s.status FROM payment_statuses s WHERE s.payment_id = p.id ORDER BY s.id) AS history
         FROM payments p WHERE id = $1`,
      [payment],
    );
    expect(rows).toEqual([{ recorded: 'succeeded', now: 'refunded', history: ['succeeded', 'refunded'] }]);
    const cancel = await t.admin('POST', `/orders/${order.id}/transitions`, { filingStatus: 'cancelled' });
    expect(cancel.statusCode, cancel.body).toBe(200);
    expect((await t.ctx.pool.query('SELECT 1 FROM card_refunds WHERE order_id = $1', [order.id])).rowCount).toBe(0);
  });

  it('a start refuses a login role that is a member of another role too, or not of the service role', async () => {
    const name = `fcs_t_login_${process.pid}`;
    const start = () =>
      boot(
        loadConfig({
          DATABASE_URL: t.ctx.config.databaseUrl!,
          DATA_ENCRYPTION_KEY: TEST_DATA_ENCRYPTION_KEY,
          DATABASE_APP_ROLE: name,
          DATABASE_APP_PASSWORD: 'refused-Pa55word-0123456789',
          DATA_DIR: t.ctx.config.dataDir,
          LOG_LEVEL: 'silent',
        }),
      );
    await owner.query(`DROP ROLE IF EXISTS ${name}`);
    await owner.query(
      `CREATE ROLE ${name} LOGIN PASSWORD 'refused-Pa55word-0123456789' IN ROLE fcs_service, pg_write_all_data`,
    );
    try {
      await expect(start()).rejects.toThrow(
        `The login role ${name} is a member of pg_write_all_data besides fcs_service, so SET ROLE would reach their rights`,
      );
      await owner.query(`REVOKE pg_write_all_data, fcs_service FROM ${name}`);
      await expect(start()).rejects.toThrow(`The login role ${name} does not have fcs_service's rights`);
      await owner.query(`GRANT fcs_service TO ${name}`);
      const booted = await start();
      const { rows } = await booted.ctx.pool.query('SELECT session_user AS login');
      await booted.close();
      expect(rows).toEqual([{ login: name }]);
    } finally {
      await owner.query(`DROP ROLE IF EXISTS ${name}`);
    }
  });

  it('a start creates a missing login role with DATABASE_APP_PASSWORD, and sets it again only when it changed', async () => {
    const name = `fcs_t_made_${process.pid}`;
    const startWith = async (password: string) => {
      const booted = await boot(
        loadConfig({
          DATABASE_URL: t.ctx.config.databaseUrl!,
          DATA_ENCRYPTION_KEY: TEST_DATA_ENCRYPTION_KEY,
          DATABASE_APP_ROLE: name,
          DATABASE_APP_PASSWORD: password,
          DATA_DIR: t.ctx.config.dataDir,
          LOG_LEVEL: 'silent',
        }),
      );
      const { rows } = await booted.ctx.pool.query('SELECT session_user AS login');
      await booted.close();
      expect(rows).toEqual([{ login: name }]);
      const stored = await owner.query(
        `SELECT a.rolpassword, r.rolsuper, ARRAY(SELECT m.roleid::regrole::text FROM pg_auth_members m WHERE m.member = r.oid) AS member_of
           FROM pg_authid a JOIN pg_roles r ON r.oid = a.oid WHERE a.rolname = $1`,
        [name],
      );
      expect(stored.rows[0]).toMatchObject({ rolsuper: false, member_of: ['fcs_service'] });
      expect(serverKeyOf(stored.rows[0].rolpassword, password)).toBe(true);
      return stored.rows[0].rolpassword as string;
    };
    await owner.query(`DROP ROLE IF EXISTS ${name}`);
    try {
      const first = await startWith('first-Pa55word-0123456789');
      expect(await startWith('first-Pa55word-0123456789')).toBe(first);
      expect(await startWith('second-Pa55word-0123456789')).not.toBe(first);
    } finally {
      await owner.query(`DROP ROLE IF EXISTS ${name}`);
    }
  });

  it('`cli db roles` prints the SQL that creates both roles, the password only as its SCRAM verifier', async () => {
    const [service, app] = [`fcs_t_svc_${process.pid}`, `fcs_t_app_${process.pid}`];
    const env = { DATABASE_SERVICE_ROLE: service, DATABASE_APP_ROLE: app, DATABASE_APP_PASSWORD: '' };
    const out = await runCli(t, ['db', 'roles'], env);
    expect(out.code, out.stderr).toBe(0);
    const password = /DATABASE_APP_PASSWORD=(\S+)/.exec(out.stderr)?.[1];
    expect(password).toMatch(/^[\w-]{32}$/);
    expect(out.stdout).not.toContain(password);
    expect(out.stdout).toContain(`CREATE ROLE "${app}" LOGIN NOSUPERUSER`);
    const admin = new pg.Client({ connectionString: t.ctx.config.databaseUrl! });
    await admin.connect();
    try {
      await admin.query(out.stdout);
      const { rows } = await admin.query(
        `SELECT r.rolcanlogin, r.rolsuper, a.rolpassword,
                ARRAY(SELECT m.roleid::regrole::text FROM pg_auth_members m WHERE m.member = r.oid) AS member_of,
                pg_has_role($3, $1, 'MEMBER WITH ADMIN OPTION') AS owner_admin
           FROM pg_roles r JOIN pg_authid a ON a.oid = r.oid WHERE r.rolname = $2`,
        [service, app, ownerName()],
      );
      expect(rows[0]).toMatchObject({ rolcanlogin: true, rolsuper: false, member_of: [service], owner_admin: true });
      // The stored verifier is the printed password's.
      expect(serverKeyOf(rows[0].rolpassword, password!)).toBe(true);
    } finally {
      await admin.query(`DROP ROLE IF EXISTS "${app}"; DROP ROLE IF EXISTS "${service}"`);
      await admin.end();
    }
  });

  it('serves requests and runs background jobs through that role', async () => {
    const tenant = await t.newTenant();
    const user = await tenant.api('POST', '/users', {
      fullName: 'Role Tester',
      email: `role.${Date.now()}@example.com`,
      phoneNumber: '+14155550123',
    });
    expect(user.statusCode, user.body).toBe(201);
    const ep = await tenant.api('POST', '/webhook-endpoints', { url: r.url, eventTypes: ['document.uploaded'] });
    expect(ep.statusCode, ep.body).toBe(201);
    const sent = await tenant.api('POST', `/webhook-endpoints/${ep.json().id}/test`);
    expect(
      sent.statusCode,
      t.logs
        .filter((l) => l.includes('error'))
        .join('\n')
        .slice(0, 3000),
    ).toBe(202);
    await waitFor('the test webhook', () => r.requests.some((q) => q.event.type === 'webhook.test'));
    const delivery = await waitFor('the attempt to be recorded', async () => {
      const d = (await tenant.api('GET', `/webhook-deliveries/${sent.json().id}`)).json();
      return d.status === 'succeeded' ? d : null;
    });
    expect(delivery.attemptCount).toBe(1);
  });
});

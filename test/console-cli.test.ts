import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTransaction } from '../src/lib/db.js';
import { emitEvent } from '../src/modules/events/events.service.js';
import { consoleClient, signIn } from './console-helpers.js';
import { createOrderRow, createUser } from './factories.js';
import { runCli } from './cli-runner.js';
import { createTestApp, type TestApp } from './harness.js';
import { einObject, formationBody, TEST_SSN } from './orders-fixtures.js';

// CONS-6: console actions are CLI commands with --json; run the real CLI against the test database.
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const cli = (...args: string[]) => runCli(t, args);

describe('console CLI', () => {
  it('creates an operator with a generated password (printed once) who can sign in; lists and disables it', async () => {
    const created = await cli(
      'operators',
      'create',
      '--email',
      'Night.Shift@Example.com',
      '--name',
      'Night Shift',
      '--json',
    );
    expect(created.code, created.stderr).toBe(0);
    const op = JSON.parse(created.stdout);
    expect(op).toMatchObject({
      id: expect.stringMatching(/^op_/),
      email: 'night.shift@example.com',
      name: 'Night Shift',
      disabledAt: null,
      password: expect.any(String),
    });
    expect(op.password.length).toBeGreaterThanOrEqual(20);
    const { rows } = await t.ctx.pool.query('SELECT password_hash FROM operators WHERE id = $1', [op.id]);
    expect(rows[0].password_hash).toMatch(/^\$argon2id\$v=19\$m=\d+,t=\d+,p=\d+\$/);
    expect(rows[0].password_hash).not.toContain(op.password);

    const c = consoleClient(t.app);
    expect((await signIn(c, 'night.shift@example.com', op.password)).statusCode).toBe(303);

    const dup = await cli(
      'operators',
      'create',
      '--email',
      'night.shift@example.com',
      '--name',
      'Again',
      '--password',
      'another long password',
    );
    expect(dup.code).toBe(1);
    expect(dup.stderr).toContain('already exists');

    const list = JSON.parse((await cli('operators', 'list', '--json')).stdout);
    expect(list).toEqual(
      expect.arrayContaining([expect.objectContaining({ id: op.id, email: 'night.shift@example.com' })]),
    );
    expect(JSON.stringify(list)).not.toContain('argon2id');

    const disabled = JSON.parse((await cli('operators', 'disable', op.id, '--json')).stdout);
    expect(disabled.disabledAt).not.toBeNull();
    // Its session ends at once.
    expect((await c.get('/console/queue')).statusCode).toBe(303);
  }, 120_000);

  it('lists, shows and sets the white-label domain of organizations, and reports webhook health, as JSON', async () => {
    const tenant = await t.newTenant('CLI Platform');
    const list = await cli('org', 'list', '--json');
    expect(list.code, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          id: tenant.organizationId,
          name: 'CLI Platform',
          balances: { live: 0, test: 0 },
          activeKeys: 2,
        }),
      ]),
    );

    const pending = await cli('org', 'set-domain', tenant.organizationId, 'Portal.CLI-Platform.com');
    expect(pending.code, pending.stderr).toBe(0);
    expect(pending.stdout).toContain('pending');
    expect(pending.stdout).toContain('_fcs-domain-verification.portal.cli-platform.com');
    const unverified = await cli('org', 'verify-domain', tenant.organizationId);
    expect(unverified.code).toBe(1);
    expect(unverified.stderr).toContain('_fcs-domain-verification.portal.cli-platform.com');
    const set = await cli(
      'org',
      'set-domain',
      tenant.organizationId,
      'Portal.CLI-Platform.com',
      '--verified',
      '--json',
    );
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout)).toMatchObject({
      id: tenant.organizationId,
      whiteLabelDomain: 'portal.cli-platform.com',
      whiteLabelDomainVerification: { status: 'verified' },
    });
    const bad = await cli('org', 'set-domain', tenant.organizationId, 'https://nope/');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('whiteLabelDomain');

    const show = JSON.parse((await cli('org', 'show', tenant.organizationId, '--json')).stdout);
    expect(show).toMatchObject({
      id: tenant.organizationId,
      whiteLabelDomain: 'portal.cli-platform.com',
      balances: { live: 0, test: 0 },
    });
    expect(show.apiKeys).toHaveLength(2);
    expect(JSON.stringify(show)).not.toContain(tenant.keys.live);

    const ep = await tenant.api(
      'POST',
      '/webhook-endpoints',
      { url: 'http://127.0.0.1:9/hooks', eventTypes: ['filing.status_changed'] },
      { env: 'live' },
    );
    expect(ep.statusCode, ep.body).toBe(201);
    const health = await cli('webhooks', 'health', '--org', tenant.organizationId, '--json');
    expect(health.code, health.stderr).toBe(0);
    expect(JSON.parse(health.stdout)).toMatchObject({
      organization: { id: tenant.organizationId },
      endpoints: [{ id: ep.json().id, environment: 'live', state: 'healthy', url: 'http://127.0.0.1:9/hooks' }],
      recentAttempts: [],
    });
  }, 120_000);

  it('reports the webhook delivery backlog: due deliveries overall and per organization', async () => {
    const tenant = await t.newTenant('Backlog Platform');
    const ep = await tenant.api(
      'POST',
      '/webhook-endpoints',
      { url: 'http://127.0.0.1:9/hooks', eventTypes: ['filing.status_changed'] },
      { env: 'live' },
    );
    expect(ep.statusCode, ep.body).toBe(201);
    // No worker runs here, so an event for the endpoint stays due: the backlog shows it.
    await withTransaction(t.ctx.pool, (tx) =>
      emitEvent(tx, { organizationId: tenant.organizationId, environment: 'live' }, 'filing.status_changed', {}),
    );
    const overview = await cli('webhooks', 'health', '--json');
    expect(overview.code, overview.stderr).toBe(0);
    const parsed = JSON.parse(overview.stdout);
    expect(parsed.backlog.dueDeliveries).toBeGreaterThanOrEqual(1);
    expect(parsed.backlog.oldestDueSeconds).toBeGreaterThanOrEqual(0);
    expect(
      parsed.organizations.find((o: { organizationId: string }) => o.organizationId === tenant.organizationId),
    ).toMatchObject({ pendingDeliveries: 1, dueDeliveries: 1 });
  }, 120_000);

  it('shows an order with its request (SSN masked), history and events', async () => {
    const tenant = await t.newTenant('Show Platform');
    expect((await tenant.api('POST', '/test_helpers/balance-credits', { amount: 1000 })).statusCode).toBe(201);
    const user = await createUser(tenant);
    const placed = await tenant.api('POST', '/orders', formationBody(user.id, 'DE', { extra: { ein: einObject() } }));
    expect(placed.statusCode, placed.body).toBe(201);
    const orderId = placed.json().items[0].orderId;
    const shown = await cli('orders', 'show', orderId, '--json');
    expect(shown.code, shown.stderr).toBe(0);
    const out = JSON.parse(shown.stdout);
    expect(out).toMatchObject({
      orderId,
      filingStatus: 'submitted',
      request: { filingState: 'DE', formation: expect.any(Object) },
    });
    expect(out.history).toHaveLength(1);
    expect(out.events).toEqual([
      expect.objectContaining({
        type: 'filing.status_changed',
        data: expect.objectContaining({ orderId, filingStatus: 'submitted' }),
      }),
    ]);
    expect(shown.stdout).not.toContain(TEST_SSN);
    expect(out.taxIdReveals).toEqual([]);
    // As text: the history in words and the request, masked, as operations.md promises.
    const text = await cli('orders', 'show', orderId);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/\(placed\) -> submitted {2}by api/);
    expect(text.stdout).toContain('Request (SSNs masked):');
    expect(text.stdout).toContain('"filingState": "DE"');
    expect(text.stdout).not.toContain(TEST_SSN);
  }, 120_000);

  it('orders advance moves every matching live order, reports them as JSON, and leaves test-mode orders alone', async () => {
    const tenant = await t.newTenant('Advance Platform');
    const live = { organizationId: tenant.organizationId, environment: 'live' as const };
    const de = [
      await createOrderRow(t.ctx, live, { filingState: 'DE' }),
      await createOrderRow(t.ctx, live, { filingState: 'DE', orderType: 'annual_report' }),
    ];
    const ny = await createOrderRow(t.ctx, live, { filingState: 'NY' });
    const testMode = await createOrderRow(
      t.ctx,
      { organizationId: tenant.organizationId, environment: 'test' },
      { filingState: 'DE' },
    );
    const res = await cli(
      'orders',
      'advance',
      '--from',
      'submitted',
      '--to',
      'pending',
      '--state',
      'DE',
      '--org',
      tenant.organizationId,
      '--json',
    );
    expect(res.code, res.stderr).toBe(0);
    const out = JSON.parse(res.stdout);
    expect(out.moved.sort()).toEqual(de.map((o) => o.orderId).sort());
    expect(out.failed).toEqual([]);
    const status = async (id: string) =>
      (await t.ctx.pool.query('SELECT filing_status FROM orders WHERE id = $1', [id])).rows[0].filing_status;
    expect(await status(de[0].orderId)).toBe('pending');
    expect(await status(ny.orderId)).toBe('submitted');
    // Integrators move their own test-mode orders (TEN-5: in the test environment filings do not advance on their own).
    expect(await status(testMode.orderId)).toBe('submitted');
    const history = await t.ctx.pool.query(
      'SELECT actor FROM order_status_history WHERE order_id = $1 AND to_status = $2',
      [de[1].orderId, 'pending'],
    );
    expect(history.rows).toHaveLength(1);

    const text = await cli(
      'orders',
      'advance',
      '--from',
      'submitted',
      '--to',
      'pending',
      '--state',
      'DE',
      '--environment',
      'test',
      '--org',
      tenant.organizationId,
    );
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain('Moved 1 test order(s) from submitted to pending');
    expect(await status(testMode.orderId)).toBe('pending');
  }, 120_000);
});

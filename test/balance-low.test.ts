import fs from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { formatCents } from '../src/lib/money.js';
import { creditBalance } from '../src/modules/billing/ledger.js';
import { sendLowBalanceEmailTask } from '../src/modules/funding/low-balance-email.task.js';
import { verifyLedger } from '../src/modules/ledger-audit/ledger-verify.js';
import { outboxDir } from '../src/modules/notifications/mailer.js';
import { taskDefinitions } from '../src/tasks.js';
import { createUser, tenantOf } from './factories.js';
import {
  balanceOf,
  deliverStripeEvent,
  dispute,
  eventsOf,
  fundingSuite,
  openLiveTopUp,
  payByCard,
} from './funding-helpers.js';
import type { TestApp, TestTenant } from './harness.js';
import { formationBody, stateFee, wholesale } from './orders-fixtures.js';
import { memberSession } from './portal-helpers.js';

/*
 * The low-balance alert (FUND-15..FUND-19, FUND-28, FUND-29): PATCH /organization sets lowBalanceThreshold; a debit
 * that takes a balance from at or above it to below it emits balance.low once per crossing, in the debit's own
 * transaction, and for the live balance queues one email to the technical contact and the owners.
 */

const suite = fundingSuite();
let t: TestApp;
beforeAll(() => {
  t = suite.t;
});

/** What one Delaware LLC formation with a supplied agent debits (cents), from the data files the service seeds from. */
const FORMATION = wholesale('formation_tier_1') + stateFee('DE', 'Formation', 'LLC');
const dollars = (cents: number) => Math.round(cents) / 100;

const setThreshold = (tenant: TestTenant, lowBalanceThreshold: number | null) =>
  tenant.api('PATCH', '/organization', { lowBalanceThreshold }, { env: 'live' });

describe('lowBalanceThreshold', () => {
  it('is set with a live key in dollars, shown by GET /organization, removed with null, and validated', async () => {
    const tenant = await t.newTenant('Threshold Settings Co');
    const set = await setThreshold(tenant, 250.75);
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json().lowBalanceThreshold).toBe(250.75);
    expect((await tenant.api('GET', '/organization')).json().lowBalanceThreshold).toBe(250.75);
    for (const bad of [-1, 1.234, 10_000_000.01]) {
      const res = await setThreshold(tenant, bad);
      expect(res.statusCode, String(bad)).toBe(400);
      expect(res.json().errors.map((e: { field: string }) => e.field)).toEqual(['lowBalanceThreshold']);
    }
    const fromTest = await tenant.api('PATCH', '/organization', { lowBalanceThreshold: 5 });
    expect(fromTest.statusCode).toBe(403);
    expect((await setThreshold(tenant, null)).json().lowBalanceThreshold).toBeNull();
  });
});

describe('balance.low', () => {
  it('is emitted once per crossing by the debit that crosses, and again only after the balance was back at or above', async () => {
    const tenant = await t.newTenant('Low Balance Co');
    const threshold = 10 * FORMATION;
    expect((await setThreshold(tenant, dollars(threshold))).statusCode).toBe(200);
    const endpoint = await tenant.api('POST', '/webhook-endpoints', {
      url: 'http://127.0.0.1:9/hooks',
      eventTypes: ['balance.low'],
    });
    expect(endpoint.statusCode, endpoint.body).toBe(201);
    const user = await createUser(tenant);
    const topUp = async (cents: number) =>
      expect((await tenant.api('POST', '/balance/top-ups', { amount: dollars(cents) })).statusCode).toBe(201);
    const order = async () => {
      const res = await tenant.api('POST', '/orders', formationBody(user.id, 'DE'));
      expect(res.statusCode, res.body).toBe(201);
    };
    const alerts = () => eventsOf(t, tenant, 'test', 'balance.low');

    await topUp(threshold + 1.5 * FORMATION);
    await order(); // threshold + 0.5 F: still above
    expect(await alerts()).toEqual([]);
    await order(); // threshold - 0.5 F: crossed
    const [first] = await alerts();
    expect(first).toEqual({
      balance: dollars(threshold - 0.5 * FORMATION),
      threshold: dollars(threshold),
      balanceTransactionId: expect.stringMatching(/^txn_/),
    });
    // The event names the debit that crossed, written with it, and its delivery is queued for the endpoint.
    const crossing = await t.ctx.pool.query(
      'SELECT type, balance_after_cents::int AS after FROM ledger_entries WHERE id = $1',
      [first.balanceTransactionId],
    );
    expect(crossing.rows).toEqual([{ type: 'debit', after: threshold - 0.5 * FORMATION }]);
    const deliveries = await t.ctx.pool.query(
      `SELECT count(*)::int AS n FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
        WHERE e.organization_id = $1 AND e.type = 'balance.low'`,
      [tenant.organizationId],
    );
    expect(deliveries.rows[0].n).toBe(1);

    await order(); // further below: no new alert
    await topUp(0.5 * FORMATION); // still below: not re-armed
    await order();
    expect(await alerts()).toHaveLength(1);
    await topUp(3 * FORMATION); // threshold + F: re-armed
    await order(); // exactly at the threshold: not below
    expect(await alerts()).toHaveLength(1);
    await order(); // below again: the second alert
    expect((await alerts()).map((a) => a.balance)).toEqual([
      dollars(threshold - 0.5 * FORMATION),
      dollars(threshold - FORMATION),
    ]);
    // A refused order (402) debits nothing and alerts nothing.
    expect(await balanceOf(tenant, 'live')).toBe(0);
    const liveUser = await createUser(tenant, 'live');
    const refused = await tenant.api('POST', '/orders', formationBody(liveUser.id, 'DE'), { env: 'live' });
    expect(refused.statusCode).toBe(402);
    expect(await eventsOf(t, tenant, 'live', 'balance.low')).toEqual([]);
    expect(await verifyLedger(t.ctx)).toEqual([]);
  });

  it('comes from a clawback too, in the environment whose balance crossed, and never without a threshold', async () => {
    const tenant = await t.newTenant('Low Balance Dispute Co');
    expect((await setThreshold(tenant, 50)).statusCode).toBe(200);
    const opened = await openLiveTopUp(tenant, suite.stripe, 100);
    await payByCard(t, opened, 'pi_low_dispute');
    await deliverStripeEvent(t, 'charge.dispute.created', dispute('dp_low_1', 'pi_low_dispute', 10000));
    expect(await balanceOf(tenant, 'live')).toBe(0);
    expect(await eventsOf(t, tenant, 'live', 'balance.low')).toEqual([
      { balance: 0, threshold: 50, balanceTransactionId: expect.stringMatching(/^txn_/) },
    ]);
    expect(await eventsOf(t, tenant, 'test', 'balance.low')).toEqual([]);

    const quiet = await t.newTenant('No Threshold Co');
    const other = await openLiveTopUp(quiet, suite.stripe, 100);
    await payByCard(t, other, 'pi_quiet');
    await deliverStripeEvent(t, 'charge.dispute.created', dispute('dp_quiet', 'pi_quiet', 10000));
    expect(await eventsOf(t, quiet, 'live', 'balance.low')).toEqual([]);
  });
});

describe('the low-balance email', () => {
  /** The send_low_balance_email jobs queued for the tenant's balance.low events, oldest first (their event ids). */
  const emailJobs = async (tenant: TestTenant) =>
    (
      await t.ctx.pool.query(
        `SELECT j.payload FROM graphile_worker._private_jobs j
           JOIN graphile_worker._private_tasks k ON k.id = j.task_id
           JOIN events e ON e.id = j.payload->>'eventId'
          WHERE k.identifier = 'send_low_balance_email' AND e.organization_id = $1 ORDER BY j.id`,
        [tenant.organizationId],
      )
    ).rows.map((r) => r.payload as { eventId: string });

  /** Runs the email job of `eventId` as the worker would; returns the messages it wrote to the outbox. */
  const sendEmail = async (eventId: string) => {
    const dir = outboxDir(t.ctx.config);
    const before = new Set(fs.existsSync(dir) ? fs.readdirSync(dir) : []);
    const helpers = { logger: { info: () => undefined } } as never;
    await sendLowBalanceEmailTask.handler(t.ctx)({ eventId }, helpers);
    return (fs.existsSync(dir) ? fs.readdirSync(dir) : [])
      .filter((f) => !before.has(f))
      .map((f) => fs.readFileSync(`${dir}/${f}`, 'utf8'))
      .map((m) =>
        // Quoted-printable: soft line breaks joined, =XX decoded.
        m
          .replace(/=\r?\n/g, '')
          .replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(Number.parseInt(hex, 16))),
      );
  };

  it('goes once per crossing of the live balance to the technical contact and the owners, not per order', async () => {
    const tenant = await t.newTenant('Low Balance Mail Co');
    const threshold = 10 * FORMATION;
    const settings = await tenant.api(
      'PATCH',
      '/organization',
      { lowBalanceThreshold: dollars(threshold), contactEmail: 'billing@low-mail.example' },
      { env: 'live' },
    );
    expect(settings.statusCode, settings.body).toBe(200);
    const owner = await memberSession(t, tenant.organizationId, 'owner');
    const live = tenantOf(tenant, 'live');
    const seed = threshold + Math.round(1.5 * FORMATION);
    await creditBalance(t.ctx.pool, live, seed, 'Wire received', null);
    const user = await createUser(tenant, 'live');
    const order = async () => {
      const res = await tenant.api('POST', '/orders', formationBody(user.id, 'DE'), { env: 'live' });
      expect(res.statusCode, res.body).toBe(201);
    };

    await order(); // threshold + 0.5 F: still above
    expect(await emailJobs(tenant)).toEqual([]);
    await order(); // threshold - 0.5 F: crossed, one email
    const [alert] = await eventsOf(t, tenant, 'live', 'balance.low');
    const [first] = await emailJobs(tenant);
    expect(first).toEqual({ eventId: expect.stringMatching(/^evt_/) });
    await order(); // further below: no second email
    expect(await emailJobs(tenant)).toHaveLength(1);

    expect(taskDefinitions.send_low_balance_email).toBe(sendLowBalanceEmailTask);
    const mails = await sendEmail(first!.eventId);
    expect(mails).toHaveLength(1);
    const mail = mails[0]!;
    expect(mail).toMatch(/^To: .*billing@low-mail\.example/m);
    expect(mail).toContain(owner.email);
    expect(mail).toContain('Subject: Low balance:');
    expect(mail).toContain(formatCents(seed - 2 * FORMATION));
    expect(mail).toContain(formatCents(threshold));
    expect(mail).toContain(alert.balanceTransactionId);
    expect(mail).toContain('/balance/top-up');

    // Back at or above the threshold, then below again: one more email.
    await creditBalance(t.ctx.pool, live, 3 * FORMATION, 'Wire received', null); // seed again
    await order(); // threshold + 0.5 F
    expect(await emailJobs(tenant)).toHaveLength(1);
    await order(); // threshold - 0.5 F: the second crossing
    const jobs = await emailJobs(tenant);
    expect(jobs).toHaveLength(2);
    const alerts = await t.ctx.pool.query(
      `SELECT id FROM events WHERE organization_id = $1 AND environment = 'live' AND type = 'balance.low' ORDER BY id`,
      [tenant.organizationId],
    );
    expect(jobs.map((j) => j.eventId)).toEqual(alerts.rows.map((r) => r.id));
  });

  it('is not sent for the test balance, whose crossing is told by the event alone', async () => {
    const tenant = await t.newTenant('Low Balance Test Mode Co');
    expect((await setThreshold(tenant, dollars(10 * FORMATION))).statusCode).toBe(200);
    await memberSession(t, tenant.organizationId, 'owner');
    const user = await createUser(tenant);
    expect(
      (await tenant.api('POST', '/balance/top-ups', { amount: dollars(10 * FORMATION + Math.round(FORMATION / 2)) }))
        .statusCode,
    ).toBe(201);
    for (let i = 0; i < 2; i++)
      expect((await tenant.api('POST', '/orders', formationBody(user.id, 'DE'))).statusCode).toBe(201);
    const [alert] = await eventsOf(t, tenant, 'test', 'balance.low');
    expect(alert).toMatchObject({ balance: dollars(9 * FORMATION + Math.round(FORMATION / 2)) });
    expect(await emailJobs(tenant)).toEqual([]);
    // Even a job for a test crossing (queued by hand) sends nothing.
    const { rows } = await t.ctx.pool.query(
      `SELECT id FROM events WHERE organization_id = $1 AND type = 'balance.low'`,
      [tenant.organizationId],
    );
    expect(await sendEmail(rows[0].id)).toEqual([]);
  });
});

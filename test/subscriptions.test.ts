import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Environment } from '../src/context.js';
import { renewSubscriptionsTask } from '../src/modules/subscriptions/renew-subscriptions.task.js';
import { renewDueSubscriptions } from '../src/modules/subscriptions/subscriptions.service.js';
import { buildTaskList, startWorker } from '../src/worker.js';
import { runCli } from './cli-runner.js';
import { createCompany, createOrderRow } from './factories.js';
import { createTestApp, type TestApp, type TestTenant } from './harness.js';
import {
  balanceCents,
  credit,
  einObject,
  formationBody,
  newUser,
  stateFee,
  toCents,
  wholesale,
} from './orders-fixtures.js';

/*
 * Yearly renewal of registered agent and annual report subscriptions (SUB-1 to SUB-9). Prices come from
 * data/price-catalog.json and data/state-fees.json (orders-fixtures) or are set here through the admin API; dates are
 * computed here from the order's createdAt.
 */

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

interface Txn {
  type: string;
  amount: number;
  lineType: string;
  orderId: string | null;
  description: string;
}

/** 'YYYY-MM-DD' plus whole years; Feb 29 becomes Feb 28 in a common year. */
function plusYears(date: string, years: number): string {
  const [y, m, d] = date.split('-').map(Number);
  const leap = (yy: number) => (yy % 4 === 0 && yy % 100 !== 0) || yy % 400 === 0;
  const day = m === 2 && d === 29 && !leap(y + years) ? 28 : d;
  return `${y + years}-${String(m).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
}

function plusDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

/** Places a registered agent (or annual report) order for a new company of the tenant; returns the item. */
async function subscribe(
  tenant: TestTenant,
  product: 'registeredAgent' | 'annualReport',
  opts: { state?: string; env?: Environment; entityType?: 'LLC' | 'CORP' } = {},
) {
  const env = opts.env ?? 'test';
  const { user, company } = await createCompany(tenant, env, opts.entityType ? { entityType: opts.entityType } : {});
  const body = {
    userId: user.id,
    companyId: company.id,
    filingState: opts.state ?? 'DE',
    [product]: product === 'registeredAgent' ? { isChangeOfAgent: false } : {},
  };
  const res = await tenant.api('POST', '/orders', body, { env });
  expect(res.statusCode, res.body).toBe(201);
  const item = res.json().items[0];
  return {
    ...item,
    companyId: company.id as string,
    userId: user.id as string,
    day0: (item.createdAt as string).slice(0, 10),
  };
}

/** Runs the renewal for one tenant (other tests' tenants share this database). */
function renew(tenant: TestTenant, asOf: string) {
  return renewDueSubscriptions(t.ctx, { asOf, organizationId: tenant.organizationId, actor: 'test' });
}

async function debitsOf(tenant: TestTenant, orderId: string, env: Environment = 'test'): Promise<Txn[]> {
  const res = await tenant.api('GET', '/balance-transactions?limit=100', undefined, { env });
  return (res.json().data as Txn[]).filter((e) => e.orderId === orderId && e.type === 'debit');
}

async function statusEvents(tenant: TestTenant, orderId: string) {
  const res = await tenant.api('GET', `/events?orderId=${orderId}&limit=100`);
  expect(res.statusCode, res.body).toBe(200);
  return (res.json().data as Array<{ type: string; data: Record<string, unknown> }>).filter(
    (e) => e.type === 'filing.status_changed',
  );
}

async function orderRow(orderId: string) {
  const { rows } = await t.ctx.pool.query('SELECT subscription_status, current_period_end FROM orders WHERE id = $1', [
    orderId,
  ]);
  return rows[0] as { subscription_status: string | null; current_period_end: string | null };
}

const cents = (entries: Txn[]) => entries.reduce((s, e) => s - toCents(e.amount), 0);

describe('subscription periods', () => {
  it('a registered agent or annual report order is paid for one year from its placement date', async () => {
    const tenant = await t.newTenant();
    await credit(tenant, 1000);
    const ra = await subscribe(tenant, 'registeredAgent');
    const ar = await subscribe(tenant, 'annualReport');
    for (const o of [ra, ar]) {
      expect(o.subscriptionStatus).toBe('active');
      expect(await orderRow(o.orderId)).toEqual({
        subscription_status: 'active',
        current_period_end: plusYears(o.day0, 1),
      });
    }
    // The day before the year ends nothing is due.
    const early = await renew(tenant, plusDays(plusYears(ra.day0, 1), -1));
    expect(early.outcomes).toEqual([]);
  });
});

describe('balance-billed renewal', () => {
  it('debits the CURRENT wholesale of registered_agent once, linked to the order, and moves the period a year', async () => {
    const tenant = await t.newTenant();
    await credit(tenant, 1000);
    const ra = await subscribe(tenant, 'registeredAgent');
    expect(cents(await debitsOf(tenant, ra.orderId))).toBe(wholesale('registered_agent'));
    // The operator raises this organization's wholesale after the order was placed: the renewal uses the new price.
    const newWholesale = wholesale('registered_agent') + 1700; // whole dollars, as the admin API requires
    const put = await t.admin('PUT', `/organizations/${tenant.organizationId}/wholesale-prices/registered_agent`, {
      wholesaleAmount: newWholesale / 100,
    });
    expect(put.statusCode, put.body).toBe(200);

    const due = plusYears(ra.day0, 1);
    const before = await balanceCents(tenant);
    const run = await renew(tenant, due);
    expect(run.outcomes).toEqual([
      expect.objectContaining({ orderId: ra.orderId, result: 'renewed', amountCents: newWholesale, periods: 1 }),
    ]);
    expect(before - (await balanceCents(tenant))).toBe(newWholesale);
    const debits = await debitsOf(tenant, ra.orderId);
    expect(debits).toHaveLength(2);
    expect(debits.find((d) => toCents(d.amount) === -newWholesale)).toMatchObject({
      lineType: 'registered_agent',
      orderId: ra.orderId,
    });
    expect(await orderRow(ra.orderId)).toEqual({
      subscription_status: 'active',
      current_period_end: plusYears(ra.day0, 2),
    });
    // A plain renewal changes no status, so it emits no event beyond the placement's.
    expect(await statusEvents(tenant, ra.orderId)).toHaveLength(1);
  });

  it('is idempotent: the same date again, or two runs at once, debit once', async () => {
    const tenant = await t.newTenant();
    await credit(tenant, 1000);
    const ra = await subscribe(tenant, 'registeredAgent');
    const due = plusYears(ra.day0, 1);
    const runs = await Promise.all([renew(tenant, due), renew(tenant, due)]);
    expect(runs.flatMap((r) => r.outcomes).filter((o) => o.result === 'renewed')).toHaveLength(1);
    const again = await renew(tenant, due);
    expect(again.outcomes).toEqual([]);
    expect(await debitsOf(tenant, ra.orderId)).toHaveLength(2); // placement + one renewal
    const { rows } = await t.ctx.pool.query(
      'SELECT period_start, period_end FROM subscription_renewals WHERE order_id = $1',
      [ra.orderId],
    );
    expect(rows).toEqual([{ period_start: due, period_end: plusYears(ra.day0, 2) }]);
  });

  it("an annual report renews at annual_report wholesale + the state's current annual report fee", async () => {
    const tenant = await t.newTenant();
    await credit(tenant, 2000);
    const ar = await subscribe(tenant, 'annualReport', { state: 'CA', entityType: 'CORP' });
    expect(cents(await debitsOf(tenant, ar.orderId))).toBe(
      wholesale('annual_report') + stateFee('CA', 'AnnualReport', 'CORP'),
    );
    // The state changes its fee during the year; the renewal charges the schedule as it is then.
    const newFee = stateFee('CA', 'AnnualReport', 'CORP') + 500;
    // California's fee is shared by every test of this file: put back as seeded even when an assertion fails.
    try {
      const put = await t.admin('PUT', '/state-fees/CA', {
        corpAnnualReport: newFee / 100,
        note: 'subscriptions test',
      });
      expect(put.statusCode, put.body).toBe(200);
      const run = await renew(tenant, plusYears(ar.day0, 1));
      expect(run.outcomes).toEqual([
        expect.objectContaining({
          orderId: ar.orderId,
          result: 'renewed',
          amountCents: wholesale('annual_report') + newFee,
        }),
      ]);
      const renewal = (await debitsOf(tenant, ar.orderId)).filter((d) => d.description.includes('renewal'));
      expect(renewal.map((d) => [d.lineType, -toCents(d.amount)]).sort()).toEqual(
        [
          ['annual_report', wholesale('annual_report')],
          ['state_fee', newFee],
        ].sort(),
      );
    } finally {
      const restored = await t.admin('PUT', '/state-fees/CA', {
        corpAnnualReport: stateFee('CA', 'AnnualReport', 'CORP') / 100,
      });
      expect(restored.statusCode, restored.body).toBe(200);
    }
  });

  it('renews live subscriptions from the live balance, test ones from the test balance', async () => {
    const tenant = await t.newTenant();
    const live = await t.admin('POST', `/organizations/${tenant.organizationId}/balance-credits`, {
      environment: 'live',
      amount: 500,
    });
    expect(live.statusCode, live.body).toBe(201);
    await credit(tenant, 500);
    const liveRa = await subscribe(tenant, 'registeredAgent', { env: 'live' });
    const testRa = await subscribe(tenant, 'registeredAgent');
    const [liveBefore, testBefore] = [await balanceCents(tenant, 'live'), await balanceCents(tenant, 'test')];
    const run = await renew(tenant, plusYears(liveRa.day0, 1));
    expect(run.outcomes.map((o) => [o.orderId, o.environment, o.result]).sort()).toEqual(
      [
        [liveRa.orderId, 'live', 'renewed'],
        [testRa.orderId, 'test', 'renewed'],
      ].sort(),
    );
    expect(liveBefore - (await balanceCents(tenant, 'live'))).toBe(wholesale('registered_agent'));
    expect(testBefore - (await balanceCents(tenant, 'test'))).toBe(wholesale('registered_agent'));
  });
});

describe('past_due', () => {
  it('goes past_due without a debit when the balance is short, with an event, and back to active after a credit', async () => {
    const tenant = await t.newTenant();
    await credit(tenant, wholesale('registered_agent') / 100);
    const ra = await subscribe(tenant, 'registeredAgent');
    expect(await balanceCents(tenant)).toBe(0);
    const due = plusYears(ra.day0, 1);

    const first = await renew(tenant, due);
    expect(first.outcomes).toEqual([
      expect.objectContaining({
        orderId: ra.orderId,
        result: 'past_due',
        subscriptionStatus: 'past_due',
        amountCents: 0,
      }),
    ]);
    expect(await debitsOf(tenant, ra.orderId)).toHaveLength(1);
    expect(await orderRow(ra.orderId)).toEqual({ subscription_status: 'past_due', current_period_end: due });
    let events = await statusEvents(tenant, ra.orderId);
    expect(events).toHaveLength(2);
    expect(events.map((e) => e.data.subscriptionStatus)).toContain('past_due');
    expect(events.find((e) => e.data.subscriptionStatus === 'past_due')!.data).toMatchObject({
      orderId: ra.orderId,
      orderType: 'registered_agent',
      filingStatus: 'submitted',
    });

    // Still short the next day: nothing changes and nothing more is emitted.
    const second = await renew(tenant, plusDays(due, 1));
    expect(second.outcomes).toEqual([expect.objectContaining({ orderId: ra.orderId, result: 'still_past_due' })]);
    expect(await statusEvents(tenant, ra.orderId)).toHaveLength(2);

    await credit(tenant, wholesale('registered_agent') / 100);
    const third = await renew(tenant, plusDays(due, 2));
    expect(third.outcomes).toEqual([
      expect.objectContaining({
        orderId: ra.orderId,
        result: 'reactivated',
        subscriptionStatus: 'active',
        amountCents: wholesale('registered_agent'),
      }),
    ]);
    expect(await balanceCents(tenant)).toBe(0);
    expect(await orderRow(ra.orderId)).toEqual({
      subscription_status: 'active',
      current_period_end: plusYears(ra.day0, 2),
    });
    events = await statusEvents(tenant, ra.orderId);
    expect(events).toHaveLength(3);
    expect(events.filter((e) => e.data.subscriptionStatus === 'active')).toHaveLength(2); // placement + reactivation

    const { rows } = await t.ctx.pool.query(
      'SELECT from_status, to_status, reason, event_id FROM subscription_status_changes WHERE order_id = $1 ORDER BY created_at',
      [ra.orderId],
    );
    expect(rows.map((r) => [r.from_status, r.to_status, r.reason])).toEqual([
      ['active', 'past_due', 'insufficient_balance'],
      ['past_due', 'active', 'paid'],
    ]);
    expect(rows.every((r) => events.some((e) => (e as unknown as { id: string }).id === r.event_id))).toBe(true);
  });

  it('a subscription past_due for two years is charged both years when it can pay', async () => {
    const tenant = await t.newTenant();
    await credit(tenant, wholesale('registered_agent') / 100);
    const ra = await subscribe(tenant, 'registeredAgent');
    await renew(tenant, plusYears(ra.day0, 1));
    await renew(tenant, plusYears(ra.day0, 2));
    expect((await orderRow(ra.orderId)).subscription_status).toBe('past_due');
    await credit(tenant, (2 * wholesale('registered_agent')) / 100);
    const run = await renew(tenant, plusYears(ra.day0, 2));
    expect(run.outcomes).toEqual([
      expect.objectContaining({ result: 'reactivated', periods: 2, amountCents: 2 * wholesale('registered_agent') }),
    ]);
    expect(await orderRow(ra.orderId)).toEqual({
      subscription_status: 'active',
      current_period_end: plusYears(ra.day0, 3),
    });
  });

  it('a past_due registered agent replaced by newer service in the same state is canceled, not charged', async () => {
    const tenant = await t.newTenant();
    await credit(tenant, wholesale('registered_agent') / 100);
    const old = await subscribe(tenant, 'registeredAgent');
    await renew(tenant, plusYears(old.day0, 1));
    await credit(tenant, 1000);
    const res = await tenant.api('POST', '/orders', {
      userId: old.userId,
      companyId: old.companyId,
      filingState: 'DE',
      registeredAgent: { isChangeOfAgent: false },
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().items[0].orderId).not.toBe(old.orderId);
    const newer = res.json().items[0].orderId as string;
    const before = await balanceCents(tenant);
    // Placed on the same day, so the newer service falls due on the same date and renews normally.
    const run = await renew(tenant, plusDays(plusYears(old.day0, 1), 1));
    expect(run.outcomes).toContainEqual(
      expect.objectContaining({
        orderId: old.orderId,
        result: 'canceled',
        subscriptionStatus: 'canceled',
        amountCents: 0,
      }),
    );
    expect(run.outcomes).toContainEqual(expect.objectContaining({ orderId: newer, result: 'renewed' }));
    expect(before - (await balanceCents(tenant))).toBe(wholesale('registered_agent'));
    expect(await debitsOf(tenant, old.orderId)).toHaveLength(1);
    expect((await statusEvents(tenant, old.orderId)).map((e) => e.data.subscriptionStatus).sort()).toEqual([
      'active',
      'canceled',
      'past_due',
    ]);
  });

  it('a checkout-paid subscription goes past_due at period end (no stored card) and stays there', async () => {
    const tenant = await t.newTenant();
    const { orderId } = await createOrderRow(
      t.ctx,
      { organizationId: tenant.organizationId, environment: 'test' },
      { orderType: 'registered_agent', billing: 'checkout' },
    );
    // The factory places through the orders module, which gives the subscription its first year.
    const { rows } = await t.ctx.pool.query('SELECT current_period_end FROM orders WHERE id = $1', [orderId]);
    const due = rows[0].current_period_end as string;
    await credit(tenant, 1000);
    const first = await renew(tenant, due);
    expect(first.outcomes).toEqual([expect.objectContaining({ orderId, result: 'past_due', amountCents: 0 })]);
    expect(await balanceCents(tenant)).toBe(toCents(1000));
    expect((await statusEvents(tenant, orderId)).map((e) => e.data.subscriptionStatus)).toEqual(['past_due', 'active']);
    expect((await renew(tenant, plusYears(due, 1))).outcomes).toEqual([]);
  });
});

describe('what never renews', () => {
  it('cancelled subscriptions and one-time orders', async () => {
    const tenant = await t.newTenant();
    await credit(tenant, 5000);
    const ra = await subscribe(tenant, 'registeredAgent');
    const cancel = await tenant.api('POST', `/test_helpers/orders/${ra.orderId}/advance`, {
      filingStatus: 'cancelled',
    });
    expect(cancel.statusCode, cancel.body).toBe(200);
    expect(cancel.json().subscriptionStatus).toBe('canceled');
    const user = await newUser(tenant);
    const formation = await tenant.api(
      'POST',
      '/orders',
      formationBody(user.id, 'TX', { extra: { ein: einObject() } }),
    );
    expect(formation.statusCode, formation.body).toBe(201);
    const oneTime = formation.json().items as Array<{ orderId: string; subscriptionStatus: string | null }>;
    expect(oneTime.every((i) => i.subscriptionStatus === null)).toBe(true);
    for (const i of oneTime) expect((await orderRow(i.orderId)).current_period_end).toBeNull();

    const before = await balanceCents(tenant);
    const run = await renew(tenant, plusYears(ra.day0, 5));
    expect(run.outcomes).toEqual([]);
    expect(await balanceCents(tenant)).toBe(before);
    expect(await orderRow(ra.orderId)).toMatchObject({ subscription_status: 'canceled' });
  });
});

describe('worker and CLI', () => {
  it('the worker schedules the daily renewal, and its task renews what is due on the cron date', async () => {
    const worker = await startWorker(t.ctx);
    try {
      // graphile-worker registers its cron items in the background right after start.
      await vi.waitFor(
        async () => {
          const { rows } = await t.ctx.pool.query('SELECT identifier FROM graphile_worker._private_known_crontabs');
          expect(rows.map((r) => r.identifier)).toContain('subscriptions:renew-daily');
        },
        { timeout: 15_000, interval: 100 },
      );
    } finally {
      await worker.stop();
    }
    const tenant = await t.newTenant();
    await credit(tenant, 1000);
    const ra = await subscribe(tenant, 'registeredAgent');
    const task = buildTaskList(t.ctx)[renewSubscriptionsTask.name]!;
    // The job's helpers as graphile-worker passes them, as far as the task list reads them (the job's span).
    const helpers = { job: { id: '1', attempts: 1, max_attempts: 1 } };
    await task({ _cron: { ts: `${plusYears(ra.day0, 1)}T04:17:00.000Z`, backfilled: false } }, helpers as never);
    expect(await orderRow(ra.orderId)).toEqual({
      subscription_status: 'active',
      current_period_end: plusYears(ra.day0, 2),
    });
  });

  it('`subscriptions renew --as-of … --json` renews and reports in dollars; a second run finds nothing', async () => {
    const tenant = await t.newTenant();
    await credit(tenant, 1000);
    const ra = await subscribe(tenant, 'registeredAgent');
    const due = plusYears(ra.day0, 1);
    const renew = async (...args: string[]) => {
      const res = await runCli(t, ['subscriptions', 'renew', ...args]);
      expect(res.code, res.stderr).toBe(0);
      return JSON.parse(res.stdout);
    };
    const first = await renew('--as-of', due, '--org', tenant.organizationId, '--json');
    expect(first).toMatchObject({ asOf: due, counts: { renewed: 1, failed: 0 } });
    expect(first.subscriptions).toEqual([
      expect.objectContaining({ orderId: ra.orderId, result: 'renewed', amount: wholesale('registered_agent') / 100 }),
    ]);
    const second = await renew('--as-of', due, '--org', tenant.organizationId, '--json');
    expect(second.subscriptions).toEqual([]);
    const refused = await runCli(t, ['subscriptions', 'renew', '--as-of', '2026-02-30']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('--as-of');
  }, 120_000);
});

import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validatorCompiler } from '../src/lib/validation.js';
import { WEBHOOK_EVENT_SCHEMAS } from '../src/modules/webhooks/webhook-payloads.js';
import { complianceRemindersTask } from '../src/modules/compliance/compliance-reminders.task.js';
import { cronItems, taskDefinitions } from '../src/tasks.js';
import { corpFields, createCompany, createOrderRow, tenantOf } from './factories.js';
import { createTestApp, type TestApp, type TestTenant } from './harness.js';

/** True when `event` matches the documented webhook payload of its type. */
const matchesSchema = (type: keyof typeof WEBHOOK_EVENT_SCHEMAS, event: unknown) =>
  (
    validatorCompiler({ schema: WEBHOOK_EVENT_SCHEMAS[type], httpPart: 'body', method: 'POST', url: '/' }) as (
      v: unknown,
    ) => boolean
  )(event);

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

/** An order of the company placed and moved through the orders module: its filing year, status and filing date set. */
async function order(
  tenant: TestTenant,
  companyId: string,
  orderType: string,
  state: string,
  status: 'submitted' | 'pending' | 'filed' | 'cancelled',
  extra: { filingYear?: number; years?: number; filingDate?: string } = {},
) {
  const { orderId } = await createOrderRow(t.ctx, tenantOf(tenant), {
    companyId,
    orderType,
    filingState: state,
    filingStatus: status,
    details: extra.filingYear ? { filingYear: extra.filingYear, ...(extra.years ? { years: extra.years } : {}) } : {},
    filingDate: extra.filingDate,
  });
  return orderId;
}

// The factory LLC: Delaware, formed 2024-03-01 (Delaware LLC tax: June 1 every year, $300 in the fee schedule).
const DE_LLC_2030 = {
  jurisdiction: 'DE',
  presence: 'domestic',
  kind: 'annual_report',
  dueDate: '2030-06-01',
  windowOpensOn: null,
  filingYear: 2030,
};

describe('GET /companies/{companyIdOrSlug}/compliance-calendar', () => {
  it("lists the formation state's reports in the range with status, fee, source and orderability", async () => {
    const tenant = await t.newTenant();
    const { company } = await createCompany(tenant);
    const res = await tenant.api('GET', `/companies/${company.slug}/compliance-calendar?from=2030-01-01&to=2031-12-31`);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ companyId: company.id, from: '2030-01-01', to: '2031-12-31' });
    expect(body.items).toEqual([
      expect.objectContaining({
        ...DE_LLC_2030,
        status: 'upcoming',
        estimatedStateFee: 300,
        orderable: true,
        orderId: null,
        coveredByPendingOrder: false,
      }),
      expect.objectContaining({ jurisdiction: 'DE', dueDate: '2031-06-01', filingYear: 2031 }),
    ]);
    expect(body.items[0]).toMatchObject({
      reportName: expect.any(String),
      confidence: expect.stringMatching(/^(high|medium|low)$/),
      sourceUrl: expect.stringMatching(/^https?:\/\//),
      id: expect.stringMatching(/^dl_20300601_/),
    });
  });

  it('adds every state of a filed foreign qualification, anchored on its filing date, sorted by due date', async () => {
    const tenant = await t.newTenant();
    const { company } = await createCompany(tenant);
    await order(tenant, company.id, 'foreign_qualification', 'CA', 'filed', { filingDate: '2025-02-10' });
    await order(tenant, company.id, 'foreign_qualification', 'TX', 'pending'); // not qualified yet
    const body = (
      await tenant.api('GET', `/companies/${company.id}/compliance-calendar?from=2030-01-01&to=2031-12-31`)
    ).json();
    // California LLC: biennial in odd years (registered 2025), due the end of the February anniversary month.
    expect(
      body.items.map((i: Record<string, unknown>) => `${i.jurisdiction} ${i.presence} ${i.dueDate} ${i.windowOpensOn}`),
    ).toEqual(['DE domestic 2030-06-01 null', 'CA foreign 2031-02-28 2030-09-01', 'DE domestic 2031-06-01 null']);
  });

  it('shows filed when an annual report order for the state and year was filed, and a pending order as covering', async () => {
    const tenant = await t.newTenant();
    const { company } = await createCompany(tenant);
    const filed = await order(tenant, company.id, 'annual_report', 'DE', 'filed', { filingYear: 2030 });
    const pending = await order(tenant, company.id, 'annual_report', 'DE', 'pending', { filingYear: 2031 });
    await order(tenant, company.id, 'annual_report', 'DE', 'filed', { filingYear: 2032 }); // another year
    const body = (
      await tenant.api('GET', `/companies/${company.id}/compliance-calendar?from=2030-01-01&to=2031-12-31`)
    ).json();
    expect(body.items).toEqual([
      expect.objectContaining({ dueDate: '2030-06-01', status: 'filed', orderId: filed, coveredByPendingOrder: false }),
      expect.objectContaining({
        dueDate: '2031-06-01',
        status: 'upcoming',
        orderId: pending,
        coveredByPendingOrder: true,
      }),
    ]);
  });

  it('marks a past, unfiled report overdue', async () => {
    const tenant = await t.newTenant();
    const { company } = await createCompany(tenant);
    const body = (
      await tenant.api('GET', `/companies/${company.id}/compliance-calendar?from=2025-01-01&to=2025-12-31`)
    ).json();
    expect(body.items).toEqual([expect.objectContaining({ dueDate: '2025-06-01', status: 'overdue' })]);
  });

  it('defaults to today until 18 months ahead', async () => {
    const tenant = await t.newTenant();
    const { company } = await createCompany(tenant);
    const before = new Date().toISOString().slice(0, 10);
    const body = (await tenant.api('GET', `/companies/${company.id}/compliance-calendar`)).json();
    // The service's "today" lies between the readings before and after the call (a run may cross midnight).
    const after = new Date().toISOString().slice(0, 10);
    expect([before, after]).toContain(body.from);
    const today: string = body.from;
    const to = new Date(`${today}T00:00:00Z`);
    to.setUTCMonth(to.getUTCMonth() + 18);
    expect(body.to.slice(0, 7)).toBe(to.toISOString().slice(0, 7));
    expect(body.items.length).toBeGreaterThanOrEqual(1);
  });

  it('answers 409 naming formationDate for a company without one', async () => {
    const tenant = await t.newTenant();
    const { company } = await createCompany(tenant, 'test', { ...corpFields(), formationState: 'NY' });
    const res = await tenant.api('GET', `/companies/${company.id}/compliance-calendar`);
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({
      code: 'conflict',
      message: expect.stringContaining('formationDate'),
      errors: [{ field: 'formationDate' }],
    });
  });

  it("validates the range, naming the field, and hides other tenants' companies", async () => {
    const tenant = await t.newTenant();
    const { company } = await createCompany(tenant);
    const bad = await tenant.api('GET', `/companies/${company.id}/compliance-calendar?from=2025-02-30`);
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors[0].field).toBe('from');
    const backwards = await tenant.api(
      'GET',
      `/companies/${company.id}/compliance-calendar?from=2026-01-01&to=2025-01-01`,
    );
    expect(backwards.statusCode).toBe(400);
    expect(backwards.json().errors[0].field).toBe('to');
    const other = await t.newTenant();
    expect((await other.api('GET', `/companies/${company.id}/compliance-calendar`)).statusCode).toBe(404);
    expect(
      (await tenant.api('GET', `/companies/${company.id}/compliance-calendar`, undefined, { env: 'live' })).statusCode,
    ).toBe(404);
  });
});

describe('GET /compliance-deadlines', () => {
  it("lists every company's deadlines by due date, filtered and keyset-paginated", async () => {
    const tenant = await t.newTenant();
    const { company: llc } = await createCompany(tenant);
    // Wyoming corporation formed in May: due May 1 (first day of the anniversary month).
    const { company: corp } = await createCompany(tenant, 'test', {
      ...corpFields(),
      formationState: 'WY',
      formationDate: '2024-05-10',
    });
    await createCompany(tenant, 'test', { ...corpFields(), legalName: 'No Date Inc' }); // no formation date: left out
    const q = 'from=2030-01-01&to=2030-12-31';
    const first = (await tenant.api('GET', `/compliance-deadlines?${q}&limit=1`)).json();
    expect(first).toMatchObject({
      object: 'list',
      hasMore: true,
      data: [{ companyId: corp.id, jurisdiction: 'WY', dueDate: '2030-05-01' }],
    });
    const second = (
      await tenant.api('GET', `/compliance-deadlines?${q}&limit=1&startingAfter=${first.data[0].id}`)
    ).json();
    expect(second).toMatchObject({
      hasMore: false,
      data: [{ companyId: llc.id, jurisdiction: 'DE', dueDate: '2030-06-01' }],
    });
    const alias = (
      await tenant.api('GET', `/compliance-deadlines?${q}&limit=1&starting_after=${first.data[0].id}`)
    ).json();
    expect(alias.data[0].id).toBe(second.data[0].id);

    const de = (await tenant.api('GET', `/compliance-deadlines?${q}&jurisdiction=DE`)).json();
    expect(de.data.map((d: { companyId: string }) => d.companyId)).toEqual([llc.id]);
    expect((await tenant.api('GET', `/compliance-deadlines?${q}&status=upcoming`)).json().data).toHaveLength(2);
    expect((await tenant.api('GET', `/compliance-deadlines?${q}&status=overdue`)).json().data).toEqual([]);
    expect(
      (await tenant.api('GET', '/compliance-deadlines?from=2025-01-01&to=2025-12-31&status=overdue')).json().data,
    ).toHaveLength(2);

    const badCursor = await tenant.api('GET', `/compliance-deadlines?${q}&startingAfter=comp_x`);
    expect(badCursor.statusCode).toBe(400);
    expect(badCursor.json().errors[0].field).toBe('startingAfter');
    expect((await tenant.api('GET', `/compliance-deadlines?${q}&jurisdiction=ZZ`)).statusCode).toBe(400);
    expect((await (await t.newTenant()).api('GET', `/compliance-deadlines?${q}`)).json().data).toEqual([]);
    // A late start alone: the default end stops at the last date there is, instead of refusing a `to` nobody sent.
    const late = await tenant.api('GET', '/compliance-deadlines?from=9998-08-01');
    expect(late.statusCode, late.body).toBe(200);
  });
});

describe('compliance reminders (POST /test_helpers/compliance-reminders/run and the daily job)', () => {
  const run = (tenant: TestTenant, asOf: string) =>
    tenant.api('POST', '/test_helpers/compliance-reminders/run', { asOf });

  it('emits deadline_approaching at 60, 30 and 7 days and deadline_missed the day after, each once', async () => {
    const tenant = await t.newTenant();
    const { company } = await createCompany(tenant);
    const sixty = await run(tenant, '2030-04-02');
    expect(sixty.statusCode, sixty.body).toBe(200);
    expect(sixty.json().emitted).toEqual([
      expect.objectContaining({
        type: 'compliance.deadline_approaching',
        companyId: company.id,
        jurisdiction: 'DE',
        kind: 'annual_report',
        dueDate: '2030-06-01',
        daysUntilDue: 60,
      }),
    ]);
    expect((await run(tenant, '2030-04-02')).json().emitted).toEqual([]);
    expect((await run(tenant, '2030-04-20')).json().emitted).toEqual([]);
    expect(
      (await run(tenant, '2030-05-02')).json().emitted.map((e: { daysUntilDue: number }) => e.daysUntilDue),
    ).toEqual([30]);
    expect((await run(tenant, '2030-05-20')).json().emitted).toEqual([]);
    expect(
      (await run(tenant, '2030-05-25')).json().emitted.map((e: { daysUntilDue: number }) => e.daysUntilDue),
    ).toEqual([7]);
    expect((await run(tenant, '2030-06-01')).json().emitted).toEqual([]);
    const missed = (await run(tenant, '2030-06-02')).json().emitted;
    expect(missed).toEqual([
      expect.objectContaining({ type: 'compliance.deadline_missed', dueDate: '2030-06-01', daysUntilDue: -1 }),
    ]);
    expect((await run(tenant, '2030-06-03')).json().emitted).toEqual([]);

    const event = (await tenant.api('GET', `/events/${sixty.json().emitted[0].eventId}`)).json();
    expect(event).toMatchObject({
      type: 'compliance.deadline_approaching',
      data: {
        companyId: company.id,
        jurisdiction: 'DE',
        kind: 'annual_report',
        dueDate: '2030-06-01',
        daysUntilDue: 60,
        reportName: expect.any(String),
        orderable: true,
      },
    });
    expect(matchesSchema('compliance.deadline_approaching', event)).toBe(true);
    const missedEvent = (await tenant.api('GET', `/events/${missed[0].eventId}`)).json();
    expect(matchesSchema('compliance.deadline_missed', missedEvent)).toBe(true);
  });

  it('first seen late, only the tightest threshold is sent', async () => {
    const tenant = await t.newTenant();
    await createCompany(tenant);
    expect(
      (await run(tenant, '2030-05-20')).json().emitted.map((e: { daysUntilDue: number }) => e.daysUntilDue),
    ).toEqual([12]);
  });

  it('sends nothing for a report covered by a filed or pending annual report order', async () => {
    const tenant = await t.newTenant();
    const { company: a } = await createCompany(tenant);
    const { company: b } = await createCompany(tenant);
    const { company: c } = await createCompany(tenant);
    await order(tenant, a.id, 'annual_report', 'DE', 'pending', { filingYear: 2030 });
    await order(tenant, b.id, 'annual_report', 'DE', 'filed', { filingYear: 2030 });
    await order(tenant, c.id, 'annual_report', 'DE', 'cancelled', { filingYear: 2030 });
    const emitted = (await run(tenant, '2030-04-02')).json().emitted;
    expect(emitted.map((e: { companyId: string }) => e.companyId)).toEqual([c.id]);
    expect((await run(tenant, '2030-06-02')).json().emitted.map((e: { companyId: string }) => e.companyId)).toEqual([
      c.id,
    ]);
  });

  it('runs for the calling test tenant only; the live address answers 404', async () => {
    const tenant = await t.newTenant();
    const other = await t.newTenant();
    await createCompany(other);
    await createCompany(tenant, 'live');
    expect((await run(tenant, '2030-04-02')).json().emitted).toEqual([]);
    const live = await tenant.api(
      'POST',
      '/test_helpers/compliance-reminders/run',
      { asOf: '2030-04-02' },
      { env: 'live' },
    );
    expect(live.statusCode).toBe(404);
    const bad = await run(tenant, '2030-13-01');
    expect(bad.statusCode).toBe(400);
  });

  it('the daily job is scheduled and reminds every tenant, live included, once', async () => {
    expect(cronItems.map((c) => c.task)).toContain(complianceRemindersTask.name);
    const tenant = await t.newTenant();
    const { company } = await createCompany(tenant, 'live');
    const task = taskDefinitions[complianceRemindersTask.name].handler(t.ctx);
    const helpers = {} as Parameters<typeof task>[1];
    await task({ asOf: '2031-04-02' }, helpers);
    await task({ asOf: '2031-04-02' }, helpers);
    const { rows } = await t.ctx.pool.query(
      `SELECT type, data FROM events WHERE organization_id = $1 AND environment = 'live' AND data->>'companyId' = $2`,
      [tenant.organizationId, company.id],
    );
    expect(rows).toEqual([
      {
        type: 'compliance.deadline_approaching',
        data: expect.objectContaining({ dueDate: '2031-06-01', daysUntilDue: 60 }),
      },
    ]);
  });

  it('webhook endpoints can subscribe to the reminder events', async () => {
    const tenant = await t.newTenant();
    const res = await tenant.api('POST', '/webhook-endpoints', {
      url: 'http://127.0.0.1:9/hooks',
      eventTypes: ['compliance.deadline_approaching', 'compliance.deadline_missed'],
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().eventTypes).toEqual(['compliance.deadline_approaching', 'compliance.deadline_missed']);
  });

  it('reaches the endpoints subscribed to it, never one subscribed to the filing and document events only', async () => {
    const tenant = await t.newTenant();
    const create = async (eventTypes: string[]) =>
      (await tenant.api('POST', '/webhook-endpoints', { url: 'http://127.0.0.1:9/hooks', eventTypes })).json()
        .id as string;
    const existing = await create(['filing.status_changed', 'document.uploaded']);
    const reminders = await create(['compliance.deadline_approaching']);
    const { company, user } = await createCompany(tenant);
    const [reminder] = (await run(tenant, '2030-04-02')).json().emitted;
    const { orderId } = await createOrderRow(t.ctx, tenantOf(tenant), {
      companyId: company.id,
      userId: user.id,
      orderType: 'annual_report',
    });
    expect(
      (await tenant.api('POST', `/test_helpers/orders/${orderId}/advance`, { filingStatus: 'pending' })).statusCode,
    ).toBe(200);
    const { rows } = await t.ctx.pool.query<{ endpoint_id: string; type: string }>(
      `SELECT DISTINCT d.endpoint_id, e.type FROM webhook_deliveries d JOIN events e ON e.id = d.event_id WHERE d.organization_id = $1 ORDER BY e.type`,
      [tenant.organizationId],
    );
    expect(rows).toEqual([
      { endpoint_id: reminders, type: 'compliance.deadline_approaching' },
      { endpoint_id: existing, type: 'filing.status_changed' },
    ]);
    expect(reminder.type).toBe('compliance.deadline_approaching');
  });
});

describe('operators edit the rules (admin API)', () => {
  it('changes a rule, keeps who changed it, and calendars follow', async () => {
    const tenant = await t.newTenant();
    const { company } = await createCompany(tenant, 'test', { formationState: 'MT' });
    const before = (
      await tenant.api('GET', `/companies/${company.id}/compliance-calendar?from=2030-01-01&to=2030-12-31`)
    ).json();
    expect(before.items.map((i: { dueDate: string }) => i.dueDate)).toEqual(['2030-04-15']);
    // Montana's rule is shared by every test of this file: put back even when an assertion fails.
    try {
      const res = await t.admin('PUT', '/compliance-rules/mt', {
        llc: { params: { month: 5, day: 1 } },
        note: 'Statute amended',
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ state: 'MT', updatedBy: 'operator', llc: { params: { month: 5, day: 1 } } });
      const after = (
        await tenant.api('GET', `/companies/${company.id}/compliance-calendar?from=2030-01-01&to=2030-12-31`)
      ).json();
      expect(after.items.map((i: { dueDate: string }) => i.dueDate)).toEqual(['2030-05-01']);
      const log = (await t.admin('GET', '/compliance-rules/changes?state=MT')).json().data;
      expect(log[0]).toMatchObject({
        state: 'MT',
        changedBy: 'operator',
        note: 'Statute amended',
        before: { llc: { params: { month: 4, day: 15 } } },
        after: { llc: { params: { month: 5, day: 1 } } },
      });
    } finally {
      const restored = await t.admin('PUT', '/compliance-rules/MT', {
        llc: { params: { month: 4, day: 15 } },
        note: 'Restored after the test',
      });
      expect(restored.statusCode, restored.body).toBe(200);
    }
  });

  it('refuses a rule the calendar cannot compute, naming the field, and an unknown jurisdiction', async () => {
    const bad = await t.admin('PUT', '/compliance-rules/TX', { corporation: { ruleKind: 'weekly' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors).toEqual([expect.objectContaining({ field: 'corporation.ruleKind' })]);
    expect((await t.admin('PUT', '/compliance-rules/ZZ', { name: 'Nowhere' })).statusCode).toBe(404);
    const list = (await t.admin('GET', '/compliance-rules')).json().data;
    expect(list).toHaveLength(51);
  });
});

describe("Alabama's repealed corporate annual report in the fee schedule", () => {
  // Migration 060 corrects a schedule seeded from the fee data before the repeal was recorded in it.
  const correction = fs
    .readFileSync(new URL('../migrations/060.do.compliance-calendar.sql', import.meta.url), 'utf8')
    .replace(/^[\s\S]*?(?=UPDATE state_fees)/, '');
  const alabama = async () =>
    (await t.admin('GET', '/state-fees')).json().data.find((s: { state: string }) => s.state === 'AL');

  it("is $0 as seeded, a schedule seeded before the correction becomes $0, and an operator's own figure stays", async () => {
    expect(await alabama()).toMatchObject({ corpAnnualReport: 0, llcAnnualReport: 0 });
    try {
      await t.ctx.pool.query(
        `UPDATE state_fees SET corp_annual_report_cents = 1000, updated_by = 'seed' WHERE state = 'AL'`,
      );
      await t.ctx.pool.query(correction);
      const fixed = await alabama();
      expect(fixed).toMatchObject({ corpAnnualReport: 0, updatedBy: 'migration' });
      expect(fixed.source.history.at(-1)).toMatchObject({
        by: 'migration',
        changes: { corpAnnualReport: { from: 10, to: 0 } },
      });

      await t.ctx.pool.query(
        `UPDATE state_fees SET corp_annual_report_cents = 1500, updated_by = 'operator' WHERE state = 'AL'`,
      );
      await t.ctx.pool.query(correction);
      expect(await alabama()).toMatchObject({ corpAnnualReport: 15, updatedBy: 'operator' });
    } finally {
      await t.ctx.pool.query(`UPDATE state_fees SET corp_annual_report_cents = 0 WHERE state = 'AL'`);
    }
  });

  it('an Alabama corporation owes no report from 2025', async () => {
    const tenant = await t.newTenant();
    const { company } = await createCompany(tenant, 'test', {
      ...corpFields(),
      formationState: 'AL',
      formationDate: '2023-05-10',
    });
    const body = (
      await tenant.api('GET', `/companies/${company.id}/compliance-calendar?from=2025-01-01&to=2029-12-31`)
    ).json();
    expect(body).toMatchObject({ companyId: company.id, items: [] });
  });
});

describe('windows, effective dates, overrides and prepaid years (CAL-24 .. CAL-35)', () => {
  const run = (tenant: TestTenant, asOf: string) =>
    tenant.api('POST', '/test_helpers/compliance-reminders/run', { asOf });
  const calendar = async (tenant: TestTenant, companyId: string, from: string, to: string) => {
    const res = await tenant.api('GET', `/companies/${companyId}/compliance-calendar?from=${from}&to=${to}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json().items as Array<Record<string, unknown>>;
  };

  it('CAL-27: New York gives no reminder before its month opens; the first comes on March 1 (30 days)', async () => {
    const tenant = await t.newTenant();
    // Formed 2025-03-15: biennial statement due 2027-03-31, filed during March only (window 2027-03-01).
    await createCompany(tenant, 'test', { formationState: 'NY', formationDate: '2025-03-15' });
    expect((await run(tenant, '2027-01-30')).json().emitted).toEqual([]);
    expect((await run(tenant, '2027-02-28')).json().emitted).toEqual([]);
    const opened = (await run(tenant, '2027-03-01')).json().emitted;
    expect(opened).toEqual([expect.objectContaining({ jurisdiction: 'NY', dueDate: '2027-03-31', daysUntilDue: 30 })]);
  });

  it('CAL-24: a Texas report due Saturday 2027-05-15 is answered with both dates', async () => {
    const tenant = await t.newTenant();
    const { company } = await createCompany(tenant, 'test', { formationState: 'TX', formationDate: '2025-03-15' });
    const [item] = await calendar(tenant, company.id, '2027-01-01', '2027-12-31');
    expect(item).toMatchObject({
      jurisdiction: 'TX',
      statutoryDueDate: '2027-05-15',
      dueDate: '2027-05-17',
      windowOpensOn: '2027-01-01',
      dueDateNote: expect.stringContaining('next business day'),
    });
  });

  it('CAL-29, CAL-30: an operator moves the anchor (Colorado reinstatement), logged with who and why', async () => {
    const tenant = await t.newTenant();
    const { company } = await createCompany(tenant, 'test', { formationState: 'CO', formationDate: '2024-03-15' });
    // Colorado: due the last day of the second month after the anniversary month. March anniversary: 2027-05-31.
    expect((await calendar(tenant, company.id, '2027-01-01', '2027-12-31')).map((i) => i.dueDate)).toEqual([
      '2027-05-31',
    ]);
    const bad = await t.admin('PUT', `/companies/${company.id}/calendar-overrides/CO`, {
      anchorDate: '2026-08-10',
      note: 'reinstated',
    });
    expect(bad.statusCode).toBe(400);
    // The latest anchor accepted is the same day a year from today; the next day is refused.
    const now = new Date();
    const yearAhead = (days: number) =>
      new Date(Date.UTC(now.getUTCFullYear() + 1, now.getUTCMonth(), now.getUTCDate() + days))
        .toISOString()
        .slice(0, 10);
    const planned = await createCompany(tenant, 'test', { formationState: 'CO', formationDate: '2024-03-15' });
    const ahead = (anchorDate: string) =>
      t.admin('PUT', `/companies/${planned.company.id}/calendar-overrides/CO`, {
        anchorDate,
        anchorReason: 'first_day_of_business',
        note: 'planned',
      });
    expect((await ahead(yearAhead(1))).statusCode).toBe(400);
    expect((await ahead(yearAhead(0))).statusCode).toBe(200);
    // A state that is none, and dates that can only be typing mistakes, are refused naming the field.
    const refusals: Array<[string, string, string]> = [
      ['ZZ', '2026-08-10', 'state'],
      ['CO', '1700-02-01', 'anchorDate'],
      ['CO', '9999-12-31', 'anchorDate'],
    ];
    for (const [state, anchorDate, field] of refusals) {
      const refused = await t.admin('PUT', `/companies/${company.id}/calendar-overrides/${state}`, {
        anchorDate,
        anchorReason: 'reinstatement',
        note: 'typed wrong',
      });
      expect(refused.statusCode, `${state} ${anchorDate}`).toBe(400);
      expect(refused.json().errors.map((e: { field: string }) => e.field)).toEqual([field]);
    }
    const res = await t.admin('PUT', `/companies/${company.id}/calendar-overrides/CO`, {
      anchorDate: '2026-08-10',
      anchorReason: 'reinstatement',
      note: 'Reinstated by the Secretary of State on 2026-08-10',
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      anchorDate: '2026-08-10',
      anchorReason: 'reinstatement',
      updatedBy: 'operator',
    });
    // August anniversary: due 2027-10-31 (a Sunday; Colorado's date is not adjusted).
    expect((await calendar(tenant, company.id, '2027-01-01', '2027-12-31')).map((i) => i.dueDate)).toEqual([
      '2027-10-31',
    ]);
    const log = await t.ctx.pool.query(
      'SELECT changed_by, note, after FROM company_calendar_override_changes WHERE company_id = $1',
      [company.id],
    );
    expect(log.rows).toEqual([
      {
        changed_by: 'operator',
        note: 'Reinstated by the Secretary of State on 2026-08-10',
        after: { anchorDate: '2026-08-10', anchorReason: 'reinstatement', estimatedTax: false },
      },
    ]);
    await expect(
      t.ctx.pool.query('DELETE FROM company_calendar_override_changes WHERE company_id = $1', [company.id]),
    ).rejects.toThrow(/append-only/);
  });

  it('CAL-32: a Delaware corporation flagged for estimated tax shows June 1, September 1 and December 1', async () => {
    const tenant = await t.newTenant();
    const { company } = await createCompany(tenant, 'test', {
      ...corpFields(),
      formationState: 'DE',
      formationDate: '2025-03-15',
    });
    const flag = await t.admin('PUT', `/companies/${company.id}/calendar-overrides/DE`, {
      estimatedTax: true,
      note: 'Franchise tax over $5,000',
    });
    expect(flag.statusCode, flag.body).toBe(200);
    const items = await calendar(tenant, company.id, '2027-01-01', '2027-12-31');
    expect(items.map((i) => [i.kind, i.dueDate])).toEqual([
      ['annual_report', '2027-03-01'],
      ['estimated_tax', '2027-06-01'],
      ['estimated_tax', '2027-09-01'],
      ['estimated_tax', '2027-12-01'],
    ]);
    const llc = await createCompany(tenant);
    const refused = await t.admin('PUT', `/companies/${llc.company.id}/calendar-overrides/DE`, {
      estimatedTax: true,
      note: 'x',
    });
    expect(refused.statusCode).toBe(400);
    // Delaware's instalments are for its own corporations: a California corporation qualified there has none.
    const foreign = await createCompany(tenant, 'test', {
      ...corpFields(),
      formationState: 'CA',
      formationDate: '2025-03-15',
    });
    const abroad = await t.admin('PUT', `/companies/${foreign.company.id}/calendar-overrides/DE`, {
      estimatedTax: true,
      note: 'x',
    });
    expect(abroad.statusCode).toBe(400);
    expect(abroad.json().errors).toEqual([
      { field: 'estimatedTax', message: 'DE has no estimated tax instalments for a foreign CORP' },
    ]);
  });

  it('CAL-35: a filed Georgia order covering 2026-2028 marks those three years filed, not 2029', async () => {
    const tenant = await t.newTenant();
    const { company } = await createCompany(tenant, 'test', { formationState: 'GA', formationDate: '2025-03-15' });
    await order(tenant, company.id, 'annual_report', 'GA', 'filed', { filingYear: 2026, years: 3 });
    const items = await calendar(tenant, company.id, '2026-01-01', '2029-12-31');
    expect(items.map((i) => [i.dueDate, i.status])).toEqual([
      ['2026-04-01', 'filed'],
      ['2027-04-01', 'filed'],
      ['2028-04-01', 'filed'],
      ['2029-04-01', 'upcoming'],
    ]);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleClient, signedInOperator } from './console-helpers.js';
import { corpFields, createCompany } from './factories.js';
import { createTestApp, type TestApp, type TestTenant } from './harness.js';

/*
 * CAL-36: an operator sets and clears a company's anchor date override from the company's console page; the calendar
 * recomputes from it, and the change is logged as made by the signed-in operator with the reason the form requires.
 *
 * Worked out by hand for an Illinois LLC formed 2025-03-15 (805 ILCS 180/50-1: due by the last day of the month before
 * the anniversary month; 5 ILCS 70/1.11 moves a last day on a weekend or holiday):
 * - March anniversary: 2027-02-28 is a Sunday (2027-01-01 is a Friday; Feb 1 = Friday + 31 days = Monday; Feb 28 =
 *   Monday + 27 days = Sunday) and Monday 2027-03-01 is Casimir Pulaski Day (first Monday of March): due 2027-03-02.
 * - Anchored on 2026-07-01 (a conversion), the anniversary month is July: due the last day of June, 2027-06-30, a
 *   Wednesday (May 1 2027 is a Saturday, so May 31 is a Monday and June 30 = Monday + 30 days = Wednesday): not moved.
 */
let t: TestApp;
let c: ConsoleClient;
let operator: { id: string };
let tenant: TestTenant;

beforeAll(async () => {
  t = await createTestApp();
  ({ operator, client: c } = await signedInOperator(t.app, t.ctx.pool, 'Cora Calendar'));
  tenant = await t.newTenant('Calendar Platform');
});
afterAll(() => t.close());

const RANGE = '?from=2027-01-01&to=2027-12-31';

const apiDueDates = async (companyId: string) => {
  const res = await tenant.api('GET', `/companies/${companyId}/compliance-calendar${RANGE}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().items.map((i: { statutoryDueDate: string; dueDate: string }) => [i.statutoryDueDate, i.dueDate]);
};

/** Posts the company page's override form with the page's CSRF token. */
const postOverride = (companyId: string, form: Record<string, string>) =>
  c.post(`/console/companies/${companyId}/calendar-overrides`, { _csrf: c.csrf(), state: 'IL', ...form });

/** The IL conversion the tests set, with `reason`. */
const conversion = (reason: string) => ({ anchorDate: '2026-07-01', anchorReason: 'conversion', reason });

const changes = async (companyId: string) =>
  (
    await t.ctx.pool.query(
      'SELECT changed_by, note, after FROM company_calendar_override_changes WHERE company_id = $1 ORDER BY changed_at, id',
      [companyId],
    )
  ).rows;

describe('CAL-36: anchor date overrides in the console', () => {
  it("sets an override on the company's page, the calendar recomputes, and clearing it restores the date", async () => {
    const { company } = await createCompany(tenant, 'test', { formationState: 'IL', formationDate: '2025-03-15' });
    const page = await c.get(`/console/companies/${company.id}${RANGE}`);
    expect(page.statusCode, page.body).toBe(200);
    expect(page.body).toContain('2027-03-02');
    expect(page.body).toContain('statutory 2027-02-28');
    expect(page.body).toContain('No state of this company has an anchor date override.');
    expect(await apiDueDates(company.id)).toEqual([['2027-02-28', '2027-03-02']]);

    const set = await postOverride(company.id, {
      from: '2027-01-01',
      to: '2027-12-31',
      ...conversion('Converted from a corporation on 2026-07-01'),
    });
    expect(set.statusCode, set.body).toBe(303);
    expect(set.headers.location).toBe(`/console/companies/${company.id}${RANGE}`);

    const after = await c.get(`/console/companies/${company.id}${RANGE}`);
    expect(after.body).toContain('2027-06-30');
    expect(after.body).not.toContain('2027-03-02');
    expect(after.body).toMatch(/<td>2026-07-01<\/td>\s*<td>conversion<\/td>/);
    expect(after.body).toContain(`operator:${operator.id}`);
    expect(await apiDueDates(company.id)).toEqual([['2027-06-30', '2027-06-30']]);

    const clear = await postOverride(company.id, {
      clear: '1',
      reason: 'The conversion was entered for the wrong company',
    });
    expect(clear.statusCode, clear.body).toBe(303);
    const cleared = await c.get(`/console/companies/${company.id}${RANGE}`);
    expect(cleared.body).toContain('2027-03-02');
    expect(cleared.body).toContain('No state of this company has an anchor date override.');
    expect(await apiDueDates(company.id)).toEqual([['2027-02-28', '2027-03-02']]);

    expect(await changes(company.id)).toEqual([
      {
        changed_by: `operator:${operator.id}`,
        note: 'Converted from a corporation on 2026-07-01',
        after: { anchorDate: '2026-07-01', anchorReason: 'conversion', estimatedTax: false },
      },
      {
        changed_by: `operator:${operator.id}`,
        note: 'The conversion was entered for the wrong company',
        after: { anchorDate: null, anchorReason: null, estimatedTax: false },
      },
    ]);
  });

  it('refuses a change without a reason, naming the field, and changes nothing', async () => {
    const { company } = await createCompany(tenant, 'test', { formationState: 'IL', formationDate: '2025-03-15' });
    await c.get(`/console/companies/${company.id}`);
    const res = await postOverride(company.id, conversion('   '));
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('role="alert"');
    expect(res.body).toContain('Reason: is required');
    // The form keeps what was typed.
    expect(res.body).toContain('value="2026-07-01"');
    expect(await changes(company.id)).toEqual([]);
    expect(await apiDueDates(company.id)).toEqual([['2027-02-28', '2027-03-02']]);

    const noEvent = await postOverride(company.id, { ...conversion('Converted'), anchorReason: '' });
    expect(noEvent.statusCode).toBe(400);
    expect(noEvent.body).toContain('Event: is required with anchorDate');
  });

  it('refuses a form without the CSRF token, answers 404 for an unknown company, and says why a company has no calendar', async () => {
    const { company } = await createCompany(tenant, 'test', { formationState: 'IL', formationDate: '2025-03-15' });
    const forged = await c.post(`/console/companies/${company.id}/calendar-overrides`, {
      state: 'IL',
      ...conversion('Converted'),
    });
    expect(forged.statusCode).toBe(403);
    expect(await changes(company.id)).toEqual([]);
    expect((await c.get('/console/companies/cmp_doesnotexist')).statusCode).toBe(404);
    // CAL-19: a company without a formation date has no calendar, and its page says why.
    const undated = await createCompany(tenant, 'test', { ...corpFields(), formationState: 'NY' });
    const page = await c.get(`/console/companies/${undated.company.id}`);
    expect(page.statusCode, page.body).toBe(200);
    expect(page.body).toContain('No calendar: the company has no formation date');
  });
});

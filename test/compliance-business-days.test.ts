import { describe, expect, it } from 'vitest';
import { effectiveDueDate } from '../src/modules/compliance/business-days.js';
import { computeObligations } from '../src/modules/compliance/calendar.js';
import { loadDueDateRulesFile, type StateRule, type WeekendRule } from '../src/modules/compliance/due-date-rules.js';
import { obligationStatus, type CalendarQuery } from '../src/modules/compliance/obligation.js';

/*
 * Weekend and holiday rules (CAL-24, CAL-25), filing windows (CAL-26), the Nevada foreign initial list (CAL-31) and
 * Delaware's estimated tax (CAL-32). Every expected date below is worked out by hand from the statute or page the data
 * names, for a company formed 2025-03-15, and written as a constant; none is computed by the code under test.
 *
 * 2027 calendar facts used: 2027-05-15 is a Saturday, 2027-05-17 a Monday; 2027-05-01 a Saturday; 2027-02-28 a Sunday,
 * 2027-03-01 a Monday (Casimir Pulaski Day, an Illinois public holiday: the first Monday of March), 2027-03-02 a
 * Tuesday (Illinois is worked out below); 2027-07-04 a Sunday, so the federal holiday is observed Monday 2027-07-05.
 */

const { states } = loadDueDateRulesFile();

const q = (state: string, entityType: 'LLC' | 'CORP', over: Partial<CalendarQuery> = {}): CalendarQuery => ({
  state,
  entityType,
  presence: 'domestic',
  anchorDate: '2025-03-15',
  fiscalYearEndMonth: 12,
  from: '2027-01-01',
  to: '2027-12-31',
  ...over,
});

const dates = (entry: StateRule | undefined, query: CalendarQuery) =>
  computeObligations(entry, query).map((o) => ({
    kind: o.kind,
    statutoryDueDate: o.statutoryDueDate,
    dueDate: o.dueDate,
    windowOpensOn: o.windowOpensOn,
    moved: o.dueDateMovedBecause !== null,
  }));

describe('CAL-24: a due date on a weekend or holiday', () => {
  it('Texas: the franchise tax report due Saturday 2027-05-15 is due Monday 2027-05-17 (Tax Code 111.053)', () => {
    expect(dates(states.TX, q('TX', 'LLC'))).toEqual([
      {
        kind: 'annual_report',
        statutoryDueDate: '2027-05-15',
        dueDate: '2027-05-17',
        windowOpensOn: '2027-01-01',
        moved: true,
      },
    ]);
    expect(dates(states.TX, q('TX', 'CORP'))[0]).toMatchObject({
      statutoryDueDate: '2027-05-15',
      dueDate: '2027-05-17',
    });
  });

  it('Florida: May 1 2027 is a Saturday and stays the due date (Fla. Stat. 605.0212, 607.1622 move nothing)', () => {
    expect(dates(states.FL, q('FL', 'LLC'))).toEqual([
      {
        kind: 'annual_report',
        statutoryDueDate: '2027-05-01',
        dueDate: '2027-05-01',
        windowOpensOn: '2027-01-01',
        moved: false,
      },
    ]);
    expect(dates(states.FL, q('FL', 'CORP'))[0]).toMatchObject({ dueDate: '2027-05-01', moved: false });
    expect(states.FL!.weekendRule).toMatchObject({ rule: 'not_adjusted', basis: 'secondary', checkedOn: '2026-11-28' });
    expect(states.FL!.weekendRule!.sources.map((s) => s.url).join(' ')).toContain('0605.0212');
  });

  /*
   * Illinois, 5 ILCS 70/1.11: the last day of the time for an act provided by law is excluded when it is a Saturday,
   * a Sunday or a holiday fixed by an Illinois statute, and so is each following day that is one too. The annual
   * report is due by the last day of the month before the anniversary month (805 ILCS 180/50-1(b)).
   * By hand, from 2026-01-01 (a Thursday) and 2027-01-01 (a Friday: 2026 has 365 days = 52 weeks + 1 day):
   * - March anniversary, 2027: Feb 1 = Friday + 31 days = Monday; Feb 28 = Monday + 27 days = Sunday (excluded);
   *   Mar 1 is the first Monday of March, Casimir Pulaski Day (excluded); Tuesday 2027-03-02 is the due date.
   * - March anniversary, 2026: Feb 1 = Thursday + 31 days = Sunday; Feb 28 = Sunday + 27 days = Saturday (excluded);
   *   Mar 1 Sunday (excluded); Mar 2 the first Monday of March, Pulaski Day (excluded); Tuesday 2026-03-03.
   * - June anniversary, 2027: May 1 is a Saturday, so May 31 = Saturday + 30 days = Monday, the last Monday of May,
   *   Memorial Day (excluded); Tuesday 2027-06-01. Its window, the 60 days before June 1, opens April 2.
   * The window (the 60 days immediately preceding the first day of the anniversary month, 805 ILCS 180/50-1(b)) does
   * not move: Mar 1 2027 - 60 days = Dec 31 2026 (Jan 31 + Feb 28 = 59 days back to Jan 1, one more); 2026 alike.
   */
  it('Illinois: Sunday 2027-02-28 and Pulaski Day Monday 2027-03-01 are excluded; due Tuesday 2027-03-02', () => {
    for (const type of ['LLC', 'CORP'] as const) {
      expect(dates(states.IL, q('IL', type, { from: '2027-01-01', to: '2027-03-31' })), type).toEqual([
        {
          kind: 'annual_report',
          statutoryDueDate: '2027-02-28',
          dueDate: '2027-03-02',
          windowOpensOn: '2026-12-31',
          moved: true,
        },
      ]);
    }
    expect(states.IL!.weekendRule).toMatchObject({
      rule: 'next_business_day',
      holidays: 'state',
      basis: 'statute',
      checkedOn: '2026-11-28',
    });
  });

  it('Illinois: Saturday 2026-02-28, Sunday, then Pulaski Day Monday 2026-03-02: due Tuesday 2026-03-03', () => {
    expect(dates(states.IL, q('IL', 'LLC', { from: '2026-01-01', to: '2026-03-31' }))).toEqual([
      {
        kind: 'annual_report',
        statutoryDueDate: '2026-02-28',
        dueDate: '2026-03-03',
        windowOpensOn: '2025-12-31',
        moved: true,
      },
    ]);
  });

  it("Illinois: Memorial Day 2027-05-31 moves a June company's report to Tuesday 2027-06-01", () => {
    expect(
      dates(states.IL, q('IL', 'CORP', { anchorDate: '2025-06-10', from: '2027-01-01', to: '2027-12-31' })),
    ).toEqual([
      {
        kind: 'annual_report',
        statutoryDueDate: '2027-05-31',
        dueDate: '2027-06-01',
        windowOpensOn: '2027-04-02',
        moved: true,
      },
    ]);
  });

  it('federal holidays: Saturday 2027-07-03 moves past Sunday and the observed Independence Day to 2027-07-06', () => {
    const federal: WeekendRule = {
      rule: 'next_business_day',
      holidays: 'federal',
      basis: 'statute',
      sources: [],
      checkedOn: '2026-11-28',
    };
    expect(effectiveDueDate({ y: 2027, m: 7, d: 3 }, 'TX', federal).date).toEqual({ y: 2027, m: 7, d: 6 });
    // A business day stays; not_adjusted never moves.
    expect(effectiveDueDate({ y: 2027, m: 7, d: 7 }, 'TX', federal).date).toEqual({ y: 2027, m: 7, d: 7 });
    expect(effectiveDueDate({ y: 2027, m: 7, d: 3 }, 'TX', { ...federal, rule: 'not_adjusted' }).date).toEqual({
      y: 2027,
      m: 7,
      d: 3,
    });
  });

  it('the range is of effective dates: a Texas report moved to Monday is in a range starting that Monday', () => {
    expect(dates(states.TX, q('TX', 'LLC', { from: '2027-05-17', to: '2027-05-17' }))).toHaveLength(1);
    expect(dates(states.TX, q('TX', 'LLC', { from: '2027-05-15', to: '2027-05-16' }))).toHaveLength(0);
  });

  it('every jurisdiction says how it treats a weekend due date, with the day it was checked', () => {
    for (const [code, entry] of Object.entries(states)) {
      expect(['next_business_day', 'not_adjusted'], code).toContain(entry.weekendRule?.rule);
      expect(entry.weekendRule?.checkedOn, code).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    }
  });
});

describe('CAL-26: open only inside the filing window', () => {
  it('Texas 2027: upcoming on 2026-12-31, open from 2027-01-01 through the effective 2027-05-17, overdue after', () => {
    const [o] = computeObligations(states.TX, q('TX', 'LLC'));
    expect(obligationStatus(o!, '2026-12-31', false)).toBe('upcoming');
    expect(obligationStatus(o!, '2027-01-01', false)).toBe('open');
    expect(obligationStatus(o!, '2027-05-16', false)).toBe('open');
    expect(obligationStatus(o!, '2027-05-17', false)).toBe('open');
    expect(obligationStatus(o!, '2027-05-18', false)).toBe('overdue');
  });

  it('New York: the biennial statement of a March company opens on the first of its month (2027-03-01)', () => {
    expect(dates(states.NY, q('NY', 'LLC'))).toEqual([
      {
        kind: 'annual_report',
        statutoryDueDate: '2027-03-31',
        dueDate: '2027-03-31',
        windowOpensOn: '2027-03-01',
        moved: false,
      },
    ]);
  });
});

describe('CAL-31, CAL-32: Nevada foreign initial list, Delaware estimated tax', () => {
  it('Nevada: a foreign corporation registered 2025-03-10 files its initial list with the registration', () => {
    const ob = computeObligations(
      states.NV,
      q('NV', 'CORP', { presence: 'foreign', anchorDate: '2025-03-10', from: '2025-01-01', to: '2025-12-31' }),
    );
    expect(ob.map((o) => [o.kind, o.dueDate])).toEqual([['initial_report', '2025-03-10']]);
  });

  it('Delaware: a corporation flagged as paying estimated tax gets June 1, September 1 and December 1 (8 Del. C. 504)', () => {
    const flagged = dates(states.DE, q('DE', 'CORP', { estimatedTax: true }));
    expect(flagged.map((o) => [o.kind, o.dueDate])).toEqual([
      ['annual_report', '2027-03-01'],
      ['estimated_tax', '2027-06-01'],
      ['estimated_tax', '2027-09-01'],
      ['estimated_tax', '2027-12-01'],
    ]);
    expect(dates(states.DE, q('DE', 'CORP')).map((o) => o.kind)).toEqual(['annual_report']);
    expect(dates(states.DE, q('DE', 'LLC', { estimatedTax: true })).map((o) => o.kind)).toEqual(['annual_report']);
  });
});

describe('CAL-33: every row names its source and the date it was checked', () => {
  it('each entity rule has sources and a checked date; Washington rests on secondary sources', () => {
    for (const [code, entry] of Object.entries(states)) {
      for (const et of ['llc', 'corporation'] as const) {
        const r = entry[et];
        expect(r.checked?.on, `${code} ${et}`).toMatch(/^\d{4}-\d{2}(-\d{2})?$/);
        expect(['official', 'statute', 'regulation', 'secondary'], `${code} ${et}`).toContain(r.checked?.basis);
        if (r.frequency !== 'none') expect(r.sources.length, `${code} ${et}`).toBeGreaterThan(0);
      }
    }
    expect(states.WA!.llc.checked).toMatchObject({ basis: 'secondary', on: '2026-11-28' });
    expect(states.WA!.corporation.checked).toMatchObject({ basis: 'secondary', on: '2026-11-28' });
  });
});

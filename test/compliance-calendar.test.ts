import { describe, expect, it } from 'vitest';
import { computeObligations } from '../src/modules/compliance/calendar.js';
import { obligationStatus, type CalendarQuery, type Presence } from '../src/modules/compliance/obligation.js';
import { loadStateFeesFile } from '../src/modules/billing/billing.seed.js';
import { loadDueDateRulesFile, ruleProblems } from '../src/modules/compliance/due-date-rules.js';

/*
 * Worked dates for every jurisdiction and entity type (CAL-2 .. CAL-15), from the rules in
 * data/annual-report-due-dates.json. Each expectation is `<kind> <dueDate> <windowOpensOn or ->`, kind I =
 * initial report, A = regular report, in due-date order.
 */

const { states } = loadDueDateRulesFile();

interface Row {
  state: string;
  type: 'LLC' | 'CORP';
  presence?: Presence;
  anchor?: string;
  fye?: number;
  sCorp?: boolean;
  from?: string;
  to?: string;
  expect: string[];
  why?: string;
}

// Default entity: formed (or registered) 2024-07-15, fiscal year ending December, due dates in 2025-2026.
const ROWS: Row[] = [
  { state: 'AL', type: 'LLC', expect: [], why: 'no Alabama SOS report for LLCs' },
  { state: 'AL', type: 'CORP', expect: [], why: 'corporate report repealed from 2025' },
  {
    state: 'AK',
    type: 'LLC',
    expect: ['I 2025-01-15 2024-07-15', 'A 2026-01-02 2025-10-02'],
    why: 'initial within 6 months; biennial even years, window from Oct 2 before',
  },
  { state: 'AK', type: 'CORP', expect: ['I 2025-01-15 2024-07-15', 'A 2026-01-02 2025-10-02'] },
  { state: 'AZ', type: 'LLC', expect: [] },
  { state: 'AZ', type: 'CORP', expect: ['A 2025-07-15 -', 'A 2026-07-15 -'] },
  { state: 'AR', type: 'LLC', expect: ['A 2025-05-01 2025-01-01', 'A 2026-05-01 2026-01-01'] },
  { state: 'AR', type: 'CORP', expect: ['A 2025-05-01 2025-01-01', 'A 2026-05-01 2026-01-01'] },
  {
    state: 'CA',
    type: 'LLC',
    expect: ['A 2026-07-31 2026-02-01'],
    why: 'biennial from the second anniversary; initial statement fell in 2024',
  },
  { state: 'CA', type: 'CORP', expect: ['A 2025-07-31 2025-02-01', 'A 2026-07-31 2026-02-01'] },
  { state: 'CO', type: 'LLC', expect: ['A 2025-09-30 2025-05-01', 'A 2026-09-30 2026-05-01'] },
  { state: 'CO', type: 'CORP', expect: ['A 2025-09-30 2025-05-01', 'A 2026-09-30 2026-05-01'] },
  { state: 'CT', type: 'LLC', expect: ['A 2025-03-31 2025-01-01', 'A 2026-03-31 2026-01-01'] },
  {
    state: 'CT',
    type: 'CORP',
    expect: ['A 2025-10-13 -', 'A 2026-10-13 -'],
    why: 'anniversary of the first report, due 90 days after 2024-07-15',
  },
  { state: 'DE', type: 'LLC', expect: ['A 2025-06-01 -', 'A 2026-06-01 -'] },
  {
    state: 'DE',
    type: 'CORP',
    expect: ['A 2025-03-01 2025-01-01', 'A 2026-03-01 2026-01-01'],
    why: 'window from January 1; 2025-03-01 is a Saturday but Delaware has no verified weekend rule, so it stands',
  },
  { state: 'DC', type: 'LLC', expect: ['A 2025-04-01 -'], why: 'biennial from the year after formation' },
  { state: 'DC', type: 'CORP', expect: ['A 2025-04-01 -'] },
  { state: 'FL', type: 'LLC', expect: ['A 2025-05-01 2025-01-01', 'A 2026-05-01 2026-01-01'] },
  { state: 'FL', type: 'CORP', expect: ['A 2025-05-01 2025-01-01', 'A 2026-05-01 2026-01-01'] },
  { state: 'GA', type: 'LLC', expect: ['A 2025-04-01 2025-01-01', 'A 2026-04-01 2026-01-01'] },
  { state: 'GA', type: 'CORP', expect: ['A 2025-04-01 2025-01-01', 'A 2026-04-01 2026-01-01'] },
  { state: 'HI', type: 'LLC', expect: ['A 2025-09-30 2025-07-01', 'A 2026-09-30 2026-07-01'] },
  { state: 'HI', type: 'CORP', expect: ['A 2025-09-30 2025-07-01', 'A 2026-09-30 2026-07-01'] },
  { state: 'ID', type: 'LLC', expect: ['A 2025-07-31 -', 'A 2026-07-31 -'] },
  { state: 'ID', type: 'CORP', expect: ['A 2025-07-31 -', 'A 2026-07-31 -'] },
  {
    state: 'IL',
    type: 'LLC',
    expect: ['A 2025-06-30 2025-05-02', 'A 2026-06-30 2026-05-02'],
    why: 'last day of the month before the anniversary month; window: the 60 days before July 1 (July 1 - 60 days = May 2)',
  },
  { state: 'IL', type: 'CORP', expect: ['A 2025-06-30 2025-05-02', 'A 2026-06-30 2026-05-02'] },
  {
    state: 'IN',
    type: 'LLC',
    expect: ['A 2026-07-31 2026-05-02'],
    why: 'biennial from the second anniversary, opens 90 days before',
  },
  { state: 'IN', type: 'CORP', expect: ['A 2026-07-31 2026-05-02'] },
  { state: 'IA', type: 'LLC', expect: ['A 2025-04-01 2025-01-01'], why: 'LLCs file in odd years' },
  { state: 'IA', type: 'CORP', expect: ['A 2026-04-01 2026-01-01'], why: 'corporations file in even years' },
  { state: 'KS', type: 'LLC', expect: ['A 2026-04-15 -'], why: 'parity of the formation year' },
  { state: 'KS', type: 'CORP', expect: ['A 2026-04-15 -'] },
  { state: 'KY', type: 'LLC', expect: ['A 2025-06-30 2025-01-01', 'A 2026-06-30 2026-01-01'] },
  { state: 'KY', type: 'CORP', expect: ['A 2025-06-30 2025-01-01', 'A 2026-06-30 2026-01-01'] },
  { state: 'LA', type: 'LLC', expect: ['A 2025-07-15 -', 'A 2026-07-15 -'] },
  { state: 'LA', type: 'CORP', expect: ['A 2025-07-15 -', 'A 2026-07-15 -'] },
  { state: 'ME', type: 'LLC', expect: ['A 2025-06-01 2025-01-01', 'A 2026-06-01 2026-01-01'] },
  { state: 'ME', type: 'CORP', expect: ['A 2025-06-01 2025-01-01', 'A 2026-06-01 2026-01-01'] },
  { state: 'MD', type: 'LLC', expect: ['A 2025-04-15 -', 'A 2026-04-15 -'] },
  { state: 'MD', type: 'CORP', expect: ['A 2025-04-15 -', 'A 2026-04-15 -'] },
  { state: 'MA', type: 'LLC', expect: ['A 2025-07-15 -', 'A 2026-07-15 -'] },
  {
    state: 'MA',
    type: 'CORP',
    expect: ['A 2025-03-15 -', 'A 2026-03-15 -'],
    why: '2.5 months after a December fiscal year end',
  },
  { state: 'MI', type: 'LLC', expect: ['A 2025-02-15 -', 'A 2026-02-15 -'] },
  { state: 'MI', type: 'CORP', expect: ['A 2025-05-15 -', 'A 2026-05-15 -'] },
  { state: 'MN', type: 'LLC', expect: ['A 2025-12-31 2025-01-01', 'A 2026-12-31 2026-01-01'] },
  { state: 'MN', type: 'CORP', expect: ['A 2025-12-31 2025-01-01', 'A 2026-12-31 2026-01-01'] },
  { state: 'MS', type: 'LLC', expect: ['A 2025-04-15 2025-01-01', 'A 2026-04-15 2026-01-01'] },
  { state: 'MS', type: 'CORP', expect: ['A 2025-04-15 2025-01-01', 'A 2026-04-15 2026-01-01'] },
  { state: 'MO', type: 'LLC', expect: [] },
  {
    state: 'MO',
    type: 'CORP',
    expect: ['A 2025-07-31 -', 'A 2026-07-31 -'],
    why: 'the elective biennial schedule is not applied',
  },
  { state: 'MT', type: 'LLC', expect: ['A 2025-04-15 2025-01-01', 'A 2026-04-15 2026-01-01'] },
  { state: 'MT', type: 'CORP', expect: ['A 2025-04-15 2025-01-01', 'A 2026-04-15 2026-01-01'] },
  { state: 'NE', type: 'LLC', expect: ['A 2025-04-01 2025-01-01'], why: 'LLCs: odd years' },
  { state: 'NE', type: 'CORP', expect: ['A 2026-03-01 -'], why: 'corporations: even years' },
  {
    state: 'NV',
    type: 'LLC',
    expect: ['A 2025-07-31 -', 'A 2026-07-31 -'],
    why: 'initial list was due with the articles in 2024',
  },
  { state: 'NV', type: 'CORP', expect: ['A 2025-07-31 -', 'A 2026-07-31 -'] },
  { state: 'NH', type: 'LLC', expect: ['A 2025-04-01 2025-01-01', 'A 2026-04-01 2026-01-01'] },
  { state: 'NH', type: 'CORP', expect: ['A 2025-04-01 2025-01-01', 'A 2026-04-01 2026-01-01'] },
  { state: 'NJ', type: 'LLC', expect: ['A 2025-07-31 -', 'A 2026-07-31 -'] },
  { state: 'NJ', type: 'CORP', expect: ['A 2025-07-31 -', 'A 2026-07-31 -'] },
  { state: 'NM', type: 'LLC', expect: [] },
  {
    state: 'NM',
    type: 'CORP',
    expect: ['A 2025-04-15 -', 'A 2026-04-15 -'],
    why: 'state-assigned biennial year: both years shown',
  },
  { state: 'NY', type: 'LLC', expect: ['A 2026-07-31 2026-07-01'], why: 'biennial, only during the anniversary month' },
  { state: 'NY', type: 'CORP', expect: ['A 2026-07-31 2026-07-01'] },
  { state: 'NC', type: 'LLC', expect: ['A 2025-04-15 -', 'A 2026-04-15 -'] },
  { state: 'NC', type: 'CORP', expect: ['A 2025-04-15 -', 'A 2026-04-15 -'] },
  { state: 'ND', type: 'LLC', expect: ['A 2025-11-15 -', 'A 2026-11-15 -'] },
  { state: 'ND', type: 'CORP', expect: ['A 2025-08-01 -', 'A 2026-08-01 -'] },
  { state: 'OH', type: 'LLC', expect: [] },
  { state: 'OH', type: 'CORP', expect: [] },
  { state: 'OK', type: 'LLC', expect: ['A 2025-07-15 -', 'A 2026-07-15 -'] },
  { state: 'OK', type: 'CORP', expect: [] },
  { state: 'OR', type: 'LLC', expect: ['A 2025-07-15 -', 'A 2026-07-15 -'] },
  { state: 'OR', type: 'CORP', expect: ['A 2025-07-15 -', 'A 2026-07-15 -'] },
  { state: 'PA', type: 'LLC', expect: ['A 2025-09-30 2025-01-01', 'A 2026-09-30 2026-01-01'] },
  { state: 'PA', type: 'CORP', expect: ['A 2025-06-30 2025-01-01', 'A 2026-06-30 2026-01-01'] },
  { state: 'RI', type: 'LLC', expect: ['A 2025-05-01 2025-02-01', 'A 2026-05-01 2026-02-01'] },
  { state: 'RI', type: 'CORP', expect: ['A 2025-05-01 2025-02-01', 'A 2026-05-01 2026-02-01'] },
  { state: 'SC', type: 'LLC', expect: [] },
  { state: 'SC', type: 'CORP', expect: ['A 2025-04-15 -', 'A 2026-04-15 -'] },
  { state: 'SD', type: 'LLC', expect: ['A 2025-07-31 2025-06-01', 'A 2026-07-31 2026-06-01'] },
  { state: 'SD', type: 'CORP', expect: ['A 2025-07-31 2025-06-01', 'A 2026-07-31 2026-06-01'] },
  {
    state: 'TN',
    type: 'LLC',
    expect: ['A 2025-04-01 2024-12-01', 'A 2026-04-01 2025-12-01'],
    why: 'opens on the first day of the fiscal-year-end month',
  },
  { state: 'TN', type: 'CORP', expect: ['A 2025-04-01 2024-12-01', 'A 2026-04-01 2025-12-01'] },
  {
    state: 'TX',
    type: 'LLC',
    expect: ['A 2025-05-15 2025-01-01', 'A 2026-05-15 2026-01-01'],
    why: 'window from January 1',
  },
  { state: 'TX', type: 'CORP', expect: ['A 2025-05-15 2025-01-01', 'A 2026-05-15 2026-01-01'] },
  {
    state: 'UT',
    type: 'LLC',
    expect: ['A 2025-07-31 2025-06-01', 'A 2026-07-31 2026-06-01'],
    why: 'opens 60 days before the due date',
  },
  { state: 'UT', type: 'CORP', expect: ['A 2025-07-31 2025-06-01', 'A 2026-07-31 2026-06-01'] },
  { state: 'VT', type: 'LLC', expect: ['A 2025-03-31 -', 'A 2026-03-31 -'] },
  { state: 'VT', type: 'CORP', expect: ['A 2025-03-15 -', 'A 2026-03-15 -'] },
  {
    state: 'VA',
    type: 'LLC',
    expect: ['A 2025-07-31 2025-05-01', 'A 2026-07-31 2026-05-01'],
    why: 'assessed two months before',
  },
  { state: 'VA', type: 'CORP', expect: ['A 2025-07-31 2025-05-01', 'A 2026-07-31 2026-05-01'] },
  { state: 'WA', type: 'LLC', expect: ['A 2025-07-31 -', 'A 2026-07-31 -'] },
  { state: 'WA', type: 'CORP', expect: ['A 2025-07-31 -', 'A 2026-07-31 -'] },
  { state: 'WV', type: 'LLC', expect: ['A 2025-06-30 2025-01-01', 'A 2026-06-30 2026-01-01'] },
  { state: 'WV', type: 'CORP', expect: ['A 2025-06-30 2025-01-01', 'A 2026-06-30 2026-01-01'] },
  { state: 'WI', type: 'LLC', expect: ['A 2025-09-30 2025-07-01', 'A 2026-09-30 2026-07-01'] },
  { state: 'WI', type: 'CORP', expect: ['A 2025-09-30 2025-07-01', 'A 2026-09-30 2026-07-01'] },
  {
    state: 'WY',
    type: 'LLC',
    expect: ['A 2025-07-01 2025-01-01', 'A 2026-07-01 2026-01-01'],
    why: 'first day of the anniversary month; window from January 1',
  },
  { state: 'WY', type: 'CORP', expect: ['A 2025-07-01 2025-01-01', 'A 2026-07-01 2026-01-01'] },
];

// Foreign entities, initial reports, first-report exceptions, fiscal years and month edges.
const SPECIAL: Row[] = [
  {
    state: 'AK',
    type: 'LLC',
    presence: 'foreign',
    expect: ['A 2026-01-02 2025-10-02'],
    why: 'foreign: no initial report',
  },
  {
    state: 'AK',
    type: 'CORP',
    anchor: '2025-03-01',
    from: '2025-01-01',
    to: '2027-12-31',
    expect: ['I 2025-09-01 2025-03-01', 'A 2027-01-02 2026-10-02'],
    why: 'odd formation year, odd filing years',
  },
  {
    state: 'CA',
    type: 'LLC',
    anchor: '2025-03-10',
    from: '2025-01-01',
    to: '2027-12-31',
    expect: ['I 2025-06-08 2025-03-10', 'A 2027-03-31 2026-10-01'],
  },
  {
    state: 'CA',
    type: 'CORP',
    presence: 'foreign',
    anchor: '2025-03-10',
    from: '2025-01-01',
    to: '2026-12-31',
    expect: ['I 2025-06-08 2025-03-10', 'A 2026-03-31 2025-10-01'],
    why: 'initial statement applies to foreign too',
  },
  {
    state: 'CT',
    type: 'CORP',
    anchor: '2025-02-01',
    from: '2025-01-01',
    to: '2026-12-31',
    expect: ['I 2025-05-02 2025-02-01', 'A 2026-05-02 -'],
  },
  {
    state: 'CT',
    type: 'CORP',
    presence: 'foreign',
    anchor: '2025-02-01',
    from: '2025-01-01',
    to: '2026-12-31',
    expect: ['A 2026-02-01 -'],
    why: 'foreign: anniversary of registration',
  },
  { state: 'DE', type: 'CORP', presence: 'foreign', expect: ['A 2025-06-30 -', 'A 2026-06-30 -'] },
  { state: 'DC', type: 'LLC', from: '2025-01-01', to: '2028-12-31', expect: ['A 2025-04-01 -', 'A 2027-04-01 -'] },
  {
    state: 'GA',
    type: 'CORP',
    anchor: '2025-03-01',
    from: '2025-01-01',
    to: '2026-12-31',
    expect: ['I 2025-05-30 2025-03-01', 'A 2026-04-01 2026-01-01'],
  },
  {
    state: 'GA',
    type: 'CORP',
    anchor: '2025-10-15',
    from: '2025-01-01',
    to: '2026-12-31',
    expect: ['A 2026-04-01 2026-01-01'],
    why: 'no initial registration when formed after October 1',
  },
  {
    state: 'GA',
    type: 'CORP',
    presence: 'foreign',
    anchor: '2025-03-01',
    from: '2025-01-01',
    to: '2026-12-31',
    expect: ['A 2026-04-01 2026-01-01'],
  },
  { state: 'HI', type: 'LLC', anchor: '2024-11-05', expect: ['A 2025-12-31 2025-10-01', 'A 2026-12-31 2026-10-01'] },
  {
    state: 'IL',
    type: 'LLC',
    anchor: '2024-01-20',
    from: '2024-01-01',
    to: '2025-12-31',
    expect: ['A 2024-12-31 2024-11-02', 'A 2025-12-31 2025-11-02'],
    why: 'due before the first anniversary month, in the formation year; window: the 60 days before Jan 1 (= Nov 2)',
  },
  { state: 'KS', type: 'CORP', anchor: '2025-05-05', from: '2025-01-01', to: '2028-12-31', expect: ['A 2027-04-15 -'] },
  {
    state: 'LA',
    type: 'LLC',
    anchor: '2024-02-29',
    expect: ['A 2025-02-28 -', 'A 2026-02-28 -'],
    why: 'Feb 29 anniversary in a non-leap year',
  },
  { state: 'MA', type: 'CORP', fye: 6, expect: ['A 2025-09-15 -', 'A 2026-09-15 -'] },
  {
    state: 'MI',
    type: 'LLC',
    anchor: '2025-10-15',
    from: '2025-01-01',
    to: '2027-12-31',
    expect: ['A 2027-02-15 -'],
    why: 'formed after September 30 skips the next February 15',
  },
  {
    state: 'CO',
    type: 'CORP',
    anchor: '2024-11-05',
    expect: ['A 2026-01-31 2025-09-01'],
    why: 'due two months after a November anniversary',
  },
  {
    state: 'NV',
    type: 'LLC',
    anchor: '2025-03-10',
    from: '2025-01-01',
    to: '2026-12-31',
    expect: ['I 2025-03-10 2025-03-10', 'A 2026-03-31 -'],
  },
  {
    state: 'NV',
    type: 'CORP',
    presence: 'foreign',
    anchor: '2025-03-10',
    from: '2025-01-01',
    to: '2026-12-31',
    expect: ['I 2025-03-10 2025-03-10', 'A 2026-03-31 -'],
    why: 'foreign initial list: filed with the registration (CAL-31)',
  },
  {
    state: 'NM',
    type: 'CORP',
    anchor: '2025-03-10',
    from: '2025-01-01',
    to: '2027-12-31',
    expect: ['I 2025-04-09 2025-03-10', 'A 2026-04-15 -', 'A 2027-04-15 -'],
  },
  {
    state: 'OK',
    type: 'CORP',
    presence: 'foreign',
    expect: ['A 2025-07-15 -', 'A 2026-07-15 -'],
    why: 'foreign corporations only',
  },
  {
    state: 'SC',
    type: 'CORP',
    sCorp: true,
    expect: ['A 2025-03-15 -', 'A 2026-03-15 -'],
    why: 'S corporation variant',
  },
  {
    state: 'SC',
    type: 'CORP',
    anchor: '2025-03-01',
    from: '2025-01-01',
    to: '2026-12-31',
    expect: ['I 2025-04-30 2025-03-01', 'A 2026-04-15 -'],
  },
  { state: 'TN', type: 'LLC', fye: 3, expect: ['A 2025-07-01 2025-03-01', 'A 2026-07-01 2026-03-01'] },
  { state: 'VT', type: 'LLC', fye: 11, expect: ['A 2025-02-28 -', 'A 2026-02-28 -'] },
  {
    state: 'WA',
    type: 'LLC',
    anchor: '2025-03-01',
    from: '2025-01-01',
    to: '2026-12-31',
    expect: ['I 2025-06-29 2025-03-01', 'A 2026-03-31 -'],
  },
  {
    state: 'WA',
    type: 'LLC',
    presence: 'foreign',
    anchor: '2025-03-01',
    from: '2025-01-01',
    to: '2026-12-31',
    expect: ['A 2026-03-31 -'],
  },
  { state: 'WI', type: 'CORP', presence: 'foreign', expect: ['A 2025-03-31 -', 'A 2026-03-31 -'] },
  { state: 'WY', type: 'LLC', presence: 'foreign', expect: ['A 2025-07-01 2025-01-01', 'A 2026-07-01 2026-01-01'] },
];

const query = (r: Row): CalendarQuery => ({
  state: r.state,
  entityType: r.type,
  presence: r.presence ?? 'domestic',
  anchorDate: r.anchor ?? '2024-07-15',
  fiscalYearEndMonth: r.fye ?? 12,
  sCorporation: r.sCorp,
  from: r.from ?? '2025-01-01',
  to: r.to ?? '2026-12-31',
});
const render = (r: Row) =>
  computeObligations(states[r.state], query(r)).map(
    (o) => `${o.kind === 'initial_report' ? 'I' : 'A'} ${o.dueDate} ${o.windowOpensOn ?? '-'}`,
  );
const label = (r: Row) =>
  `${r.state} ${r.type} ${r.presence ?? 'domestic'} ${r.anchor ?? '2024-07-15'}${r.why ? ` (${r.why})` : ''}`;

describe('compliance calendar: worked dates per jurisdiction and entity type', () => {
  it('covers every jurisdiction of the data and both entity types', () => {
    const covered = new Set(ROWS.map((r) => `${r.state}:${r.type}`));
    for (const state of Object.keys(states)) {
      expect(covered.has(`${state}:LLC`), state).toBe(true);
      expect(covered.has(`${state}:CORP`), state).toBe(true);
    }
    expect(Object.keys(states)).toHaveLength(51);
  });

  it.each(ROWS.map((r) => [label(r), r] as const))('%s', (_l, r) => {
    expect(render(r)).toEqual(r.expect);
  });
});

describe('compliance calendar: foreign entities, initial reports and edges', () => {
  it.each(SPECIAL.map((r) => [label(r), r] as const))('%s', (_l, r) => {
    expect(render(r)).toEqual(r.expect);
  });

  it('carries the rule id, the filing year, the confidence and an official source of the row', () => {
    const [ob] = computeObligations(states.WY, query({ state: 'WY', type: 'LLC', expect: [] }));
    expect(ob).toMatchObject({
      jurisdiction: 'WY',
      kind: 'annual_report',
      ruleId: 'CAL-10',
      filingYear: 2025,
      confidence: states.WY!.llc.confidence,
    });
    expect(states.WY!.llc.sources.map((s) => s.url)).toContain(ob!.sourceUrl);
  });

  it("says when a date or a year is the state's choice or an election exists", () => {
    expect(computeObligations(states.AZ, query({ state: 'AZ', type: 'CORP', expect: [] }))[0]!.note).toMatch(
      /assigns the exact due date/,
    );
    expect(computeObligations(states.NM, query({ state: 'NM', type: 'CORP', expect: [] }))[0]!.note).toMatch(
      /odd or even/,
    );
    expect(computeObligations(states.SD, query({ state: 'SD', type: 'LLC', expect: [] }))[0]!.note).toMatch(
      /January 31/,
    );
  });

  it('owes nothing on or before the formation date and nothing outside the range', () => {
    expect(
      render({ state: 'TX', type: 'LLC', anchor: '2025-05-15', from: '2025-01-01', to: '2025-12-31', expect: [] }),
    ).toEqual([]);
    expect(render({ state: 'TX', type: 'LLC', from: '2025-05-16', to: '2026-05-14', expect: [] })).toEqual([]);
    expect(render({ state: 'TX', type: 'LLC', from: '2025-05-15', to: '2025-05-15', expect: [] })).toEqual([
      'A 2025-05-15 2025-01-01',
    ]);
  });

  it('an unknown jurisdiction owes nothing', () => {
    expect(computeObligations(undefined, query({ state: 'PR', type: 'LLC', expect: [] }))).toEqual([]);
  });
});

describe('obligation status (CAL-16)', () => {
  const ob = { dueDate: '2026-05-01', windowOpensOn: '2026-01-01' };
  it.each([
    ['2025-12-31', false, 'upcoming'],
    ['2026-01-01', false, 'open'],
    ['2026-05-01', false, 'open'],
    ['2026-05-02', false, 'overdue'],
    ['2026-05-02', true, 'filed'],
  ] as const)('on %s (filed %s) is %s', (today, filed, status) => {
    expect(obligationStatus(ob, today, filed)).toBe(status);
  });
  it('without a window a report is upcoming until it is overdue', () => {
    expect(obligationStatus({ dueDate: '2026-05-01', windowOpensOn: null }, '2026-05-01', false)).toBe('upcoming');
  });
});

describe('rule validation (CAL-22)', () => {
  it('accepts every row of the data as shipped', () => {
    for (const [state, entry] of Object.entries(states)) expect(ruleProblems(entry), state).toEqual([]);
  });
  it('names the field an edit breaks', () => {
    const broken = structuredClone(states.TX!);
    (broken.llc.params as Record<string, unknown>).month = 13;
    broken.corporation.ruleKind = 'weekly' as never;
    expect(ruleProblems(broken).map((p) => p.field)).toEqual(['llc.params.month', 'corporation.ruleKind']);
  });
});

describe('the fee schedule agrees with the due-date rules (CAL-1, CAL-18)', () => {
  const fees = loadStateFeesFile().states;
  it('has the same jurisdictions, the same report frequency per entity type, and no fee where no report is due', () => {
    expect(Object.keys(fees)).toEqual(Object.keys(states));
    for (const [state, entry] of Object.entries(states)) {
      const f = fees[state]!;
      for (const [rule, frequency, fee] of [
        [entry.llc, f.llcReportFrequency, f.llcAnnualReport],
        [entry.corporation, f.corpReportFrequency, f.corpAnnualReport],
      ] as const) {
        expect(frequency, state).toBe(rule.frequency);
        if (rule.frequency === 'none') expect(fee, state).toBe(0);
      }
    }
  });
  it('Alabama corporations: the annual report was repealed, no report and no fee', () => {
    expect(states.AL!.corporation.frequency).toBe('none');
    expect(fees.AL).toMatchObject({ corpAnnualReport: 0, corpReportFrequency: 'none' });
  });
});

import fs from 'node:fs';

/*
 * The shape of data/annual-report-due-dates.json (field definitions inside the file): per state, one rule
 * object per entity type. The same shape is stored per state in compliance_rules.rule (CAL-1) and edited
 * by operators, so every field a reader relies on is validated by `ruleProblems` before it is saved.
 */

/** How a regular report's due date is computed (CAL-4 .. CAL-10). */
const RULE_KINDS = [
  'fixed_date',
  'anniversary_month_end',
  'anniversary_date',
  'anniversary_month_window',
  'quarter_after_anniversary',
  'fiscal_year_based',
  'other',
] as const;
/** One of {@link RULE_KINDS}. */
export type RuleKind = (typeof RULE_KINDS)[number];

/** annual | biennial | none. */
type Frequency = 'annual' | 'biennial' | 'none';
/** Confidence of a researched rule (see the data file's field definitions). */
export type Confidence = 'high' | 'medium' | 'low';

/** A month/day pair, e.g. {month: 5, day: 1}; optional yearOffset (-1 = the previous calendar year). */
interface MonthDay {
  month: number;
  day: number;
  yearOffset?: number;
}

/** Machine-usable parameters of a rule kind; every key is optional and only some kinds read each. */
export interface RuleParams {
  description?: string;
  month?: number;
  day?: number | 'last';
  windowOpens?: MonthDay;
  delinquentAfter?: MonthDay;
  extensionTo?: MonthDay;
  monthOffset?: number;
  windowOpensMonthsBefore?: number;
  windowOpensDaysBefore?: number;
  assessedMonthsBefore?: number;
  dateAssignedByState?: boolean;
  anchor?: string;
  dueMonthOffset?: number;
  lateFilingMonthsAfterDue?: number;
  monthsAfterFiscalYearEnd?: number;
  sCorporationMonthsAfterFiscalYearEnd?: number;
  calendarYearDue?: string;
  windowOpensMonthOffset?: number;
  dueDay?: number;
  [extra: string]: unknown;
}

/** Biennial cycle (CAL-11). */
interface BiennialCycle {
  basis: 'formation_year_parity' | 'fixed_parity' | 'every_second_year_from_first' | 'state_assigned';
  parity?: 'even' | 'odd';
  optional?: boolean;
  description?: string;
}

/** When the first regular report is due (CAL-12). */
interface FirstReport {
  rule:
    | 'following_calendar_year'
    | 'first_cycle_year_after_formation'
    | 'second_anniversary'
    | 'after_first_fiscal_year_end'
    | 'not_applicable';
  skipIfFormedAfter?: { month: number; day: number };
  description?: string;
}

/** A one-time report due shortly after formation or registration (CAL-13). */
export interface InitialReport {
  dueWithinDays?: number | null;
  dueWithinMonths?: number | null;
  relativeTo?: string;
  description?: string;
  appliesTo?: 'domestic' | 'domestic_and_foreign' | 'foreign';
}

/** A source of a rule: kind official | statute | regulation | legislative | secondary. */
interface RuleSource {
  url: string;
  kind: string;
  note?: string;
}

/** The overrides a foreign (out-of-state) entity gets on top of the domestic rule (CAL-2). */
interface ForeignOverride {
  frequency?: Frequency;
  reportName?: string | null;
  ruleKind?: RuleKind | null;
  params?: RuleParams;
  firstReport?: FirstReport;
  initialReport?: InitialReport | null;
  lateFee?: string | null;
  confidence?: Confidence;
  note?: string;
}

/** CAL-24: how a state treats a due date on a weekend or legal holiday, with what it rests on and when checked. */
export interface WeekendRule {
  /** next_business_day: moved to the next business day; not_adjusted: the statutory date stands (or no rule verified). */
  rule: 'next_business_day' | 'not_adjusted';
  /** Which holidays count: the federal ones, or the state's public holidays (federal included). */
  holidays: 'federal' | 'state';
  basis: 'statute' | 'official' | 'secondary' | 'unverified';
  sources: RuleSource[];
  /** 'YYYY-MM-DD', the day the rule was checked. */
  checkedOn: string;
  note?: string;
}

/** CAL-33: when a row was last checked and what it rests on. */
interface RuleCheck {
  /** 'YYYY-MM' or 'YYYY-MM-DD'. */
  on: string;
  basis: 'official' | 'statute' | 'regulation' | 'secondary';
  note?: string;
}

/** CAL-32: instalments of an estimated tax an entity may be flagged as paying (Delaware corporations). */
export interface EstimatedTax {
  name: string;
  threshold?: string;
  installments: Array<{ month: number; day: number; percent?: number }>;
  sources: RuleSource[];
  checkedOn: string;
  appliesTo?: 'domestic' | 'domestic_and_foreign' | 'foreign';
}

/** The rule of one entity type in one state (domestic, with its foreign overrides). */
export interface EntityRule {
  frequency: Frequency;
  reportName: string | null;
  filedWith?: string | null;
  ruleKind: RuleKind | null;
  params: RuleParams;
  biennialCycle: BiennialCycle | null;
  firstReport: FirstReport;
  initialReport: InitialReport | null;
  foreignSameRule: boolean;
  foreign: ForeignOverride | null;
  alternative?: Record<string, unknown> | null;
  lateFee?: string | null;
  relatedFilings?: unknown[];
  confidence: Confidence;
  sources: RuleSource[];
  notes?: string;
  unconfirmed?: string[];
  /** CAL-33: when the row was checked and what it rests on. */
  checked?: RuleCheck;
  /** CAL-35: consecutive filing years one annual report order may cover (absent = 1). */
  prepayYears?: number;
  prepaySources?: RuleSource[];
  /** CAL-32: estimated tax instalments, shown only for companies flagged as paying it. */
  estimatedTax?: EstimatedTax;
}

/** One state's entry: its name, the lower of the two confidences, and the LLC and corporation rules. */
export interface StateRule {
  name: string;
  confidence: Confidence;
  llc: EntityRule;
  corporation: EntityRule;
  /** CAL-24: the state's weekend and holiday rule; absent = not adjusted. */
  weekendRule?: WeekendRule;
}

/** The whole data file. */
export interface DueDateRulesFile {
  asOf: string;
  sourceNote: string;
  fieldDefinitions: Record<string, string>;
  states: Record<string, StateRule>;
}

/** Reads data/annual-report-due-dates.json. @throws on a missing file or bad JSON (a broken deployment). */
export function loadDueDateRulesFile(): DueDateRulesFile {
  const file = new URL('../../../data/annual-report-due-dates.json', import.meta.url);
  return JSON.parse(fs.readFileSync(file, 'utf8')) as DueDateRulesFile;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isInt = (v: unknown, min: number, max: number) =>
  Number.isInteger(v) && (v as number) >= min && (v as number) <= max;

/**
 * What makes a state entry unusable by the calendar (CAL-22): the fields the computation reads, per entity type.
 * Returns `{field, message}` pairs with dotted paths (`corporation.params.month`); empty when the entry is usable.
 */
export function ruleProblems(entry: unknown): Array<{ field: string; message: string }> {
  const problems: Array<{ field: string; message: string }> = [];
  const add = (field: string, message: string) => problems.push({ field, message });
  if (!isObj(entry)) return [{ field: '', message: 'must be an object with name, confidence, llc and corporation' }];
  if (typeof entry.name !== 'string' || !entry.name.trim()) add('name', 'must be the state name');
  if (!['high', 'medium', 'low'].includes(entry.confidence as string)) add('confidence', 'must be high, medium or low');
  const wr = entry.weekendRule;
  if (wr !== undefined) {
    // CAL-24: the rule and its holiday list must be ones the calendar applies.
    if (!isObj(wr) || !['next_business_day', 'not_adjusted'].includes(wr.rule as string))
      add('weekendRule.rule', 'must be next_business_day or not_adjusted');
    else if (!['federal', 'state'].includes(wr.holidays as string))
      add('weekendRule.holidays', 'must be federal or state');
  }
  for (const et of ['llc', 'corporation'] as const) {
    const r = entry[et];
    if (!isObj(r)) {
      add(et, 'must be a rule object');
      continue;
    }
    checkRule(r, et, add);
    if (r.foreign !== null && r.foreign !== undefined) {
      if (!isObj(r.foreign)) add(`${et}.foreign`, 'must be null or an object of overrides');
      else checkRule({ ...r, ...r.foreign, foreign: null }, `${et}.foreign`, add);
    }
  }
  return problems;
}

function checkRule(r: Record<string, unknown>, at: string, add: (f: string, m: string) => void): void {
  if (!['annual', 'biennial', 'none'].includes(r.frequency as string))
    add(`${at}.frequency`, 'must be annual, biennial or none');
  if (!['high', 'medium', 'low'].includes(r.confidence as string))
    add(`${at}.confidence`, 'must be high, medium or low');
  if (!Array.isArray(r.sources) || r.sources.some((s) => !isObj(s) || typeof s.url !== 'string'))
    add(`${at}.sources`, 'must be a list of {url, kind}');
  const first = r.firstReport;
  const firstRules = [
    'following_calendar_year',
    'first_cycle_year_after_formation',
    'second_anniversary',
    'after_first_fiscal_year_end',
    'not_applicable',
  ];
  if (!isObj(first) || !firstRules.includes(first.rule as string))
    add(`${at}.firstReport.rule`, `must be one of ${firstRules.join(', ')}`);
  const ir = r.initialReport;
  if (ir !== null && ir !== undefined) {
    if (!isObj(ir)) add(`${at}.initialReport`, 'must be null or an object');
    else {
      if (ir.dueWithinDays !== null && ir.dueWithinDays !== undefined && !isInt(ir.dueWithinDays, 0, 3660))
        add(`${at}.initialReport.dueWithinDays`, 'must be a whole number of days');
      if (ir.dueWithinMonths !== null && ir.dueWithinMonths !== undefined && !isInt(ir.dueWithinMonths, 0, 120))
        add(`${at}.initialReport.dueWithinMonths`, 'must be a whole number of months');
      if (!['domestic', 'domestic_and_foreign', 'foreign'].includes(ir.appliesTo as string))
        add(`${at}.initialReport.appliesTo`, 'must be domestic, domestic_and_foreign or foreign');
    }
  }
  if (r.prepayYears !== undefined && !isInt(r.prepayYears, 1, 5))
    add(`${at}.prepayYears`, 'must be a whole number of years 1..5');
  const et = r.estimatedTax;
  if (et !== undefined && et !== null) {
    if (
      !isObj(et) ||
      !Array.isArray(et.installments) ||
      et.installments.some((i) => !isObj(i) || !isInt(i.month, 1, 12) || !isInt(i.day, 1, 31))
    )
      add(`${at}.estimatedTax.installments`, 'must be a list of {month 1-12, day 1-31}');
  }
  if (r.frequency === 'none') return;
  if (typeof r.reportName !== 'string' || !r.reportName)
    add(`${at}.reportName`, 'is required when frequency is not none');
  if (!(RULE_KINDS as readonly unknown[]).includes(r.ruleKind)) {
    add(`${at}.ruleKind`, `must be one of ${RULE_KINDS.join(', ')}`);
    return;
  }
  const p = isObj(r.params) ? r.params : {};
  if (!isObj(r.params)) add(`${at}.params`, 'must be an object');
  const monthDay = (key: string, v: unknown) => {
    if (v === undefined) return;
    if (!isObj(v) || !isInt(v.month, 1, 12) || !isInt(v.day, 1, 31))
      add(`${at}.params.${key}`, 'must be {month 1-12, day 1-31}');
  };
  switch (r.ruleKind) {
    case 'fixed_date':
      if (!isInt(p.month, 1, 12)) add(`${at}.params.month`, 'must be a month 1-12');
      if (!isInt(p.day, 1, 31)) add(`${at}.params.day`, 'must be a day 1-31');
      monthDay('windowOpens', p.windowOpens);
      break;
    case 'anniversary_month_end':
      if (p.monthOffset !== undefined && !isInt(p.monthOffset, -11, 11))
        add(`${at}.params.monthOffset`, 'must be a whole number of months -11..11');
      if (p.windowOpensDaysBefore !== undefined && !isInt(p.windowOpensDaysBefore, 0, 366))
        add(`${at}.params.windowOpensDaysBefore`, 'must be a whole number of days 0..366');
      break;
    case 'anniversary_month_window':
      if (!isInt(p.windowOpensMonthsBefore, 0, 11))
        add(`${at}.params.windowOpensMonthsBefore`, 'must be a whole number of months 0..11');
      if (!isInt(p.dueMonthOffset, 0, 11)) add(`${at}.params.dueMonthOffset`, 'must be a whole number of months 0..11');
      break;
    case 'fiscal_year_based':
      if (!isInt(p.monthsAfterFiscalYearEnd, 1, 12))
        add(`${at}.params.monthsAfterFiscalYearEnd`, 'must be a whole number of months 1..12');
      if (!(p.day === 'last' || isInt(p.day, 1, 31))) add(`${at}.params.day`, "must be a day 1-31 or 'last'");
      break;
    case 'other':
      if (p.anchor !== 'anniversary_month' || !isInt(p.dueDay, 1, 31))
        add(`${at}.params`, "an 'other' rule needs anchor 'anniversary_month' and dueDay 1-31 to be computed");
      monthDay('windowOpens', p.windowOpens);
      break;
    default:
      break;
  }
  if (r.frequency === 'biennial') {
    const c = r.biennialCycle;
    const bases = ['formation_year_parity', 'fixed_parity', 'every_second_year_from_first', 'state_assigned'];
    if (!isObj(c) || !bases.includes(c.basis as string))
      add(`${at}.biennialCycle.basis`, `must be one of ${bases.join(', ')}`);
    else if (c.basis === 'fixed_parity' && !['even', 'odd'].includes(c.parity as string))
      add(`${at}.biennialCycle.parity`, 'must be even or odd');
  }
}

/**
 * CAL-32: whether a state's estimated tax instalments apply to a company `presence` there (formed there: domestic,
 * qualified there: foreign). A rule that says nothing applies to domestic companies only.
 */
export function estimatedTaxApplies(et: EstimatedTax, presence: 'domestic' | 'foreign'): boolean {
  const appliesTo = et.appliesTo ?? 'domestic';
  return appliesTo === 'domestic_and_foreign' || appliesTo === presence;
}

import type { Confidence, EntityRule, InitialReport, RuleKind, RuleParams, StateRule } from './due-date-rules.js';

/*
 * The compliance calendar's computation (CAL-2 .. CAL-15): pure, no clock, no database. Dates are calendar
 * dates ('YYYY-MM-DD'), computed in whole days with no time zone; weekends and holidays are not adjusted.
 */

/** Domestic = formed in the state; foreign = registered (qualified) there. */
export type Presence = 'domestic' | 'foreign';
/** `annual_report` = a regular (annual or biennial) report; `initial_report` = the one-time report after formation. */
export type ObligationKind = 'annual_report' | 'initial_report';

/** What the calendar needs to know about one entity in one state. */
export interface CalendarQuery {
  /** Two-letter code of the state (jurisdiction). */
  state: string;
  /** Our entity types: LLC or CORP (a CORP uses the data's `corporation` rule). */
  entityType: 'LLC' | 'CORP';
  presence: Presence;
  /** Formation date (domestic) or registration/qualification date (foreign), 'YYYY-MM-DD' (CAL-3). */
  anchorDate: string;
  /** Fiscal-year-end month 1-12 (12 = December); read by fiscal_year_based rules only. */
  fiscalYearEndMonth: number;
  /** True for an S corporation: fiscal rules with an sCorporation variant use it (CAL-9). */
  sCorporation?: boolean;
  /** Inclusive range of due dates, 'YYYY-MM-DD'. */
  from: string;
  to: string;
}

/** One report the entity owes in the state, due on `dueDate`. */
export interface Obligation {
  jurisdiction: string;
  presence: Presence;
  kind: ObligationKind;
  reportName: string;
  /** 'YYYY-MM-DD', the last day to file on time. */
  dueDate: string;
  /** 'YYYY-MM-DD', the first day the state accepts the filing; null when the data gives none. */
  windowOpensOn: string | null;
  /** The calendar year of the due date: the `filingYear` an annual report order for it carries (CAL-16). */
  filingYear: number;
  confidence: Confidence;
  /** The best source of the rule (official, statute or regulation first), or null. */
  sourceUrl: string | null;
  /** The rule id of docs/rules.md that computed the date (CAL-4 .. CAL-13). */
  ruleId: string;
  /** Caveats the date carries (a state-assigned date or year, an available election); null when none. */
  note: string | null;
}

/* ----------------------------------------------------------------------------------------------- dates */

interface Ymd {
  y: number;
  m: number;
  d: number;
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');
const fmt = ({ y, m, d }: Ymd) => `${pad(y, 4)}-${pad(m)}-${pad(d)}`;
const parse = (s: string): Ymd => {
  const [y, m, d] = s.split('-').map(Number);
  return { y: y!, m: m!, d: d! };
};
const daysIn = (y: number, m: number) => new Date(Date.UTC(y, m, 0)).getUTCDate();
/** (y, m + delta) normalised to a real month. */
const shiftMonth = (y: number, m: number, delta: number) => {
  const idx = y * 12 + (m - 1) + delta;
  return { y: Math.floor(idx / 12), m: (((idx % 12) + 12) % 12) + 1 };
};
const monthEnd = (y: number, m: number): Ymd => ({ y, m, d: daysIn(y, m) });
/** The day, clamped to the month's length (Feb 29 -> Feb 28 in a non-leap year: CAL-6). */
const clampDay = (y: number, m: number, d: number): Ymd => ({ y, m, d: Math.min(d, daysIn(y, m)) });
const addDays = (date: Ymd, n: number): Ymd => {
  const t = new Date(Date.UTC(date.y, date.m - 1, date.d + n));
  return { y: t.getUTCFullYear(), m: t.getUTCMonth() + 1, d: t.getUTCDate() };
};
const addMonths = (date: Ymd, n: number): Ymd => {
  const { y, m } = shiftMonth(date.y, date.m, n);
  return clampDay(y, m, date.d);
};

/** True when `s` is a real calendar date written 'YYYY-MM-DD'. */
export function isIsoDate(s: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(s)) return false;
  const { y, m, d } = parse(s);
  return m >= 1 && m <= 12 && d >= 1 && d <= daysIn(y, m);
}

/** 'YYYY-MM-DD' plus n days (n may be negative). */
export function addDaysIso(iso: string, n: number): string {
  return fmt(addDays(parse(iso), n));
}

/** 'YYYY-MM-DD' plus n months, the day clamped to the month's length. */
export function addMonthsIso(iso: string, n: number): string {
  return fmt(addMonths(parse(iso), n));
}

/** Whole days from `from` to `to` (both 'YYYY-MM-DD'); negative when `to` is earlier. */
export function daysBetween(from: string, to: string): number {
  const a = parse(from);
  const b = parse(to);
  return Math.round((Date.UTC(b.y, b.m - 1, b.d) - Date.UTC(a.y, a.m - 1, a.d)) / 86_400_000);
}

/* -------------------------------------------------------------------------------------- effective rule */

/** The rule a domestic or foreign entity follows: the domestic rule with the foreign overrides on top (CAL-2). */
export function effectiveRule(entry: StateRule, entityType: 'LLC' | 'CORP', presence: Presence): EntityRule {
  const base = entityType === 'LLC' ? entry.llc : entry.corporation;
  if (presence === 'domestic' || !base.foreign) return base;
  const { note: _note, ...overrides } = base.foreign;
  const merged = { ...base, ...overrides } as EntityRule;
  // A foreign-only report (Oklahoma corporations) inherits the domestic 'not_applicable' first report unless
  // the override names one; the data's default for a periodic report is the following calendar year.
  if (merged.frequency !== 'none' && merged.firstReport.rule === 'not_applicable' && !overrides.firstReport) {
    merged.firstReport = { rule: 'following_calendar_year' };
  }
  return merged;
}

const SOURCE_RANK: Record<string, number> = { official: 0, statute: 1, regulation: 2, legislative: 3 };
/** The official, statute or regulation source first; else the first one listed. */
export function bestSourceUrl(rule: EntityRule): string | null {
  const ranked = [...(rule.sources ?? [])].sort((a, b) => (SOURCE_RANK[a.kind] ?? 9) - (SOURCE_RANK[b.kind] ?? 9));
  return ranked[0]?.url ?? null;
}

/* ---------------------------------------------------------------------------------- regular due dates */

interface Due {
  due: Ymd;
  opens: Ymd | null;
}

/**
 * The regular report of cycle year `year`: the year of the anniversary (anniversary rules), the filing
 * year (fixed dates) or the year the report falls due (fiscal rules). Null when the kind cannot be computed.
 */
function dueInCycle(
  kind: RuleKind,
  p: RuleParams,
  anchor: Ymd,
  fyeMonth: number,
  sCorp: boolean,
  year: number,
): Due | null {
  switch (kind) {
    case 'fixed_date': {
      // CAL-4
      const due = clampDay(year, p.month!, p.day as number);
      const w = p.windowOpens;
      return { due, opens: w ? clampDay(year + (w.yearOffset ?? 0), w.month, w.day) : null };
    }
    case 'anniversary_month_end': {
      // CAL-5
      const dm = shiftMonth(year, anchor.m, p.monthOffset ?? 0);
      const due = monthEnd(dm.y, dm.m);
      let opens: Ymd | null = null;
      if (p.windowOpensMonthsBefore !== undefined) {
        const om = shiftMonth(dm.y, dm.m, -p.windowOpensMonthsBefore);
        opens = { y: om.y, m: om.m, d: 1 };
      } else if (p.windowOpensDaysBefore !== undefined) {
        opens = addDays(due, -p.windowOpensDaysBefore);
      } else if (p.assessedMonthsBefore !== undefined) {
        const om = shiftMonth(dm.y, dm.m, -p.assessedMonthsBefore);
        opens = { y: om.y, m: om.m, d: 1 };
      }
      return { due, opens };
    }
    case 'anniversary_date': // CAL-6
      return { due: clampDay(year, anchor.m, anchor.d), opens: null };
    case 'anniversary_month_window': {
      // CAL-7
      const om = shiftMonth(year, anchor.m, -(p.windowOpensMonthsBefore ?? 0));
      const dm = shiftMonth(year, anchor.m, p.dueMonthOffset ?? 0);
      return { due: monthEnd(dm.y, dm.m), opens: { y: om.y, m: om.m, d: 1 } };
    }
    case 'quarter_after_anniversary': {
      // CAL-8
      const qStart = Math.floor((anchor.m - 1) / 3) * 3 + 1;
      return { due: monthEnd(year, qStart + 2), opens: { y: year, m: qStart, d: 1 } };
    }
    case 'fiscal_year_based': {
      // CAL-9
      const k =
        sCorp && p.sCorporationMonthsAfterFiscalYearEnd !== undefined
          ? p.sCorporationMonthsAfterFiscalYearEnd
          : p.monthsAfterFiscalYearEnd!;
      // The fiscal year whose report falls due in `year` ends in fyeYear.
      const fyeYear = year - Math.floor((fyeMonth - 1 + k) / 12);
      const dm = shiftMonth(fyeYear, fyeMonth, k);
      const due = p.day === 'last' ? monthEnd(dm.y, dm.m) : clampDay(dm.y, dm.m, p.day as number);
      const opens =
        p.windowOpensMonthOffset !== undefined
          ? (() => {
              const om = shiftMonth(fyeYear, fyeMonth, p.windowOpensMonthOffset);
              return { y: om.y, m: om.m, d: 1 };
            })()
          : null;
      return { due, opens };
    }
    case 'other': // CAL-10: the data's machine params (Wyoming: the first day of the anniversary month).
      if (p.anchor === 'anniversary_month' && typeof p.dueDay === 'number')
        return { due: clampDay(year, anchor.m, p.dueDay), opens: null };
      return null;
    default:
      return null;
  }
}

const cmp = (a: Ymd, b: Ymd) => a.y - b.y || a.m - b.m || a.d - b.d;

/** CAL-12: the first cycle year with a regular report, before the biennial filter of CAL-11. */
function firstCycleYear(
  rule: EntityRule,
  kind: RuleKind,
  anchor: Ymd,
  fyeMonth: number,
  sCorp: boolean,
): number | null {
  const fr = rule.firstReport;
  switch (fr.rule) {
    case 'not_applicable':
      return null;
    case 'second_anniversary':
      return anchor.y + 2;
    case 'after_first_fiscal_year_end': {
      if (kind !== 'fiscal_year_based') return anchor.y + 1;
      // The first fiscal year ends at the end of the first fiscal-year-end month on or after the anchor date.
      const fyeYear = anchor.m <= fyeMonth ? anchor.y : anchor.y + 1;
      const k =
        sCorp && rule.params.sCorporationMonthsAfterFiscalYearEnd !== undefined
          ? rule.params.sCorporationMonthsAfterFiscalYearEnd
          : rule.params.monthsAfterFiscalYearEnd!;
      return shiftMonth(fyeYear, fyeMonth, k).y;
    }
    case 'first_cycle_year_after_formation':
      return anchor.y + 1; // CAL-11 then keeps only the years of the cycle
    default: {
      const skip = fr.skipIfFormedAfter;
      const late = skip && cmp(anchor, { y: anchor.y, m: skip.month, d: skip.day }) > 0;
      return anchor.y + (late ? 2 : 1);
    }
  }
}

/** CAL-11: whether a biennial entity files in cycle year `year`. */
function inCycle(rule: EntityRule, anchor: Ymd, year: number): boolean {
  if (rule.frequency !== 'biennial') return true;
  const c = rule.biennialCycle;
  switch (c?.basis) {
    case 'formation_year_parity':
      return (year - anchor.y) % 2 === 0;
    case 'every_second_year_from_first':
      return (year - anchor.y) % 2 === 1;
    case 'fixed_parity':
      return (year % 2 === 0) === (c.parity === 'even');
    default:
      return true;
  }
}

/* ------------------------------------------------------------------------------------ initial reports */

/**
 * CAL-13: initial-report rules the data states only in words, keyed by state and entity type. Each follows
 * the data's own description of that row; an operator who changes the row's description changes this too.
 */
const INITIAL_REPORT_WORD_RULES: Record<
  string,
  { notRequiredIfFormedAfter?: { month: number; day: number }; dueEndOfMonthAfter?: number }
> = {
  // "not required if formed after October 1"
  'GA:CORP:domestic': { notRequiredIfFormedAfter: { month: 10, day: 1 } },
  // "initial list due by the last day of the first month after registration"
  'NV:LLC:foreign': { dueEndOfMonthAfter: 1 },
  'NV:CORP:foreign': { dueEndOfMonthAfter: 1 },
};

function initialReportDue(ir: InitialReport, q: CalendarQuery, anchor: Ymd): Ymd | null {
  const applies = ir.appliesTo === 'domestic_and_foreign' || ir.appliesTo === q.presence;
  if (!applies) return null;
  const word = INITIAL_REPORT_WORD_RULES[`${q.state}:${q.entityType}:${q.presence}`];
  const limit = word?.notRequiredIfFormedAfter;
  if (limit && cmp(anchor, { y: anchor.y, m: limit.month, d: limit.day }) > 0) return null;
  if (typeof ir.dueWithinDays === 'number') return addDays(anchor, ir.dueWithinDays);
  if (typeof ir.dueWithinMonths === 'number') return addMonths(anchor, ir.dueWithinMonths);
  if (word?.dueEndOfMonthAfter !== undefined) {
    const dm = shiftMonth(anchor.y, anchor.m, word.dueEndOfMonthAfter);
    return monthEnd(dm.y, dm.m);
  }
  return null;
}

/* ------------------------------------------------------------------------------------------- calendar */

const RULE_IDS: Record<RuleKind, string> = {
  fixed_date: 'CAL-4',
  anniversary_month_end: 'CAL-5',
  anniversary_date: 'CAL-6',
  anniversary_month_window: 'CAL-7',
  quarter_after_anniversary: 'CAL-8',
  fiscal_year_based: 'CAL-9',
  other: 'CAL-10',
};

function notesFor(rule: EntityRule): string | null {
  const notes: string[] = [];
  if (rule.params?.dateAssignedByState)
    notes.push(
      'The state assigns the exact due date in the anniversary month; the date shown is the anniversary date.',
    );
  if (rule.ruleKind === 'anniversary_date' && typeof rule.params?.anchor === 'string')
    notes.push(`The anniversary is that of the ${rule.params.anchor}.`);
  if (rule.frequency === 'biennial' && rule.biennialCycle?.basis === 'state_assigned')
    notes.push(
      'Biennial: the state assigns odd or even filing years, so every year is shown; only one of two applies.',
    );
  const alt = rule.alternative as { condition?: string; note?: string } | null | undefined;
  if (alt) notes.push(`Alternative schedule not applied: ${alt.condition ?? alt.note ?? 'see the rule'}.`);
  return notes.length ? notes.join(' ').slice(0, 500) : null;
}

/**
 * Every report an entity owes in one state with a due date in [from, to], sorted by due date (CAL-2 .. CAL-15).
 *
 * Regular reports: cycle years from the first report (CAL-12), kept by the biennial cycle (CAL-11), each
 * dated by its ruleKind (CAL-4 .. CAL-10); a date on or before the anchor date is never owed. Initial
 * reports: once, after the anchor date (CAL-13). Elective alternatives are not applied (CAL-14).
 *
 * @param entry the state's rules (data/annual-report-due-dates.json shape); undefined = no rules, no obligations.
 * @param q the entity; `from`/`to`/`anchorDate` must be real 'YYYY-MM-DD' dates (not checked here).
 * @returns obligations in due-date order (ties: initial before annual); empty when nothing is owed.
 */
export function computeObligations(entry: StateRule | undefined, q: CalendarQuery): Obligation[] {
  if (!entry) return [];
  const rule = effectiveRule(entry, q.entityType, q.presence);
  const anchor = parse(q.anchorDate);
  const from = parse(q.from);
  const to = parse(q.to);
  const sCorp = q.entityType === 'CORP' && q.sCorporation === true;
  const sourceUrl = bestSourceUrl(rule);
  const out: Obligation[] = [];
  const push = (
    kind: ObligationKind,
    reportName: string,
    due: Ymd,
    opens: Ymd | null,
    ruleId: string,
    note: string | null,
  ) => {
    if (cmp(due, from) < 0 || cmp(due, to) > 0) return;
    out.push({
      jurisdiction: q.state,
      presence: q.presence,
      kind,
      reportName,
      dueDate: fmt(due),
      windowOpensOn: opens ? fmt(opens) : null,
      filingYear: due.y,
      confidence: rule.confidence,
      sourceUrl,
      ruleId,
      note,
    });
  };

  const reportName = rule.reportName ?? 'Annual report';
  let initialDue: Ymd | null = null;
  if (rule.initialReport) {
    initialDue = initialReportDue(rule.initialReport, q, anchor);
    const note =
      rule.initialReport.relativeTo === 'commencing_business'
        ? 'Due after the entity commences business; the formation or registration date is used.'
        : null;
    if (initialDue) push('initial_report', `Initial ${reportName}`.slice(0, 200), initialDue, anchor, 'CAL-13', note);
  }

  if (rule.frequency !== 'none' && rule.ruleKind) {
    const kind = rule.ruleKind;
    // CAL-6: an anniversary measured from something other than formation (Connecticut corporations: the
    // first report, due as the initial report) moves the anchor to that date.
    const periodic =
      kind === 'anniversary_date' && typeof rule.params.anchor === 'string' && initialDue ? initialDue : anchor;
    const first = firstCycleYear(rule, kind, periodic, q.fiscalYearEndMonth, sCorp);
    if (first !== null) {
      const note = notesFor(rule);
      // Cycle years whose dates can reach [from, to]: a due date lies at most a year from its cycle year.
      for (let year = Math.max(first, from.y - 1); year <= to.y + 1; year++) {
        if (!inCycle(rule, periodic, year)) continue;
        const d = dueInCycle(kind, rule.params, periodic, q.fiscalYearEndMonth, sCorp, year);
        if (!d || cmp(d.due, anchor) <= 0) continue;
        push('annual_report', reportName, d.due, d.opens, RULE_IDS[kind], note);
      }
    }
  }
  return out.sort((a, b) =>
    a.dueDate < b.dueDate
      ? -1
      : a.dueDate > b.dueDate
        ? 1
        : a.kind === b.kind
          ? 0
          : a.kind === 'initial_report'
            ? -1
            : 1,
  );
}

/** Calendar item statuses (CAL-16). */
export type ObligationStatus = 'upcoming' | 'open' | 'overdue' | 'filed';

/**
 * CAL-16: `filed` when an annual report order for the jurisdiction and filing year is filed; else `overdue`
 * after the due date, `open` from the day the window opens, `upcoming` before.
 * @param today 'YYYY-MM-DD' (UTC).
 */
export function obligationStatus(
  o: Pick<Obligation, 'dueDate' | 'windowOpensOn'>,
  today: string,
  filed: boolean,
): ObligationStatus {
  if (filed) return 'filed';
  if (today > o.dueDate) return 'overdue';
  if (o.windowOpensOn !== null && today >= o.windowOpensOn) return 'open';
  return 'upcoming';
}

import { addDays, clampDay, compareYmd, monthEnd, shiftMonth, type Ymd } from './calendar-dates.js';
import type { EntityRule, RuleKind, RuleParams } from './due-date-rules.js';

/*
 * The regular (annual or biennial) reports of the compliance calendar: the due date of each cycle year by the
 * rule's kind (CAL-4 .. CAL-10), the biennial cycle (CAL-11) and the first cycle year (CAL-12). Pure, no clock.
 */

/** The docs/rules.md id of the rule that dates each kind of regular report. */
export const RULE_IDS: Record<RuleKind, string> = {
  fixed_date: 'CAL-4',
  anniversary_month_end: 'CAL-5',
  anniversary_date: 'CAL-6',
  anniversary_month_window: 'CAL-7',
  quarter_after_anniversary: 'CAL-8',
  fiscal_year_based: 'CAL-9',
  other: 'CAL-10',
};

/** A regular report's due date and the first day of its filing window (null: none). */
export interface Due {
  due: Ymd;
  opens: Ymd | null;
}

/** CAL-9: months from the fiscal-year end to the due month, the S corporation variant where the row has one. */
const monthsAfterFiscalYearEnd = (p: RuleParams, sCorp: boolean): number =>
  sCorp && p.sCorporationMonthsAfterFiscalYearEnd !== undefined
    ? p.sCorporationMonthsAfterFiscalYearEnd
    : p.monthsAfterFiscalYearEnd!;

/**
 * The regular report of cycle year `year`: the year of the anniversary (anniversary rules), the filing
 * year (fixed dates) or the year the report falls due (fiscal rules). Null when the kind cannot be computed.
 */
export function dueInCycle(
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
      const k = monthsAfterFiscalYearEnd(p, sCorp);
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
    case 'other': {
      // CAL-10: the data's machine params (Wyoming: the first day of the anniversary month); CAL-26: windowOpens is
      // the first filing day in the due date's year, never after the due date.
      if (p.anchor !== 'anniversary_month' || typeof p.dueDay !== 'number') return null;
      const due = clampDay(year, anchor.m, p.dueDay);
      const w = p.windowOpens;
      const opens = w ? clampDay(year + (w.yearOffset ?? 0), w.month, w.day) : null;
      return { due, opens: opens && compareYmd(opens, due) <= 0 ? opens : null };
    }
    default:
      return null;
  }
}

/** CAL-12: the first cycle year with a regular report, before the biennial filter of CAL-11; null when none. */
export function firstCycleYear(
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
      return shiftMonth(fyeYear, fyeMonth, monthsAfterFiscalYearEnd(rule.params, sCorp)).y;
    }
    case 'first_cycle_year_after_formation':
      return anchor.y + 1; // CAL-11 then keeps only the years of the cycle
    default: {
      const skip = fr.skipIfFormedAfter;
      const late = skip && compareYmd(anchor, { y: anchor.y, m: skip.month, d: skip.day }) > 0;
      return anchor.y + (late ? 2 : 1);
    }
  }
}

/** CAL-11: whether a biennial entity files in cycle year `year` (an annual one files every year). */
export function inCycle(rule: EntityRule, anchor: Ymd, year: number): boolean {
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

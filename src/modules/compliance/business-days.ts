import Holidays from 'date-holidays';
import { addDays, formatYmd, type Ymd } from './calendar-dates.js';
import type { WeekendRule } from './due-date-rules.js';

/*
 * CAL-24, CAL-25: a due date on a weekend or legal holiday, moved to the next business day where the state's rule says
 * so. Holidays come from the date-holidays library (its data ships in the package, nothing is fetched): the `public`
 * holidays of the United States (`federal`) or of the state (`state`, federal ones included), substitute days too.
 */

const cache = new Map<string, Set<string>>();

/** The 'YYYY-MM-DD' public holidays of `year` for the list `holidays` of `state` (cached per list and year). */
function holidaysOf(state: string, holidays: WeekendRule['holidays'], year: number): Set<string> {
  const key = `${holidays === 'federal' ? 'US' : state}:${year}`;
  let set = cache.get(key);
  if (!set) {
    const lib = holidays === 'federal' ? new Holidays('US') : new Holidays('US', state);
    set = new Set(
      lib
        .getHolidays(year)
        .filter((h) => h.type === 'public')
        .map((h) => h.date.slice(0, 10)),
    );
    cache.set(key, set);
  }
  return set;
}

/** True when `date` is a Saturday, a Sunday or a public holiday of the list `holidays` of `state` (CAL-25). */
function isNonBusinessDay(date: Ymd, state: string, holidays: WeekendRule['holidays']): boolean {
  const weekday = new Date(Date.UTC(date.y, date.m - 1, date.d)).getUTCDay();
  return weekday === 0 || weekday === 6 || holidaysOf(state, holidays, date.y).has(formatYmd(date));
}

/**
 * CAL-24: the effective due date of a statutory due date: the next business day when the state's rule is
 * `next_business_day` and the date is a weekend day or holiday, else the date itself.
 * @returns the date and, when moved, a sentence saying why.
 */
export function effectiveDueDate(
  due: Ymd,
  state: string,
  rule: WeekendRule | undefined,
): { date: Ymd; movedBecause: string | null } {
  if (rule?.rule !== 'next_business_day' || !isNonBusinessDay(due, state, rule.holidays)) {
    return { date: due, movedBecause: null };
  }
  let d = due;
  while (isNonBusinessDay(d, state, rule.holidays)) d = addDays(d, 1);
  return {
    date: d,
    movedBecause: `The statutory date ${formatYmd(due)} is a weekend day or holiday; ${state} moves it to the next business day.`,
  };
}

import { ValidationError, type FieldError } from '../../lib/errors.js';
import { addMonthsIso, daysBetween, isIsoDate } from './calendar-dates.js';

/** The default calendar: today to 18 months ahead (CAL-17). */
const DEFAULT_RANGE_MONTHS = 18;
/** The last date a calendar reaches: its default end stops here rather than run past the dates there are. */
const LAST_DATE = '9999-12-31';
/** The longest range one request may ask for, in days (bounds the work of a request: CAL-17). */
const MAX_RANGE_DAYS = 5 * 366;

/** Today's date in UTC, 'YYYY-MM-DD'. */
export const todayUtc = (now = new Date()) => now.toISOString().slice(0, 10);

/** A date range query: `from`/`to` 'YYYY-MM-DD', either optional. */
export interface RangeQuery {
  from?: string;
  to?: string;
}

/**
 * CAL-17: the requested range, defaulting to today .. today + 18 months.
 * @throws ValidationError naming `from` or `to` (not a date, to before from, longer than MAX_RANGE_DAYS).
 */
export function resolveRange(q: RangeQuery, today: string): { from: string; to: string } {
  const errors: FieldError[] = [];
  for (const f of ['from', 'to'] as const) {
    const v = q[f];
    if (v !== undefined && !isIsoDate(v)) errors.push({ field: f, message: 'must be a date YYYY-MM-DD' });
  }
  if (errors.length) throw new ValidationError(errors);
  const from = q.from ?? today;
  const to = q.to ?? defaultEnd(from);
  if (to < from) throw new ValidationError([{ field: 'to', message: `must not be before from (${from})` }]);
  if (daysBetween(from, to) > MAX_RANGE_DAYS)
    throw new ValidationError([
      { field: 'to', message: `must be at most ${MAX_RANGE_DAYS} days after from (${from})` },
    ]);
  return { from, to };
}

/** CAL-17: `from` + 18 months, or LAST_DATE when that runs past it (a year of five digits sorts wrong as text). */
function defaultEnd(from: string): string {
  const end = addMonthsIso(from, DEFAULT_RANGE_MONTHS);
  return end.length > 10 || end > LAST_DATE ? LAST_DATE : end;
}

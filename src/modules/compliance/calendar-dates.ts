/*
 * Date arithmetic of the compliance calendar (CAL-2 .. CAL-15): calendar dates ('YYYY-MM-DD'), computed in whole
 * days with no time zone; weekends and holidays are not adjusted.
 */

/** A calendar date split into its year, month (1-12) and day of the month. */
export interface Ymd {
  y: number;
  m: number;
  d: number;
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');
const daysIn = (y: number, m: number) => new Date(Date.UTC(y, m, 0)).getUTCDate();

/** The date written 'YYYY-MM-DD'. */
export const formatYmd = ({ y, m, d }: Ymd) => `${pad(y, 4)}-${pad(m)}-${pad(d)}`;

/** The parts of a 'YYYY-MM-DD' date; the text is not checked (see isIsoDate). */
export const parseYmd = (s: string): Ymd => {
  const [y, m, d] = s.split('-').map(Number);
  return { y: y!, m: m!, d: d! };
};

/** Negative when `a` is before `b`, 0 on the same day, positive after. */
export const compareYmd = (a: Ymd, b: Ymd) => a.y - b.y || a.m - b.m || a.d - b.d;

/** (y, m + delta) normalised to a real month. */
export const shiftMonth = (y: number, m: number, delta: number) => {
  const idx = y * 12 + (m - 1) + delta;
  return { y: Math.floor(idx / 12), m: (((idx % 12) + 12) % 12) + 1 };
};

/** The last day of month `m` of year `y`. */
export const monthEnd = (y: number, m: number): Ymd => ({ y, m, d: daysIn(y, m) });

/** The day, clamped to the month's length (Feb 29 -> Feb 28 in a non-leap year: CAL-6). */
export const clampDay = (y: number, m: number, d: number): Ymd => ({ y, m, d: Math.min(d, daysIn(y, m)) });

/** `date` plus n days (n may be negative). */
export const addDays = (date: Ymd, n: number): Ymd => {
  const t = new Date(Date.UTC(date.y, date.m - 1, date.d + n));
  return { y: t.getUTCFullYear(), m: t.getUTCMonth() + 1, d: t.getUTCDate() };
};

/** `date` plus n months, the day clamped to the month's length. */
export const addMonths = (date: Ymd, n: number): Ymd => {
  const { y, m } = shiftMonth(date.y, date.m, n);
  return clampDay(y, m, date.d);
};

/** True when `s` is a real calendar date written 'YYYY-MM-DD'. */
export function isIsoDate(s: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(s)) return false;
  const { y, m, d } = parseYmd(s);
  return m >= 1 && m <= 12 && d >= 1 && d <= daysIn(y, m);
}

/** 'YYYY-MM-DD' plus n days (n may be negative). */
export function addDaysIso(iso: string, n: number): string {
  return formatYmd(addDays(parseYmd(iso), n));
}

/** 'YYYY-MM-DD' plus n months, the day clamped to the month's length. */
export function addMonthsIso(iso: string, n: number): string {
  return formatYmd(addMonths(parseYmd(iso), n));
}

/** Whole days from `from` to `to` (both 'YYYY-MM-DD'); negative when `to` is earlier. */
export function daysBetween(from: string, to: string): number {
  const a = parseYmd(from);
  const b = parseYmd(to);
  return Math.round((Date.UTC(b.y, b.m - 1, b.d) - Date.UTC(a.y, a.m - 1, a.d)) / 86_400_000);
}

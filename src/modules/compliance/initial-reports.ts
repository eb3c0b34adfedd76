import { addDays, addMonths, compareYmd, type Ymd } from './calendar-dates.js';
import type { InitialReport } from './due-date-rules.js';
import type { CalendarQuery } from './obligation.js';

/**
 * CAL-13: initial-report rules the data states only in words, keyed by state and entity type. Each follows
 * the data's own description of that row; an operator who changes the row's description changes this too.
 */
const INITIAL_REPORT_WORD_RULES: Record<string, { notRequiredIfFormedAfter?: { month: number; day: number } }> = {
  // "not required if formed after October 1"
  'GA:CORP:domestic': { notRequiredIfFormedAfter: { month: 10, day: 1 } },
};

/**
 * CAL-13: the due date of the entity's initial report, counted from the anchor date; null when the report does not
 * apply to the entity (its presence, a word rule) or the data gives no way to date it.
 */
export function initialReportDue(
  ir: InitialReport,
  q: Pick<CalendarQuery, 'state' | 'entityType' | 'presence'>,
  anchor: Ymd,
): Ymd | null {
  const applies = ir.appliesTo === 'domestic_and_foreign' || ir.appliesTo === q.presence;
  if (!applies) return null;
  const word = INITIAL_REPORT_WORD_RULES[`${q.state}:${q.entityType}:${q.presence}`];
  const limit = word?.notRequiredIfFormedAfter;
  if (limit && compareYmd(anchor, { y: anchor.y, m: limit.month, d: limit.day }) > 0) return null;
  if (typeof ir.dueWithinDays === 'number') return addDays(anchor, ir.dueWithinDays);
  if (typeof ir.dueWithinMonths === 'number') return addMonths(anchor, ir.dueWithinMonths);
  return null;
}

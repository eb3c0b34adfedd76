import { effectiveDueDate } from './business-days.js';
import { clampDay, compareYmd, formatYmd, parseYmd, type Ymd } from './calendar-dates.js';
import { estimatedTaxApplies, type StateRule } from './due-date-rules.js';
import { bestSourceUrl, effectiveRule, notesFor } from './effective-rule.js';
import { initialReportDue } from './initial-reports.js';
import type { CalendarQuery, Obligation, ObligationKind } from './obligation.js';
import { dueInCycle, firstCycleYear, inCycle, RULE_IDS } from './regular-reports.js';

/*
 * The compliance calendar's computation (CAL-2 .. CAL-15, CAL-24, CAL-32): pure, no clock, no database. Dates are
 * calendar dates ('YYYY-MM-DD'), computed in whole days with no time zone; a due date on a weekend or holiday moves
 * only where the state's rule says so (CAL-24).
 */

/**
 * Every report an entity owes in one state with a due date in [from, to], sorted by due date (CAL-2 .. CAL-15).
 *
 * Regular reports: cycle years from the first report (CAL-12), kept by the biennial cycle (CAL-11), each
 * dated by its ruleKind (CAL-4 .. CAL-10); a date on or before the anchor date is never owed. Initial
 * reports: once, after the anchor date (CAL-13). Elective alternatives are not applied (CAL-14). Each statutory date
 * becomes its effective date by the state's weekend rule (CAL-24); the range and the order use the effective date.
 * Estimated tax instalments only for an entity flagged as paying it (CAL-32).
 *
 * @param entry the state's rules (data/annual-report-due-dates.json shape); undefined = no rules, no obligations.
 * @param q the entity; `from`/`to`/`anchorDate` must be real 'YYYY-MM-DD' dates (not checked here).
 * @returns obligations in due-date order (ties: initial before annual); empty when nothing is owed.
 */
export function computeObligations(entry: StateRule | undefined, q: CalendarQuery): Obligation[] {
  if (!entry) return [];
  const rule = effectiveRule(entry, q.entityType, q.presence);
  const anchor = parseYmd(q.anchorDate);
  const from = parseYmd(q.from);
  const to = parseYmd(q.to);
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
    const effective = effectiveDueDate(due, q.state, entry.weekendRule);
    if (compareYmd(effective.date, from) < 0 || compareYmd(effective.date, to) > 0) return;
    out.push({
      jurisdiction: q.state,
      presence: q.presence,
      kind,
      reportName,
      dueDate: formatYmd(effective.date),
      statutoryDueDate: formatYmd(due),
      dueDateMovedBecause: effective.movedBecause,
      windowOpensOn: opens ? formatYmd(opens) : null,
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
        if (!d || compareYmd(d.due, anchor) <= 0) continue;
        push('annual_report', reportName, d.due, d.opens, RULE_IDS[kind], note);
      }
    }
  }

  // CAL-32: estimated tax instalments (Delaware corporations owing $5,000 or more), only when flagged.
  const et = rule.estimatedTax;
  if (q.estimatedTax && et && estimatedTaxApplies(et, q.presence)) {
    for (let year = from.y; year <= to.y; year++) {
      for (const i of et.installments) {
        const due = clampDay(year, i.month, i.day);
        if (compareYmd(due, anchor) <= 0) continue;
        const share = i.percent ? `${i.percent}% of the estimated tax. ` : '';
        push('estimated_tax', et.name, due, null, 'CAL-32', `${share}${et.threshold ?? ''}`.trim() || null);
      }
    }
  }
  const rank: Record<ObligationKind, number> = { initial_report: 0, annual_report: 1, estimated_tax: 2 };
  return out.sort((a, b) => (a.dueDate < b.dueDate ? -1 : a.dueDate > b.dueDate ? 1 : rank[a.kind] - rank[b.kind]));
}

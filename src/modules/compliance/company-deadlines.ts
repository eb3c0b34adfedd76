import type { Db } from '../../lib/db.js';
import { FORMATION_STATES, MONTHS } from '../companies/company-rules.js';
import { computeObligations } from './calendar.js';
import * as repo from './compliance.repo.js';
import type { StateRule } from './due-date-rules.js';
import { obligationStatus, type Obligation, type ObligationStatus } from './obligation.js';

/** Prefix of a deadline's id; the id sorts like the list (due date, company, jurisdiction, kind). */
export const DEADLINE_ID_PREFIX = 'dl_';

/** One calendar item (CAL-16 .. CAL-18) with the state fee in cents; deadlineView presents it in dollars. */
export interface DeadlineItem {
  id: string;
  companyId: string;
  jurisdiction: string;
  presence: 'domestic' | 'foreign';
  kind: Obligation['kind'];
  reportName: string;
  /** The effective due date (CAL-24). */
  dueDate: string;
  /** The date the rule gives before a weekend or holiday adjustment (CAL-24). */
  statutoryDueDate: string;
  /** Why dueDate differs from statutoryDueDate; null when it does not. */
  dueDateNote: string | null;
  windowOpensOn: string | null;
  filingYear: number;
  status: ObligationStatus;
  confidence: Obligation['confidence'];
  sourceUrl: string | null;
  estimatedStateFeeCents: number | null;
  orderable: boolean;
  /** The annual report order covering it (filed, or submitted/pending), else null. */
  orderId: string | null;
  /** True when an annual report order covering it is submitted or pending (reminders stop: CAL-20). */
  coveredByPendingOrder: boolean;
  note: string | null;
}

/** Everything the calendars of a set of companies read, loaded once. */
export interface CalendarData {
  rules: Map<string, StateRule>;
  fees: Map<string, repo.ReportFeeRow>;
  qualifications: Map<string, repo.QualificationRow[]>;
  orders: Map<string, repo.ReportOrderRow[]>;
  /** CAL-29, CAL-32: operator overrides keyed `<companyId>:<state>`. */
  overrides: Map<string, repo.CalendarOverrideRow>;
}

const groupBy = <T extends { company_id: string }>(rows: T[]) => {
  const m = new Map<string, T[]>();
  for (const r of rows) m.set(r.company_id, [...(m.get(r.company_id) ?? []), r]);
  return m;
};

/** Loads rules, fees, filed qualifications, annual report orders and overrides for `companyIds` (five queries). */
export async function loadCalendarData(db: Db, companyIds: string[]): Promise<CalendarData> {
  const [rules, fees, quals, orders, overrides] = await Promise.all([
    repo.listRules(db),
    repo.listReportFees(db),
    repo.listFiledQualifications(db, companyIds),
    repo.listReportOrders(db, companyIds),
    repo.listCalendarOverrides(db, companyIds),
  ]);
  return {
    rules: new Map(rules.map((r) => [r.state, r.rule])),
    fees: new Map(fees.map((f) => [f.state, f])),
    qualifications: groupBy(quals),
    orders: groupBy(orders),
    overrides: new Map(overrides.map((o) => [`${o.company_id}:${o.state}`, o])),
  };
}

const KIND_SUFFIX: Record<Obligation['kind'], string> = {
  annual_report: 'ar',
  initial_report: 'ir',
  estimated_tax: 'et',
};
const deadlineId = (companyId: string, o: Obligation) =>
  `${DEADLINE_ID_PREFIX}${o.dueDate.replace(/-/g, '')}_${companyId}_${o.jurisdiction}_${KIND_SUFFIX[o.kind]}`;

/**
 * The calendar of one company with a formation date: its formation state (domestic) and every state with a filed
 * foreign qualification (foreign, registered on its filing date), due dates in [from, to], by due date (CAL-17).
 * Status, fee and orderability per CAL-16 and CAL-18.
 */
export function companyDeadlines(
  c: repo.CalendarCompanyRow,
  data: CalendarData,
  range: { from: string; to: string },
  today: string,
): DeadlineItem[] {
  if (!c.formation_date) return [];
  const base = {
    entityType: c.entity_type,
    fiscalYearEndMonth: Math.max(1, (MONTHS as readonly string[]).indexOf(c.fiscal_end_month) + 1 || 12),
    sCorporation: c.tax_election === 'S Corporation',
    ...range,
  };
  const obligations: Obligation[] = [];
  // CAL-29: an operator's anchor date replaces the formation or registration date; CAL-32: the estimated tax flag.
  const override = (state: string) => data.overrides.get(`${c.id}:${state}`);
  if (c.formation_state) {
    const o = override(c.formation_state);
    obligations.push(
      ...computeObligations(data.rules.get(c.formation_state), {
        ...base,
        state: c.formation_state,
        presence: 'domestic',
        anchorDate: o?.anchor_date ?? c.formation_date,
        estimatedTax: o?.estimated_tax ?? false,
      }),
    );
  }
  for (const q of data.qualifications.get(c.id) ?? []) {
    if (q.state === c.formation_state) continue;
    const o = override(q.state);
    obligations.push(
      ...computeObligations(data.rules.get(q.state), {
        ...base,
        state: q.state,
        presence: 'foreign',
        anchorDate: o?.anchor_date ?? q.registered_on,
        estimatedTax: o?.estimated_tax ?? false,
      }),
    );
  }
  const orders = data.orders.get(c.id) ?? [];
  return obligations
    .map((o) => {
      // CAL-16, CAL-35: an annual report order covers reports of its state in the years it covers; never a tax instalment.
      const covering =
        o.kind === 'estimated_tax'
          ? []
          : orders.filter(
              (r) =>
                r.state === o.jurisdiction && o.filingYear >= r.filing_year && o.filingYear < r.filing_year + r.years,
            );
      const filedOrder = covering.find((r) => r.filing_status === 'filed');
      const pendingOrder = covering.find((r) => r.filing_status !== 'filed');
      // CAL-16: an initial report due on the anchor date (its window opens then) is filed with the formation or
      // registration document itself.
      const filedWithFormation = o.kind === 'initial_report' && o.dueDate === o.windowOpensOn;
      const fee = data.fees.get(o.jurisdiction);
      const feeCents = fee
        ? c.entity_type === 'LLC'
          ? fee.llc_annual_report_cents
          : fee.corp_annual_report_cents
        : null;
      return {
        id: deadlineId(c.id, o),
        companyId: c.id,
        jurisdiction: o.jurisdiction,
        presence: o.presence,
        kind: o.kind,
        reportName: o.reportName,
        dueDate: o.dueDate,
        statutoryDueDate: o.statutoryDueDate,
        dueDateNote: o.dueDateMovedBecause,
        windowOpensOn: o.windowOpensOn,
        filingYear: o.filingYear,
        status: obligationStatus(o, today, Boolean(filedOrder) || filedWithFormation),
        confidence: o.confidence,
        sourceUrl: o.sourceUrl,
        // CAL-18: the state fee schedule's annual report fee; initial reports have no fee in the schedule.
        estimatedStateFeeCents: o.kind === 'annual_report' && feeCents !== null ? feeCents : null,
        orderable: o.kind === 'annual_report' && (FORMATION_STATES as readonly string[]).includes(o.jurisdiction),
        orderId: filedOrder?.id ?? pendingOrder?.id ?? null,
        coveredByPendingOrder: !filedOrder && Boolean(pendingOrder),
        note: o.note,
      };
    })
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** Every deadline of the given companies in the range (`from`/`to`, `today` 'YYYY-MM-DD'), company by company. */
export async function deadlinesOf(
  db: Db,
  companies: repo.CalendarCompanyRow[],
  range: { from: string; to: string },
  today: string,
): Promise<DeadlineItem[]> {
  const data = await loadCalendarData(
    db,
    companies.map((c) => c.id),
  );
  return companies.flatMap((c) => companyDeadlines(c, data, range, today));
}

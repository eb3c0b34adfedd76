import type pg from 'pg';
import type { Tenant } from '../../context.js';
import { withTransaction, type Db } from '../../lib/db.js';
import { AppError, FieldErrors, ValidationError, type FieldError } from '../../lib/errors.js';
import type { Page } from '../../lib/pagination.js';
import { FORMATION_STATES, MONTHS } from '../companies/company-rules.js';
import { findCompanyOrThrow } from '../companies/companies.service.js';
import {
  addMonthsIso,
  computeObligations,
  daysBetween,
  isIsoDate,
  obligationStatus,
  type Obligation,
  type ObligationStatus,
} from './calendar.js';
import * as repo from './compliance.repo.js';
import { ruleProblems, type StateRule } from './due-date-rules.js';

/** The default calendar: today to 18 months ahead (CAL-17). */
export const DEFAULT_RANGE_MONTHS = 18;
/** The longest range one request may ask for, in days (bounds the work of a request: CAL-17). */
export const MAX_RANGE_DAYS = 5 * 366;
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
  dueDate: string;
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
  const to = q.to ?? addMonthsIso(from, DEFAULT_RANGE_MONTHS);
  if (to < from) throw new ValidationError([{ field: 'to', message: `must not be before from (${from})` }]);
  if (daysBetween(from, to) > MAX_RANGE_DAYS)
    throw new ValidationError([
      { field: 'to', message: `must be at most ${MAX_RANGE_DAYS} days after from (${from})` },
    ]);
  return { from, to };
}

/** Everything the calendars of a set of companies read, loaded once. */
export interface CalendarData {
  rules: Map<string, StateRule>;
  fees: Map<string, repo.ReportFeeRow>;
  qualifications: Map<string, repo.QualificationRow[]>;
  orders: Map<string, repo.ReportOrderRow[]>;
}

const groupBy = <T extends { company_id: string }>(rows: T[]) => {
  const m = new Map<string, T[]>();
  for (const r of rows) m.set(r.company_id, [...(m.get(r.company_id) ?? []), r]);
  return m;
};

/** Loads rules, fees, filed qualifications and annual report orders for `companyIds` (five queries). */
export async function loadCalendarData(db: Db, companyIds: string[]): Promise<CalendarData> {
  const [rules, fees, quals, orders] = await Promise.all([
    repo.listRules(db),
    repo.listReportFees(db),
    repo.listFiledQualifications(db, companyIds),
    repo.listReportOrders(db, companyIds),
  ]);
  return {
    rules: new Map(rules.map((r) => [r.state, r.rule])),
    fees: new Map(fees.map((f) => [f.state, f])),
    qualifications: groupBy(quals),
    orders: groupBy(orders),
  };
}

const deadlineId = (companyId: string, o: Obligation) =>
  `${DEADLINE_ID_PREFIX}${o.dueDate.replace(/-/g, '')}_${companyId}_${o.jurisdiction}_${o.kind === 'annual_report' ? 'ar' : 'ir'}`;

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
  if (c.formation_state) {
    obligations.push(
      ...computeObligations(data.rules.get(c.formation_state), {
        ...base,
        state: c.formation_state,
        presence: 'domestic',
        anchorDate: c.formation_date,
      }),
    );
  }
  for (const q of data.qualifications.get(c.id) ?? []) {
    if (q.state === c.formation_state) continue;
    obligations.push(
      ...computeObligations(data.rules.get(q.state), {
        ...base,
        state: q.state,
        presence: 'foreign',
        anchorDate: q.registered_on,
      }),
    );
  }
  const orders = data.orders.get(c.id) ?? [];
  return obligations
    .map((o) => {
      const covering = orders.filter((r) => r.state === o.jurisdiction && r.filing_year === o.filingYear);
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

/** A calendar item of GET /companies/{id}/compliance-calendar (cents): without the company id. */
export type CalendarItem = Omit<DeadlineItem, 'companyId'>;
const toCalendarItem = ({ companyId: _c, ...item }: DeadlineItem): CalendarItem => item;

/**
 * GET /companies/{companyIdOrSlug}/compliance-calendar: `{companyId, items}` sorted by due date (CAL-17).
 * @throws AppError not_found (404) for a company outside the tenant; conflict (409) naming formationDate or
 * formationState when the company has none (CAL-19); ValidationError for a bad range.
 */
export async function getCompanyCalendar(
  db: Db,
  tenant: Tenant,
  idOrSlug: string,
  q: RangeQuery,
  today = todayUtc(),
): Promise<{ companyId: string; from: string; to: string; items: CalendarItem[] }> {
  const company = await findCompanyOrThrow(db, tenant, idOrSlug);
  for (const field of ['formationDate', 'formationState'] as const) {
    const value = field === 'formationDate' ? company.formation_date : company.formation_state;
    if (!value) {
      const message = `Company ${company.id} has no ${field}: its compliance calendar is computed from it; set it with PATCH /companies/${company.id}`;
      throw new AppError('conflict', message, {
        errors: [{ field, message: 'is required to compute the compliance calendar' }],
      });
    }
  }
  const range = resolveRange(q, today);
  const [row] = await repo.listCalendarCompanies(db, tenant, company.id);
  const data = await loadCalendarData(db, [company.id]);
  return { companyId: company.id, ...range, items: companyDeadlines(row!, data, range, today).map(toCalendarItem) };
}

/** Query of GET /compliance-deadlines and of the console and CLI lists. */
export interface DeadlinesQuery extends RangeQuery {
  jurisdiction?: string;
  status?: ObligationStatus;
  limit?: number;
  startingAfter?: string;
}

/** The deadlines of many companies in one list: filters, then keyset on the id (due date order, CAL-17). */
export function pageDeadlines(items: DeadlineItem[], q: DeadlinesQuery): Page<DeadlineItem> {
  const limit = q.limit ?? 20;
  const kept = items
    .filter(
      (i) =>
        (q.jurisdiction === undefined || i.jurisdiction === q.jurisdiction) &&
        (q.status === undefined || i.status === q.status),
    )
    .filter((i) => q.startingAfter === undefined || i.id > q.startingAfter)
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return { object: 'list', data: kept.slice(0, limit), hasMore: kept.length > limit };
}

/** Every deadline of the given companies in the range. */
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

/**
 * GET /compliance-deadlines: the obligations of every company of the tenant with a formation date, in due-date
 * order, filtered by jurisdiction and status, keyset-paginated by deadline id (CAL-17).
 * @throws ValidationError for a bad range or cursor.
 */
export async function listComplianceDeadlines(
  db: Db,
  tenant: Tenant,
  q: DeadlinesQuery,
  today = todayUtc(),
): Promise<Page<DeadlineItem>> {
  const range = resolveRange(q, today);
  const companies = await repo.listCalendarCompanies(db, tenant);
  return pageDeadlines(await deadlinesOf(db, companies, range, today), q);
}

/** A deadline as the filing team sees it: with the company's name, organization and environment. */
export interface TeamDeadline extends DeadlineItem {
  legalName: string;
  organizationId: string;
  environment: 'live' | 'test';
}

/** Filters of the filing team's deadline view (console, CLI). */
export interface TeamDeadlinesQuery extends RangeQuery {
  jurisdiction?: string;
  status?: ObligationStatus;
  environment?: 'live' | 'test';
  organizationId?: string;
  /** Leave out filed items and those covered by a pending order (what still needs someone). */
  openOnly?: boolean;
  limit?: number;
}

/**
 * The deadlines of every tenant's companies (the console's deadlines view and `compliance deadlines`), by due
 * date, at most `limit` (default 500). @throws ValidationError for a bad range.
 */
export async function listTeamDeadlines(
  db: Db,
  q: TeamDeadlinesQuery,
  today = todayUtc(),
): Promise<{ from: string; to: string; items: TeamDeadline[]; truncated: boolean }> {
  const range = resolveRange(q, today);
  const companies = await repo.listAllCalendarCompanies(db, {
    environment: q.environment,
    organizationId: q.organizationId,
  });
  const byId = new Map(companies.map((c) => [c.id, c]));
  const items = (await deadlinesOf(db, companies, range, today))
    .filter(
      (i) =>
        (q.jurisdiction === undefined || i.jurisdiction === q.jurisdiction) &&
        (q.status === undefined || i.status === q.status),
    )
    .filter((i) => !q.openOnly || (i.status !== 'filed' && !i.coveredByPendingOrder))
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const limit = q.limit ?? 500;
  return {
    ...range,
    truncated: items.length > limit,
    items: items.slice(0, limit).map((i) => {
      const c = byId.get(i.companyId)!;
      return { ...i, legalName: c.legal_name, organizationId: c.organization_id, environment: c.environment };
    }),
  };
}

/* ------------------------------------------------------------------------------------- rule editing */

/** Operator view of a jurisdiction's rules. */
export function ruleView(r: repo.RuleRow) {
  return {
    state: r.state,
    ...r.rule,
    dataAsOf: r.data_as_of,
    updatedAt: r.updated_at.toISOString(),
    updatedBy: r.updated_by,
  };
}

/** GET /admin/v1/compliance-rules and `compliance rules list`. */
export async function listRuleViews(db: Db) {
  return (await repo.listRules(db)).map(ruleView);
}

/** An operator's change to one jurisdiction: top-level fields replace, `llc`/`corporation` fields merge shallowly. */
export interface RuleUpdate {
  name?: string;
  confidence?: StateRule['confidence'];
  llc?: Record<string, unknown>;
  corporation?: Record<string, unknown>;
  note?: string;
}

/**
 * PUT /admin/v1/compliance-rules/{state} and `compliance rules set` (CAL-22): applies the change, refuses a result
 * the calendar cannot compute, saves it and appends `{before, after, changedBy, note}` to the change log, in one
 * transaction. Calendars computed afterwards use the new rules.
 * @throws ValidationError naming the fields (nothing to change, unusable rule, name over 100 or note over 500
 * characters); AppError not_found for an unknown state.
 */
export async function updateRules(pool: pg.Pool, rawState: string, update: RuleUpdate, actor: string) {
  const state = rawState.toUpperCase();
  // LIM-2: the CLI has no request schema to bound these (the admin API's has the same bounds).
  new FieldErrors().maxLength('name', update.name, 100).maxLength('note', update.note, 500).throwIfAny();
  if (
    update.name === undefined &&
    update.confidence === undefined &&
    update.llc === undefined &&
    update.corporation === undefined
  ) {
    throw new ValidationError([{ field: 'llc', message: 'give at least one of: name, confidence, llc, corporation' }]);
  }
  return withTransaction(pool, async (tx) => {
    const current = await repo.findRule(tx, state, true);
    if (!current) throw new AppError('not_found', `No compliance rules for jurisdiction '${state}'`);
    const before = current.rule;
    const after = {
      ...before,
      ...(update.name !== undefined ? { name: update.name } : {}),
      ...(update.confidence !== undefined ? { confidence: update.confidence } : {}),
      llc: { ...before.llc, ...(update.llc ?? {}) },
      corporation: { ...before.corporation, ...(update.corporation ?? {}) },
    } as StateRule;
    const problems = ruleProblems(after);
    if (problems.length) throw new ValidationError(problems);
    return ruleView(await repo.updateRule(tx, state, before, after, actor, update.note ?? null));
  });
}

/** GET /admin/v1/compliance-rules/changes and `compliance rules history`: who changed what, newest first. */
export async function listRuleChangeViews(db: Db, state: string | null, limit = 50) {
  return (await repo.listRuleChanges(db, state ? state.toUpperCase() : null, limit)).map((c) => ({
    id: c.id,
    state: c.state,
    changedAt: c.changed_at.toISOString(),
    changedBy: c.changed_by,
    note: c.note,
    before: c.before,
    after: c.after,
  }));
}

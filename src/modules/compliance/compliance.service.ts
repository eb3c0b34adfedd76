import type { Tenant } from '../../context.js';
import type { Db } from '../../lib/db.js';
import { AppError } from '../../lib/errors.js';
import type { Page } from '../../lib/pagination.js';
import { findCompanyOrThrow } from '../companies/companies.service.js';
import { resolveRange, todayUtc, type RangeQuery } from './calendar-range.js';
import { companyDeadlines, deadlinesOf, loadCalendarData, type DeadlineItem } from './company-deadlines.js';
import * as repo from './compliance.repo.js';
import type { ObligationStatus } from './obligation.js';
import { withFields } from '../../lib/objects.js';

/*
 * The compliance calendar's reads (CAL-17 .. CAL-19): one company's calendar, the tenant's deadline list, and the
 * filing team's view across tenants.
 */

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

/**
 * The console's company page (CAL-36): the company of any tenant, its calendar items in the range (none without a
 * formation date: CAL-19) and its operator overrides by state (CAL-29).
 * @throws AppError not_found (404) for an unknown company; ValidationError naming `from` or `to` for a bad range.
 */
export async function teamCompanyCalendar(db: Db, companyId: string, q: RangeQuery, today = todayUtc()) {
  const company = await repo.findCalendarCompany(db, companyId);
  if (!company) throw new AppError('not_found', `No company '${companyId}'`);
  const range = resolveRange(q, today);
  const data = await loadCalendarData(db, [company.id]);
  const overrides = [...data.overrides.values()].sort((a, b) => a.state.localeCompare(b.state));
  return { company, ...range, items: companyDeadlines(company, data, range, today), overrides };
}

/** Query of GET /compliance-deadlines and of the console and CLI lists. */
export interface DeadlinesQuery extends RangeQuery {
  jurisdiction?: string;
  status?: ObligationStatus;
  limit?: number;
  startingAfter?: string;
}

/** The deadlines of many companies in one list: filters, then keyset on the id (due date order, CAL-17). */
function pageDeadlines(items: DeadlineItem[], q: DeadlinesQuery): Page<DeadlineItem> {
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
      return withFields(i, { legalName: c.legal_name, organizationId: c.organization_id, environment: c.environment });
    }),
  };
}

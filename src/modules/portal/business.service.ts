import type { AppContext, Tenant } from '../../context.js';
import { AppError, notFound } from '../../lib/errors.js';
import { isId } from '../../lib/ids.js';
import { withFields } from '../../lib/objects.js';
import { listLedgerPage } from '../billing/balance.service.js';
import type { LedgerEntryType } from '../billing/billing.repo.js';
import { listPriceRows } from '../billing/prices.service.js';
import { listStateFees } from '../billing/state-fees.service.js';
import { getCompanyView, listCompanies } from '../companies/companies.service.js';
import { getCompanyCalendar } from '../compliance/compliance.service.js';
import { presentDeadline } from '../compliance/compliance.views.js';
import { serializeDocument } from '../documents/documents.service.js';
import * as filings from '../filings/filings.repo.js';
import { FILING_STATUSES, type FilingStatus } from '../orders/order-statuses.js';
import { listTenantOrders } from '../orders/orders.repo.js';
import { ORDER_TYPES } from '../orders/orders.schemas.js';
import { domainVerificationView } from '../organizations/domain-verification.js';
import { loadTenantOrganization } from '../organizations/organizations.service.js';
import { findUserOrThrow, listUsers } from '../users/users.service.js';
import { cursor, dateRange, type FieldProblems, oneOf, param, type Query } from '../../lib/list-filters.js';

export type { Query };

/*
 * What the partner portal's business pages show (PORTAL-30 to PORTAL-38), always for the session's tenant (its
 * organization and environment), read through the services and repositories of the integrator API. Amounts stay
 * in cents here; the templates format them.
 */

/** Rows per page of every portal list (LIM-5's default page of 50). */
const PAGE_SIZE = 50;

/** Every order type a tenant's orders carry: the API's products, the DBA of formation tier 3 and certificates. */
const LISTED_ORDER_TYPES = [...ORDER_TYPES, 'dba', 'certificate_of_good_standing'].sort();
const LEDGER_TYPES: readonly LedgerEntryType[] = ['credit', 'debit', 'reversal'];

/**
 * The orders page (PORTAL-30): one keyset page of the tenant's orders, newest first, filtered by status, type, state,
 * creation days and user (an id or e-mail address of the tenant's users). Unknown filter values are named beside
 * their field and not applied; an unknown user shows no orders.
 */
export async function ordersPageView(ctx: AppContext, tenant: Tenant, query: Query) {
  const problems: FieldProblems = {};
  const states = (await listStateFees(ctx.pool)).map((s) => s.state);
  const filter = {
    status: oneOf(query, 'status', FILING_STATUSES, problems),
    type: oneOf(query, 'type', LISTED_ORDER_TYPES, problems),
    state: oneOf(query, 'state', states, problems),
    user: param(query, 'user'),
    ...dateRange(query, problems),
  };
  let userId: string | undefined;
  if (filter.user) {
    userId = await findUserOrThrow(ctx.pool, tenant, filter.user).then(
      (u) => u.id,
      (err: unknown) => {
        if (!(err instanceof AppError) || err.status !== 404) throw err;
        problems.user = 'no user with this id or e-mail address in this environment';
        return undefined;
      },
    );
  }
  const rows =
    filter.user && !userId
      ? []
      : await listTenantOrders(ctx.pool, tenant, {
          filingStatus: filter.status as FilingStatus | undefined,
          orderType: filter.type,
          filingState: filter.state,
          userId,
          from: filter.from,
          to: filter.to,
          // PORTAL-30: any cursor that is not one of the tenant's orders, malformed ones included, gives an empty page.
          afterId: param(query, 'after') || undefined,
          limit: PAGE_SIZE,
        });
  return {
    filter,
    problems,
    rows: rows.slice(0, PAGE_SIZE),
    next: rows.length > PAGE_SIZE ? rows[PAGE_SIZE - 1]!.id : null,
    paged: param(query, 'after') !== '',
    statuses: FILING_STATUSES,
    types: LISTED_ORDER_TYPES,
    states,
  };
}

/**
 * The order page (PORTAL-31): the order with its company and user, its status history, its documents with the
 * signed links the API gives (DOC-5), and its events with their webhook deliveries. @throws AppError not_found for an
 * order of another organization or environment, as for an unknown one (TEN-3).
 */
export async function orderPageView(ctx: AppContext, tenant: Tenant, orderId: string) {
  const order = isId('order', orderId) ? await filings.findOrderDetail(ctx.pool, orderId) : null;
  if (!order || order.organization_id !== tenant.organizationId || order.environment !== tenant.environment)
    throw notFound('order', orderId);
  const [history, events, documents, siblings] = await Promise.all([
    filings.listStatusHistory(ctx.pool, order.id),
    filings.findOrderEvents(ctx.pool, order),
    filings.findOrderDocuments(ctx.pool, order.id),
    filings.findSiblingOrders(ctx.pool, order.group_id, order.id),
  ]);
  const deliveries = await filings.findDeliveries(
    ctx.pool,
    events.map((e) => e.id),
  );
  return {
    order,
    company: { id: order.company_id, legalName: String(order.company.legal_name ?? '') },
    history,
    siblings,
    documents: documents.map((d) => serializeDocument(ctx, d)),
    events: events.map((e) => withFields(e, { deliveries: deliveries.filter((d) => d.event_id === e.id) })),
  };
}

/** The companies page (PORTAL-32): one keyset page of the tenant's companies, newest first, as the API lists them. */
export async function companiesPageView(ctx: AppContext, tenant: Tenant, query: Query) {
  const page = await listCompanies(ctx.pool, tenant, { limit: PAGE_SIZE, startingAfter: cursor(query, 'company') });
  return {
    companies: page.data,
    next: page.hasMore ? page.data.at(-1)!.id : null,
    paged: Boolean(cursor(query, 'company')),
  };
}

/**
 * A company page (PORTAL-32): the company as the API shows it and its compliance calendar (CAL-17) from today to the
 * calendar's default horizon; a company without a formation date or state has no calendar, and the page says why
 * (CAL-19). @throws AppError not_found for a company outside the tenant.
 */
export async function companyPageView(ctx: AppContext, tenant: Tenant, idOrSlug: string) {
  const company = await getCompanyView(ctx.pool, tenant, idOrSlug);
  let deadlines: Array<ReturnType<typeof presentDeadline>> = [];
  let noCalendar: string | null = null;
  try {
    const calendar = await getCompanyCalendar(ctx.pool, tenant, company.id, {});
    deadlines = calendar.items.map((i) => presentDeadline({ ...i, companyId: company.id }, null));
  } catch (err) {
    if (!(err instanceof AppError) || err.code !== 'conflict') throw err;
    noCalendar = err.message;
  }
  return { company, deadlines, noCalendar };
}

/** The users page (PORTAL-32): one keyset page of the tenant's users, newest first, as the API lists them. */
export async function usersPageView(ctx: AppContext, tenant: Tenant, query: Query) {
  const page = await listUsers(ctx.pool, tenant, { limit: PAGE_SIZE, startingAfter: cursor(query, 'user') });
  return { users: page.data, next: page.hasMore ? page.data.at(-1)!.id : null, paged: Boolean(cursor(query, 'user')) };
}

/** The ledger filter of the balance page and its CSV export (PORTAL-33, PORTAL-34), with the problems found. */
export function ledgerFilterOf(query: Query) {
  const problems: FieldProblems = {};
  const filter = { type: oneOf(query, 'type', LEDGER_TYPES, problems), ...dateRange(query, problems) };
  return { filter, problems };
}

/**
 * The balance page (PORTAL-33): the balance of the session's environment (cents) and one keyset page of its ledger,
 * newest first, filtered by entry type and creation days.
 */
export async function balancePageView(ctx: AppContext, tenant: Tenant, query: Query) {
  const { filter, problems } = ledgerFilterOf(query);
  const [{ balanceCents }, page] = await Promise.all([
    loadTenantOrganization(ctx.pool, tenant),
    listLedgerPage(ctx.pool, tenant, { ...filter, afterId: cursor(query, 'ledgerEntry'), limit: PAGE_SIZE }),
  ]);
  return {
    balanceCents,
    filter,
    problems,
    entries: page.rows,
    next: page.hasMore ? page.rows.at(-1)!.id : null,
    paged: Boolean(cursor(query, 'ledgerEntry')),
    types: LEDGER_TYPES,
  };
}

/**
 * The prices page (PORTAL-35): every product's wholesale price (the floor), retail price for dashboard checkout (the
 * one set, else the list price, never below the floor: PRICE-8) and the margin between them, in cents.
 */
export async function pricesPageView(ctx: AppContext, tenant: Tenant) {
  const prices = await listPriceRows(ctx.pool, tenant);
  return {
    prices: prices.map((p) => withFields(p, { marginCents: p.effectiveRetailCents - p.wholesaleCents })),
  };
}

/**
 * The branding page (PORTAL-36): the organization's dashboard branding and white-label domain, with the TXT record
 * that proves control of a requested domain and whether it was found (ORG-4).
 */
export async function brandingPageView(ctx: AppContext, tenant: Tenant) {
  const { organization } = await loadTenantOrganization(ctx.pool, tenant);
  return {
    organization,
    branding: {
      logoUrl: organization.branding.logoUrl ?? '',
      primaryColor: organization.branding.primaryColor ?? '',
      accentColor: organization.branding.accentColor ?? '',
    },
    domain: domainVerificationView(organization),
  };
}

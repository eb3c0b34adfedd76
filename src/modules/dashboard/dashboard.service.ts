import type { AppContext } from '../../context.js';
import type { Db } from '../../lib/db.js';
import { sha256 } from '../../lib/secrets.js';
import { dashboardDeadlines } from '../compliance/compliance.views.js';
import { findMagicLinkByHash, type MagicLinkRow } from '../magic-links/magic-links.repo.js';
import { findOrganization, type OrganizationRow } from '../organizations/organizations.repo.js';
import { loadPrices } from './checkout.service.js';
import * as repo from './dashboard.repo.js';
import type { DashboardSession } from './sessions.js';

/** Rows per page of the dashboard's lists (companies, orders, documents). */
const PAGE_SIZE = 25;
const CURSOR_SHAPE = /^[a-z]+_[A-Za-z0-9]{1,64}$/;

/** The keyset cursor of a list from the query string: an id of the previous page's last row, or null (first page). */
export function cursorOf(query: unknown, name: string): string | null {
  const value = (query as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' && CURSOR_SHAPE.test(value) ? value : null;
}

/** Splits `limit + 1` fetched rows into the page and the cursor of the next page (null on the last). */
function paged<R extends { id: string }>(rows: R[]): { rows: R[]; next: string | null } {
  return rows.length > PAGE_SIZE
    ? { rows: rows.slice(0, PAGE_SIZE), next: rows[PAGE_SIZE - 1]!.id }
    : { rows, next: null };
}

/** The companies page: one page of the user's companies after `after` and the tenant's prices (cents). */
export async function companiesPage(db: Db, session: DashboardSession, after: string | null) {
  const [rows, prices] = await Promise.all([
    repo.listCompaniesForUser(db, session.tenant, session.userId, { limit: PAGE_SIZE, after }),
    loadPrices(db, session.tenant),
  ]);
  return { companies: paged(rows), prices };
}

/** A company the user administers, or null (unknown, another tenant's, or not an admin of it). */
export function findCompanyForUser(db: Db, session: DashboardSession, companyId: string) {
  return repo.findCompanyForUser(db, session.tenant, session.userId, companyId);
}

/**
 * The company page's lists: one page each of its orders and documents (cursors from the query string), the orders
 * of a group just placed (`placed`), and its deadlines with checkout links under `checkoutBase`.
 */
export async function companyPage(
  db: Db,
  session: DashboardSession,
  companyId: string,
  query: unknown,
  checkoutBase: string,
) {
  const placedGroup = cursorOf(query, 'placed');
  const [orderRows, documentRows, placed, deadlines] = await Promise.all([
    repo.listOrdersForCompany(db, session.tenant, companyId, {
      limit: PAGE_SIZE,
      after: cursorOf(query, 'ordersAfter'),
    }),
    repo.listDocumentsForCompany(db, session.tenant, companyId, {
      limit: PAGE_SIZE,
      after: cursorOf(query, 'documentsAfter'),
    }),
    placedGroup
      ? repo.listOrdersOfGroup(db, session.tenant, companyId, String((query as Record<string, unknown>).placed))
      : Promise.resolve([]),
    dashboardDeadlines(db, session.tenant, companyId, checkoutBase),
  ]);
  return { orders: paged(orderRows), documents: paged(documentRows), placed, deadlines };
}

/** The order history page: one page of the user's orders after `after`. */
export async function ordersPage(db: Db, session: DashboardSession, after: string | null) {
  return paged(await repo.listOrdersForUser(db, session.tenant, session.userId, { limit: PAGE_SIZE, after }));
}

/** A document of a company the user administers (with its storage key), or null. */
export function findDocumentForUser(db: Db, session: DashboardSession, documentId: string) {
  return repo.findDocumentForUser(db, session.tenant, session.userId, documentId);
}

/**
 * What a magic link that signed no one in was: the link (null for a token never issued or malformed) and the
 * organization to brand the refusal with (the host's, else the link's).
 */
export async function refusedLink(
  ctx: AppContext,
  token: string,
  hostOrganization: OrganizationRow | null,
): Promise<{ link: MagicLinkRow | null; organization: OrganizationRow | null }> {
  const link = /^[A-Za-z0-9_-]{32,128}$/.test(token) ? await findMagicLinkByHash(ctx.pool, sha256(token)) : null;
  const organization = hostOrganization ?? (link ? await findOrganization(ctx.pool, link.organization_id) : null);
  return { link, organization };
}

import type { Environment, Tenant } from '../../context.js';
import { many, one, type Db } from '../../lib/db.js';
import type { CompanyRow } from '../companies/companies.repo.js';
import type { DocumentRow as StoredDocumentRow } from '../documents/documents.repo.js';
import { orderSummaryColumns, type OrderSummaryRow } from '../orders/orders.repo.js';

/** Queries behind the dashboard pages. Every one filters on the tenant AND on the signed-in user's admin rights. */

// The companies module owns the row; re-exported for the dashboard's presenters and checkout.
export type { CompanyRow };

/** A company with its counts of open orders (submitted, pending, exception) and of exceptions. */
export interface CompanySummaryRow extends CompanyRow {
  open_orders: number;
  exceptions: number;
}

/** An order as the dashboard lists it: the orders module's summary columns and the company's legal name. */
export interface ListedOrderRow extends OrderSummaryRow {
  company_name: string;
}

/** A document as the company page lists it (the documents module's row without the tenant, storage and uploader). */
export type DocumentRow = Pick<
  StoredDocumentRow,
  'id' | 'company_id' | 'order_id' | 'document_type' | 'file_name' | 'file_type' | 'size_bytes' | 'created_at'
>;

const ADMIN_OF = `EXISTS (SELECT 1 FROM company_admins a WHERE a.company_id = c.id AND a.user_id = $3)`;

/** The signed-in user's name and email, or null when the user is not in the tenant. */
export function findUser(
  db: Db,
  tenant: Tenant,
  userId: string,
): Promise<{ id: string; full_name: string; email: string } | null> {
  return one(db, 'SELECT id, full_name, email FROM users WHERE id = $1 AND organization_id = $2 AND environment = $3', [
    userId,
    tenant.organizationId,
    tenant.environment,
  ]);
}

/**
 * One page of a dashboard list: at most `limit` rows after the row whose id is `after` (keyset pagination: a page
 * costs the same however deep it is, and rows added meanwhile never shift the next page). Repositories fetch
 * `limit + 1` rows so the caller knows whether another page follows.
 */
export interface ListPage {
  limit: number;
  after?: string | null;
}

/** The user's companies (those they administer), by name, with counts of open orders and exceptions (one page, limit + 1 rows). */
export function listCompaniesForUser(
  db: Db,
  tenant: Tenant,
  userId: string,
  page: ListPage,
): Promise<CompanySummaryRow[]> {
  return many<CompanySummaryRow>(
    db,
    `SELECT c.*,
            (SELECT count(*) FROM orders o WHERE o.company_id = c.id AND o.filing_status IN ('submitted', 'pending', 'exception'))::int AS open_orders,
            (SELECT count(*) FROM orders o WHERE o.company_id = c.id AND o.filing_status = 'exception')::int AS exceptions
       FROM companies c
      WHERE c.organization_id = $1 AND c.environment = $2 AND ${ADMIN_OF}
        AND ($4::text IS NULL OR (lower(c.legal_name), c.id) > (SELECT lower(legal_name), id FROM companies WHERE id = $4))
      ORDER BY lower(c.legal_name), c.id LIMIT $5`,
    [tenant.organizationId, tenant.environment, userId, page.after ?? null, page.limit + 1],
  );
}

/** One company of the tenant the user administers, or null (not theirs answers like not found). */
export function findCompanyForUser(
  db: Db,
  tenant: Tenant,
  userId: string,
  companyId: string,
): Promise<CompanyRow | null> {
  return one<CompanyRow>(
    db,
    `SELECT c.* FROM companies c WHERE c.id = $4 AND c.organization_id = $1 AND c.environment = $2 AND ${ADMIN_OF}`,
    [tenant.organizationId, tenant.environment, userId, companyId],
  );
}

const ORDER_SELECT = `SELECT ${orderSummaryColumns('o')}, c.legal_name AS company_name
  FROM orders o JOIN companies c ON c.id = o.company_id`;

const ORDERS_AFTER = '(o.created_at, o.id) < (SELECT created_at, id FROM orders WHERE id = $AFTER)';

/**
 * One order of a company the user administers, with an EIN order's current responsible party (as stored: names,
 * type, title and `taxIdLast4`, never a tax id), or null (not theirs answers like not found).
 */
export function findOrderForUser(
  db: Db,
  tenant: Tenant,
  userId: string,
  orderId: string,
): Promise<(ListedOrderRow & { responsible_party: Record<string, unknown> | null }) | null> {
  return one(
    db,
    `SELECT ${orderSummaryColumns('o')}, c.legal_name AS company_name, o.details -> 'responsibleParty' AS responsible_party
       FROM orders o JOIN companies c ON c.id = o.company_id
      WHERE o.id = $4 AND o.organization_id = $1 AND o.environment = $2 AND ${ADMIN_OF}`,
    [tenant.organizationId, tenant.environment, userId, orderId],
  );
}

/** A company's orders, newest first (one page, limit + 1 rows). */
export function listOrdersForCompany(
  db: Db,
  tenant: Tenant,
  companyId: string,
  page: ListPage,
): Promise<ListedOrderRow[]> {
  return many<ListedOrderRow>(
    db,
    `${ORDER_SELECT} WHERE o.company_id = $1 AND o.organization_id = $2 AND o.environment = $3 AND ($4::text IS NULL OR ${ORDERS_AFTER.replace('$AFTER', '$4')})
      ORDER BY o.created_at DESC, o.id DESC LIMIT $5`,
    [companyId, tenant.organizationId, tenant.environment, page.after ?? null, page.limit + 1],
  );
}

/** Orders of every company the user administers, newest first (one page, limit + 1 rows). */
export function listOrdersForUser(db: Db, tenant: Tenant, userId: string, page: ListPage): Promise<ListedOrderRow[]> {
  return many<ListedOrderRow>(
    db,
    `${ORDER_SELECT} WHERE o.organization_id = $1 AND o.environment = $2 AND ${ADMIN_OF} AND ($4::text IS NULL OR ${ORDERS_AFTER.replace('$AFTER', '$4')})
      ORDER BY o.created_at DESC, o.id DESC LIMIT $5`,
    [tenant.organizationId, tenant.environment, userId, page.after ?? null, page.limit + 1],
  );
}

/** The orders of one checkout (order group) of a company. */
export function listOrdersOfGroup(
  db: Db,
  tenant: Tenant,
  companyId: string,
  groupId: string,
): Promise<ListedOrderRow[]> {
  return many<ListedOrderRow>(
    db,
    `${ORDER_SELECT} WHERE o.group_id = $1 AND o.company_id = $2 AND o.organization_id = $3 AND o.environment = $4 ORDER BY o.id`,
    [groupId, companyId, tenant.organizationId, tenant.environment],
  );
}

/** A company's documents, newest first (one page, limit + 1 rows). */
export function listDocumentsForCompany(
  db: Db,
  tenant: Tenant,
  companyId: string,
  page: ListPage,
): Promise<DocumentRow[]> {
  return many<DocumentRow>(
    db,
    `SELECT id, company_id, order_id, document_type, file_name, file_type, size_bytes, created_at FROM documents d
      WHERE company_id = $1 AND organization_id = $2 AND environment = $3
        AND ($4::text IS NULL OR (d.created_at, d.id) < (SELECT created_at, id FROM documents WHERE id = $4))
      ORDER BY created_at DESC, id DESC LIMIT $5`,
    [companyId, tenant.organizationId, tenant.environment, page.after ?? null, page.limit + 1],
  );
}

/** A document of a company the user administers, or null. */
export function findDocumentForUser(
  db: Db,
  tenant: Tenant,
  userId: string,
  documentId: string,
): Promise<(DocumentRow & Pick<StoredDocumentRow, 'storage_key'>) | null> {
  return one(
    db,
    `SELECT d.id, d.company_id, d.order_id, d.document_type, d.file_name, d.file_type, d.size_bytes, d.created_at, d.storage_key
       FROM documents d JOIN companies c ON c.id = d.company_id
      WHERE d.id = $4 AND d.organization_id = $1 AND d.environment = $2 AND ${ADMIN_OF}`,
    [tenant.organizationId, tenant.environment, userId, documentId],
  );
}

/** A new dashboard session: the sha256 of its id, its tenant and user, the magic link spent, and its lifetime in seconds. */
export interface NewSessionRow {
  idHash: string;
  organizationId: string;
  environment: Environment;
  userId: string;
  magicLinkId: string;
  csrfToken: string;
  maxSeconds: number;
}

/** Stores a dashboard session expiring `s.maxSeconds` from now. */
export async function insertSession(tx: Db, s: NewSessionRow): Promise<void> {
  await tx.query(
    `INSERT INTO dashboard_sessions (id_hash, organization_id, environment, user_id, magic_link_id, csrf_token, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(secs => $7))`,
    [s.idHash, s.organizationId, s.environment, s.userId, s.magicLinkId, s.csrfToken, s.maxSeconds],
  );
}

/**
 * The live session of `idHash` (not revoked, not expired, not idle for `idleSeconds`); its idle timer is moved to now
 * when it was last moved more than `touchSeconds` ago, in the same statement, so most page views write nothing.
 */
export function touchLiveSession(
  db: Db,
  idHash: string,
  idleSeconds: number,
  touchSeconds: number,
): Promise<{
  id_hash: string;
  organization_id: string;
  environment: Environment;
  user_id: string;
  csrf_token: string;
} | null> {
  return one<{
    id_hash: string;
    organization_id: string;
    environment: Environment;
    user_id: string;
    csrf_token: string;
  }>(
    db,
    `WITH live AS (
       SELECT id_hash, organization_id, environment, user_id, csrf_token, last_seen_at FROM dashboard_sessions
        WHERE id_hash = $1 AND revoked_at IS NULL AND expires_at > now() AND last_seen_at > now() - make_interval(secs => $2)
     ), touched AS (
       UPDATE dashboard_sessions d SET last_seen_at = now() FROM live
        WHERE d.id_hash = live.id_hash AND live.last_seen_at < now() - make_interval(secs => $3)
     )
     SELECT id_hash, organization_id, environment, user_id, csrf_token FROM live`,
    [idHash, idleSeconds, touchSeconds],
  );
}

/** Revokes a dashboard session (kept revoked when it already was). */
export async function revokeSessionRow(db: Db, idHash: string): Promise<void> {
  await db.query('UPDATE dashboard_sessions SET revoked_at = now() WHERE id_hash = $1 AND revoked_at IS NULL', [
    idHash,
  ]);
}

/**
 * Revokes every live session of the organization started from a magic link issued for `host` (ORG-6: a white-label
 * domain taken out of use, whose next owner would receive the browsers' cookies). @returns how many.
 */
export async function revokeSessionsOfHost(db: Db, organizationId: string, host: string): Promise<number> {
  const res = await db.query(
    `UPDATE dashboard_sessions s SET revoked_at = now() FROM magic_links l
      WHERE s.organization_id = $1 AND s.revoked_at IS NULL AND l.id = s.magic_link_id AND l.host = $2`,
    [organizationId, host],
  );
  return res.rowCount ?? 0;
}

/**
 * Creates the row of a checkout form token on its first submit (table checkout_forms, its sha256 only) and locks it,
 * or locks the row an earlier submit created, until the transaction ends (DASH-9). A concurrent first submit of the
 * same token waits for this one's transaction. Returns the row's failed attempts so far, or null when the row belongs
 * to another session.
 */
export function claimCheckoutFormRow(
  tx: Db,
  tokenHash: string,
  sessionIdHash: string,
  tenant: Tenant,
): Promise<{ attempts: number } | null> {
  return one<{ attempts: number }>(
    tx,
    `INSERT INTO checkout_forms AS f (token_hash, session_id_hash, organization_id, environment) VALUES ($1, $2, $3, $4)
     ON CONFLICT (token_hash) DO UPDATE SET attempts = f.attempts WHERE f.session_id_hash = EXCLUDED.session_id_hash
     RETURNING attempts`,
    [tokenHash, sessionIdHash, tenant.organizationId, tenant.environment],
  );
}

/** Counts one more failed payment attempt of the form token. */
export async function incrementFormAttempts(db: Db, tokenHash: string): Promise<void> {
  await db.query('UPDATE checkout_forms SET attempts = attempts + 1 WHERE token_hash = $1', [tokenHash]);
}

import type pg from 'pg';
import type { Tenant } from '../../context.js';
import { withTransaction, type Db } from '../../lib/db.js';
import { notFound, referencedNotFound } from '../../lib/errors.js';
import { isId, newId } from '../../lib/ids.js';
import { toPage, type Page } from '../../lib/pagination.js';
import { validated, type FieldRule } from '../../lib/validation.js';
import { findUserById } from '../users/users.service.js';
import * as repo from './companies.repo.js';
import {
  UpdateCompanyBody,
  type Company,
  type CreateCompanyInput,
  type ListCompaniesQuery,
  type UpdateCompanyInput,
} from './companies.schemas.js';
import { companyRuleErrors, DEFAULT_FISCAL_END_MONTH, type CompanyInput } from './company-rules.js';
import { slugBase, nextFreeSlug } from './slug.js';
import { withFields } from '../../lib/objects.js';

/**
 * Inserts a company, its slug and the admin link in the caller's transaction (or on the pool; prefer a
 * transaction so the company and its admin row land together). The input is assumed already valid
 * (schema + companyRuleErrors); fiscalEndMonth defaults to December (CO-3).
 * Slug: the legal name in kebab case (`acme-holdings-llc`), then `-2`, `-3`… when taken in the tenant;
 * concurrent inserts of the same name are resolved by the unique constraint and a retry.
 * @param adminUserId id of a user of the tenant (not checked here); becomes a company admin.
 * @returns the inserted row.
 */
async function insertCompany(
  tx: Db,
  tenant: Tenant,
  input: CompanyInput,
  adminUserId: string,
): Promise<repo.CompanyRow> {
  const columns = toColumns(input);
  const base = slugBase(input.legalName);
  const id = newId('company');
  for (let attempt = 0; attempt < 20; attempt++) {
    const slug = nextFreeSlug(base, await repo.slugsLike(tx, tenant, base));
    const row = await repo.insertCompanyWithSlug(tx, tenant, id, slug, columns);
    if (row) {
      await repo.insertCompanyAdmin(tx, tenant, row.id, adminUserId);
      return row;
    }
  }
  throw new Error(`could not find a free slug for '${base}'`);
}

/** A company to insert as part of another write (an order placing a formation): row values, id and first slug try. */
export interface PlannedCompany {
  id: string;
  /** The slug to try first: the legal name in kebab case; see {@link freeCompanySlug} when it is taken. */
  slug: string;
  columns: repo.CompanyColumns;
}

/**
 * Plans a company insert without touching the database (the input is assumed valid, as for insertCompany);
 * the caller inserts it in its own statement, on conflict with the slug asks {@link freeCompanySlug} and tries again.
 */
export function planCompany(input: CompanyInput): PlannedCompany {
  return { id: newId('company'), slug: slugBase(input.legalName), columns: toColumns(input) };
}

/** The next free slug of the tenant for `legalName`'s base (`acme-llc-2`, …), read in `db`. */
export async function freeCompanySlug(db: Db, tenant: Tenant, legalName: string): Promise<string> {
  const base = slugBase(legalName);
  return nextFreeSlug(base, await repo.slugsLike(db, tenant, base));
}

/**
 * POST /companies (CO-1): `body` has passed CreateCompanyBody and companyRuleErrors (the route runs both through
 * `validated`); checks that userId is a user of the tenant (CO-9), then inserts the company and makes the user its
 * admin in one transaction.
 * @throws AppError not_found (404, field `userId` in `errors`) when userId is not a user of this tenant: other
 * tenants' ids answer 404 (TEN-3).
 */
export async function createCompany(pool: pg.Pool, tenant: Tenant, body: CreateCompanyInput): Promise<repo.CompanyRow> {
  if (!(await findUserById(pool, tenant, body.userId))) {
    throw referencedNotFound([{ field: 'userId', message: `no user '${body.userId}' exists in this environment` }]);
  }
  const { userId, ...input } = body;
  return withTransaction(pool, (tx) => insertCompany(tx, tenant, input, userId));
}

/**
 * The rules a PATCH body must pass against the company it changes (CO-10): entityType cannot change, and the MERGED
 * company is checked with the same rules as a new one (CO-2 to CO-6), so e.g. a CORP cannot get a structureType. Each
 * takes the body as sent (unknown). Routes pass them to `validated` with UpdateCompanyBody; updateCompany runs them
 * again.
 */
export function companyPatchRules(current: repo.CompanyRow): FieldRule[] {
  return [
    (patch) => {
      const entityType = isObject(patch) ? patch.entityType : undefined;
      return entityType !== undefined && entityType !== current.entity_type
        ? [{ field: 'entityType', message: `cannot be changed after creation (the company is ${current.entity_type})` }]
        : [];
    },
    (patch) => companyRuleErrors(mergePatch(current, patch)),
  ];
}

/**
 * PATCH /companies/{companyIdOrSlug}: every field except entityType (immutable) and the slug can change;
 * officers, when sent, replace the whole list; null clears tradeName, ein, formationDate, formationState.
 * `patch` has passed UpdateCompanyBody and companyPatchRules; the rules run again on the row locked here (it may
 * have changed since), in one transaction, so concurrent PATCHes do not lose updates.
 * @throws AppError not_found (404); ValidationError (400) naming every bad field.
 */
export async function updateCompany(
  pool: pg.Pool,
  tenant: Tenant,
  idOrSlug: string,
  patch: UpdateCompanyInput,
): Promise<repo.CompanyRow> {
  return withTransaction(pool, async (tx) => {
    const current = await findCompanyOrThrow(tx, tenant, idOrSlug, true);
    const checked = validated(UpdateCompanyBody, patch, companyPatchRules(current));
    return (await repo.updateCompany(tx, tenant, current.id, toColumns(mergePatch(current, checked))))!;
  });
}

/**
 * A company of the tenant by id (`comp_…`) or slug (case-insensitive). Companies of other organizations
 * or of the other environment are not found. `forUpdate` locks the row (inside a transaction).
 * @throws AppError not_found (404).
 */
export async function findCompanyOrThrow(
  db: Db,
  tenant: Tenant,
  idOrSlug: string,
  forUpdate = false,
): Promise<repo.CompanyRow> {
  const row = isId('company', idOrSlug)
    ? await repo.findCompanyById(db, tenant, idOrSlug, forUpdate)
    : await repo.findCompanyBySlug(db, tenant, idOrSlug.toLowerCase(), forUpdate);
  if (!row) throw notFound('company', idOrSlug);
  return row;
}

/** GET /companies/{companyIdOrSlug}: the company as the API shows it (CO-7). @throws AppError not_found (404). */
export async function getCompanyView(db: Db, tenant: Tenant, idOrSlug: string): Promise<Company> {
  const row = await repo.findCompanyView(
    db,
    tenant,
    isId('company', idOrSlug) ? { id: idOrSlug } : { slug: idOrSlug.toLowerCase() },
  );
  if (!row) throw notFound('company', idOrSlug);
  return serializeCompany(row);
}

/** True when `userId` is an admin of the company in this tenant (AUTH-5). */
export function isCompanyAdmin(db: Db, tenant: Tenant, companyId: string, userId: string): Promise<boolean> {
  return repo.companyAdminExists(db, tenant, companyId, userId);
}

/**
 * Filing pipeline hook: a filed formation sets formationDate ('YYYY-MM-DD'), a filed EIN order sets ein
 * ('XX-XXXXXXX'). Absent fields are left as they are. Call inside the transaction that records the filing.
 * @throws AppError not_found (404) when the company is not in the tenant.
 */
export async function setCompanyFiled(
  tx: Db,
  tenant: Tenant,
  companyId: string,
  fields: { formationDate?: string; ein?: string; formationState?: string },
): Promise<repo.CompanyRow> {
  const row = await repo.setFiled(tx, tenant, companyId, fields);
  if (!row) throw notFound('company', companyId);
  return row;
}

/** One page of the tenant's companies, newest first; `userId` keeps those the user administers. */
export async function listCompanies(db: Db, tenant: Tenant, q: ListCompaniesQuery): Promise<Page<Company>> {
  const limit = q.limit ?? 20;
  return toPage(
    await repo.listCompanies(db, tenant, { limit, startingAfter: q.startingAfter, userId: q.userId }),
    limit,
    serializeCompany,
  );
}

/** The API view of a company: the Company response fields plus slug; officers are never returned (CO-7). */
export function serializeCompany(row: repo.CompanyViewRow): Company {
  return {
    id: row.id,
    slug: row.slug,
    ...storedFields(row),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/** The stored company's fields under their API names (nulls kept), without officers: the response never shows them. */
function storedFields(row: repo.CompanyViewRow) {
  return {
    legalName: row.legal_name,
    tradeName: row.trade_name,
    ein: row.ein,
    entityType: row.entity_type,
    structureType: row.structure_type,
    taxElection: row.tax_election,
    fiscalEndMonth: row.fiscal_end_month,
    formationDate: row.formation_date,
    formationState: row.formation_state,
    principalAddress: row.principal_address,
    mailingAddress: row.mailing_address,
  };
}

/**
 * The stored company as request fields (nulls dropped), with the patch applied (null clears). The patch may not
 * have passed its schema yet (companyPatchRules merges it to check the result), so a non-object applies nothing.
 */
function mergePatch(row: repo.CompanyRow, patch: unknown): CompanyInput {
  const current: Record<string, unknown> = withFields(storedFields(row), { officers: row.officers });
  const merged: Record<string, unknown> = {
    ...current,
    ...(isObject(patch) ? patch : {}),
    entityType: row.entity_type,
  };
  return Object.fromEntries(Object.entries(merged).filter(([, v]) => v !== null && v !== undefined)) as CompanyInput;
}

function toColumns(c: CompanyInput): repo.CompanyColumns {
  return {
    legal_name: c.legalName,
    trade_name: c.tradeName ?? null,
    ein: c.ein ?? null,
    entity_type: c.entityType,
    structure_type: c.structureType ?? null,
    tax_election: c.taxElection ?? null,
    fiscal_end_month: c.fiscalEndMonth ?? DEFAULT_FISCAL_END_MONTH,
    formation_date: c.formationDate ?? null,
    formation_state: c.formationState ?? null,
    principal_address: c.principalAddress,
    mailing_address: c.mailingAddress,
    officers: c.officers,
  };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

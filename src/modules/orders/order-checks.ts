import type { Tenant } from '../../context.js';
import type { Db } from '../../lib/db.js';
import { AppError, referencedNotFound, ValidationError } from '../../lib/errors.js';
import { isCompanyAdmin } from '../companies/companies.service.js';
import { findUserById } from '../users/users.service.js';
import type { CheckedOrderBody } from './order-rules.js';
import * as repo from './orders.repo.js';

/*
 * The POST /orders rules that read the database (ORD-5, AUTH-5, ORD-11):
 * the user and company exist in the tenant, the user is an admin of an existing company, the
 * foreign qualification rules (ORD-FQ-1 to ORD-FQ-5), the EIN rule (ORD-EIN-4) and the registered-agent no-op
 * (ORD-RA-4). placeOrder runs them inside its transaction after locking the company row, so two concurrent requests
 * for one company cannot both pass (e.g. two EIN orders).
 */

/** What the checks found out, used to price and place the request. */
export interface OrderFacts {
  /** null for a formation (the company does not exist yet). */
  companyId: string | null;
  entityType: 'LLC' | 'CORP';
  /** The company's formation state; filingState for a formation. */
  formationState: string | null;
  /** Active registered agent service of the company in filingState (ORD-RA-4; ORD-FQ-1). */
  activeAgent: repo.OrderRow | null;
}

/**
 * Runs the database rules in the order a client fixes them: unknown user or company (404 naming the field in
 * `errors`: other tenants' ids answer 404 like unknown ones, so ids never leak; TEN-3), user not
 * an admin of the company (403), company unfit for foreign qualification (400), then conflicts (409).
 * @param lock lock the company row (inside placeOrder's transaction).
 * @throws ValidationError (400); AppError not_found (404), forbidden (403), ein_already_requested (409),
 * qualification_already_paid (409).
 */
export async function checkOrderFacts(
  db: Db,
  tenant: Tenant,
  body: CheckedOrderBody,
  lock = false,
): Promise<OrderFacts> {
  const user = await findUserById(db, tenant, body.userId);
  if (body.formation) {
    if (!user) throw unknownUser(body.userId);
    return {
      companyId: null,
      entityType: body.formation.company.entityType,
      formationState: body.filingState,
      activeAgent: null,
    };
  }
  const companyId = body.companyId!;
  const company = await repo.findOrderCompany(db, tenant, companyId, lock);
  if (!user || !company) {
    const errors = [];
    if (!user) errors.push({ field: 'userId', message: `no user '${body.userId}' exists in this environment` });
    if (!company) errors.push({ field: 'companyId', message: `no company '${companyId}' exists in this environment` });
    throw referencedNotFound(errors);
  }
  if (!(await isCompanyAdmin(db, tenant, company.id, user.id))) {
    throw new AppError(
      'forbidden',
      `User '${user.id}' is not an admin of company '${company.id}': orders against an existing company must be placed for one of its admins`,
    );
  }
  const needsAgent = Boolean(body.registeredAgent || body.foreignQualification);
  const facts: OrderFacts = {
    companyId: company.id,
    entityType: company.entity_type,
    formationState: company.formation_state,
    activeAgent: needsAgent ? await repo.findActiveRegisteredAgent(db, tenant, company.id, body.filingState) : null,
  };
  if (body.foreignQualification) await checkForeignQualification(db, tenant, body, facts);
  if ((body.annualReport?.years ?? 1) > 1) await checkPrepaidYears(db, body, facts);
  if (body.ein) await checkEin(db, tenant, company);
  return facts;
}

function unknownUser(userId: string): AppError {
  return referencedNotFound([{ field: 'userId', message: `no user '${userId}' exists in this environment` }]);
}

/**
 * CAL-35: an annual report order covering more than one year needs a filing state whose rule for the company's entity
 * type allows that many (`prepayYears`, Georgia LLCs 3). Read only for such orders, so other orders pay no query.
 */
async function checkPrepaidYears(db: Db, body: CheckedOrderBody, facts: OrderFacts): Promise<void> {
  const years = body.annualReport!.years!;
  const limit = await repo.findPrepayYears(db, body.filingState, facts.entityType);
  if (years > limit) {
    throw new ValidationError([
      {
        field: 'annualReport.years',
        message:
          limit > 1
            ? `must be at most ${limit}: ${body.filingState} lets a ${facts.entityType} pay at most ${limit} years at once`
            : `must be 1: ${body.filingState} does not let a ${facts.entityType} pay several years at once`,
      },
    ]);
  }
}

/** ORD-FQ-1, ORD-FQ-3, ORD-FQ-4 and ORD-FQ-5 (ORD-FQ-2, companyId, is a request rule). */
async function checkForeignQualification(
  db: Db,
  tenant: Tenant,
  body: CheckedOrderBody,
  facts: OrderFacts,
): Promise<void> {
  const state = body.filingState;
  if (!facts.formationState || !facts.entityType) {
    const missing = !facts.formationState ? 'formationState' : 'entityType';
    throw new ValidationError([
      {
        field: 'companyId',
        message: `company '${facts.companyId}' has no ${missing}: set it on the company before ordering foreign qualification (foreignQualification rule 3)`,
      },
    ]);
  }
  if (facts.formationState === state) {
    throw new ValidationError([
      {
        field: 'filingState',
        message: `is the company's formation state (${state}): a company qualifies only in states other than its home state (foreign qualification)`,
      },
    ]);
  }
  const fq = body.foreignQualification;
  const supplied = typeof fq === 'object' && fq !== null && Boolean(fq.registeredAgent);
  // ORD-RA-7: an agent on file is active registered agent service in the state, or an agent the company supplied
  // for the state on an earlier order.
  const onFile =
    facts.activeAgent !== null || (await repo.findSuppliedAgentOnFile(db, tenant, facts.companyId!, state)) !== null;
  if (!body.registeredAgent && !supplied && !onFile) {
    throw new ValidationError([
      {
        field: 'foreignQualification.registeredAgent',
        message: `is required: foreign qualification needs a registered agent in ${state}; order registeredAgent in the same request, supply foreignQualification.registeredAgent, or have an agent on file in ${state} (active registered agent service, or an agent supplied for ${state} on an earlier order) (foreignQualification rule 1)`,
      },
    ]);
  }
  const paid = await repo.findPaidQualification(db, tenant, facts.companyId!, state);
  if (paid) {
    throw new AppError(
      'qualification_already_paid',
      `Company '${facts.companyId}' already has a paid foreign qualification in ${state} (order '${paid.id}'); only a cancelled or unpaid qualification may be ordered again (foreignQualification rule 4)`,
      { orderId: paid.id },
    );
  }
}

/** EIN rule: 409 when the company has an EIN or a non-cancelled EIN order. */
async function checkEin(db: Db, tenant: Tenant, company: repo.OrderCompanyRow): Promise<void> {
  if (company.ein) {
    throw new AppError(
      'ein_already_requested',
      `Company '${company.id}' already has an EIN (EIN rule: an EIN is ordered once)`,
    );
  }
  const pending = await repo.findEinOrder(db, tenant, company.id);
  if (pending) {
    throw new AppError(
      'ein_already_requested',
      `Company '${company.id}' has already requested an EIN (order '${pending.id}'); cancel that order to request again (EIN rule)`,
      { orderId: pending.id },
    );
  }
}

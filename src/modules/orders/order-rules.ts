import { AppError, ValidationError, type FieldError } from '../../lib/errors.js';
import { validated } from '../../lib/validation.js';
import { EXPEDITED_UNAVAILABLE_MESSAGE } from '../billing/pricing.js';
import { companyRuleErrors } from '../companies/company-rules.js';
import { EXPEDITED_STATES, FORMATION_EXCLUDED_FIELDS, OrderBody, type OrderBodyInput } from './orders.schemas.js';
import { suppliedAgentErrors } from './supplied-agent.js';

/*
 * The request rules of POST /orders that need no database: the cross-product rules (ORD-1 to ORD-4), the
 * formation rules (ORD-FORM-1 to ORD-FORM-6), the registered agent rules ORD-RA-2 and ORD-RA-3 (ORD-RA-1, a
 * formation's agent is a new appointment, is applied when pricing: order-pricing.ts), the supplied agent
 * (ORD-RA-3), ORD-FQ-2, the annual report year (ORD-AR-1) and the SS-4 rules of the ein object (ORD-EIN-1,
 * ORD-EIN-2). The error messages name the rule in the words integrators know ("formation rule 2"). Every function is
 * pure and tolerates input that already failed the schema, so its errors merge with the schema's into one 400 naming
 * every bad field and its rule.
 */

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const isSet = (v: unknown) => v !== undefined && v !== null;

const FORMATION_EXCLUDED_WHY: Record<(typeof FORMATION_EXCLUDED_FIELDS)[number], string> = {
  ein: 'the EIN comes from an EIN order',
  tradeName: 'a trade name is not part of a formation',
  formationDate: 'the state sets the formation date on filing',
  formationState: 'formationState comes from filingState',
};

declare const checked: unique symbol;

/**
 * A POST /orders body that passed its schema and every request rule, as only {@link checkedOrderBody} makes one.
 * Checking the facts, quoting and placing take this type, so a request's rules run once, where it comes in (the
 * route, the dashboard checkout), and nothing reaches the database unchecked.
 */
export type CheckedOrderBody = OrderBodyInput & { readonly [checked]: true };

/**
 * Checks a request body against OrderBody and every request rule ({@link orderRuleErrors}) in one pass, so one 400
 * names every bad field. @param prior errors found before (the request's headers, say), put first in the same 400.
 * @param raise throws the errors: {@link throwIfRuleErrors} (the API's 400, the default), or the caller's own.
 * @returns the body, typed as checked. @throws ValidationError / AppError validation_error (400) as `raise` does.
 */
export function checkedOrderBody(
  value: unknown,
  prior: FieldError[] = [],
  raise: (errors: FieldError[]) => void = throwIfRuleErrors,
): CheckedOrderBody {
  return validated(OrderBody, value, [orderRuleErrors], { prior, raise }) as CheckedOrderBody;
}

/**
 * Every request rule that needs no database, in one list of `{field, message}` (dotted paths).
 * @param body the parsed request body (possibly schema-invalid). @param now for "at most next year" checks.
 */
function orderRuleErrors(body: unknown, now = new Date()): FieldError[] {
  if (!isObj(body)) return [];
  return [
    ...crossProductErrors(body),
    ...formationErrors(body),
    ...registeredAgentErrors(body),
    ...suppliedAgentsErrors(body),
    ...annualReportErrors(body, now),
    ...einErrors(body.ein),
  ];
}

/**
 * Throws the 400 for rule errors. When ORD-FORM-5 (expedited formation) is among them the message is exactly the
 * contract's wording ('Expedited formation is not available for the selected state and entity type').
 * @throws ValidationError / AppError validation_error (400) when `errors` is not empty.
 */
function throwIfRuleErrors(errors: FieldError[]): void {
  if (!errors.length) return;
  if (errors.some((e) => e.message === EXPEDITED_UNAVAILABLE_MESSAGE)) {
    throw new AppError('validation_error', EXPEDITED_UNAVAILABLE_MESSAGE, { errors });
  }
  throw new ValidationError(errors);
}

function crossProductErrors(b: Obj): FieldError[] {
  const errors: FieldError[] = [];
  const products = ['formation', 'ein', 'annualReport', 'foreignQualification', 'registeredAgent'].filter((k) =>
    isSet(b[k]),
  );
  if (!products.length) {
    errors.push({
      field: '',
      message:
        'At least one product is required: formation, ein, annualReport, foreignQualification or registeredAgent (cross-product rule 1)',
    });
  }
  if (isSet(b.formation) && isSet(b.foreignQualification)) {
    errors.push({
      field: 'foreignQualification',
      message:
        'cannot be ordered in the same request as formation (cross-product rule 2); qualify the company in another request once it exists',
    });
  }
  if (isSet(b.formation) && isSet(b.companyId)) {
    errors.push({
      field: 'companyId',
      message: 'must not be sent with formation: the formation creates the company',
    });
  }
  if (!isSet(b.formation) && !isSet(b.companyId) && products.length) {
    const message = isSet(b.foreignQualification)
      ? 'is required: foreign qualification is for an existing company (foreignQualification rule 2)'
      : 'is required unless formation is included';
    errors.push({ field: 'companyId', message });
  }
  return errors;
}

function formationErrors(b: Obj): FieldError[] {
  const f = b.formation;
  if (!isObj(f)) return [];
  const errors: FieldError[] = [];
  const company = f.company;
  if (isObj(company)) {
    for (const key of FORMATION_EXCLUDED_FIELDS) {
      if (key in company) {
        errors.push({
          field: `formation.company.${key}`,
          message: `is not accepted in a formation company (formation rule 1): ${FORMATION_EXCLUDED_WHY[key]}`,
        });
      }
    }
    errors.push(...companyRuleErrors(company, 'formation.company.'));
  }
  const raOrdered = isSet(b.registeredAgent);
  if (!raOrdered && !isSet(f.registeredAgent)) {
    errors.push({
      field: 'formation.registeredAgent',
      message:
        'is required unless registeredAgent service is ordered in the same request: every formation needs a registered agent (formation rule 2)',
    });
  }
  if (raOrdered && isSet(f.registeredAgent)) {
    errors.push({
      field: 'formation.registeredAgent',
      message:
        'must not be supplied when registeredAgent service is ordered in the same request: the formation uses one or the other (formation rule 2)',
    });
  }
  if (f.expedited === true && !expeditedAvailable(b.filingState, isObj(company) ? company.entityType : undefined)) {
    errors.push({ field: 'formation.expedited', message: EXPEDITED_UNAVAILABLE_MESSAGE });
  }
  if (Array.isArray(f.alternativeNames)) {
    f.alternativeNames.forEach((name, i) => {
      if (typeof name === 'string' && !name.trim())
        errors.push({
          field: `formation.alternativeNames.${i}`,
          message: 'must not be blank (formation alternativeNames: up to 10 fallback names)',
        });
    });
  }
  return errors;
}

/** ORD-FORM-5: expedite exists only for LLCs in AZ, DE, FL, NV, NY, WY. */
function expeditedAvailable(filingState: unknown, entityType: unknown): boolean {
  return entityType === 'LLC' && (EXPEDITED_STATES as readonly unknown[]).includes(filingState);
}

function registeredAgentErrors(b: Obj): FieldError[] {
  const ra = b.registeredAgent;
  if (!isObj(ra)) return [];
  const errors: FieldError[] = [];
  for (const [product, label] of [
    ['annualReport', 'annualReport'],
    ['foreignQualification', 'foreignQualification'],
  ] as const) {
    const p = b[product];
    if (isObj(p) && isSet(p.registeredAgent)) {
      errors.push({
        field: `${label}.registeredAgent`,
        message:
          "must not be supplied when registeredAgent service is ordered in the same request: the service's own agent is used (registeredAgent rules 2-3)",
      });
    }
  }
  return errors;
}

/** ORD-RA-3, ORD-RA-6: each supplied agent of the request (formation, annual report, foreign qualification). */
function suppliedAgentsErrors(b: Obj): FieldError[] {
  const errors: FieldError[] = [];
  for (const product of ['formation', 'annualReport', 'foreignQualification']) {
    const p = b[product];
    if (isObj(p) && isObj(p.registeredAgent))
      errors.push(...suppliedAgentErrors(p.registeredAgent, `${product}.registeredAgent.`, b.filingState));
  }
  return errors;
}

function annualReportErrors(b: Obj, now: Date): FieldError[] {
  const ar = b.annualReport;
  if (!isObj(ar) || typeof ar.filingYear !== 'number') return [];
  const nextYear = now.getUTCFullYear() + 1;
  return ar.filingYear > nextYear
    ? [{ field: 'annualReport.filingYear', message: `must not be later than ${nextYear} (annual report filingYear)` }]
    : [];
}

/** SS-4 rules the ein schema cannot express (see ein.schemas.ts). Messages never echo the tax id. */
function einErrors(ein: unknown): FieldError[] {
  if (!isObj(ein)) return [];
  const errors: FieldError[] = [];
  const add = (f: string, m: string) => errors.push({ field: `ein.${f}`, message: m });
  const pairs: Array<[string, string, string]> = [
    ['reasonForApplying', 'reasonForApplyingOther', 'SS-4 line 10'],
    ['principalActivity', 'principalActivityOther', 'SS-4 line 16'],
  ];
  for (const [choice, other, line] of pairs) {
    if (ein[choice] === 'other' && !isSet(ein[other])) add(other, `is required when ${choice} is other (${line})`);
    if (typeof ein[choice] === 'string' && ein[choice] !== 'other' && isSet(ein[other]))
      add(other, `is allowed only when ${choice} is other (${line})`);
  }
  const emp = ein.employees;
  if (isObj(emp)) {
    const total = ['agricultural', 'household', 'other'].reduce(
      (s, k) => s + (typeof emp[k] === 'number' ? (emp[k] as number) : 0),
      0,
    );
    if (total > 0 && !isSet(ein.firstWagesDate))
      add('firstWagesDate', 'is required when any employee count is above 0 (SS-4 line 15)');
    if (total === 0 && isSet(ein.firstWagesDate))
      add('firstWagesDate', 'is allowed only when an employee count is above 0 (SS-4 line 15)');
  }
  errors.push(...responsiblePartyErrors(ein.responsibleParty, 'ein.responsibleParty.'));
  return errors;
}

/**
 * ORD-EIN-2 for one responsible party (`ein.responsibleParty` of POST /orders, or the body of the correction,
 * ORD-EIN-8): a tax id whose number cannot exist. `prefix` goes before the field name (`ein.responsibleParty.`, or ''
 * for a body that is the party itself). Messages never echo the tax id.
 */
export function responsiblePartyErrors(party: unknown, prefix = ''): FieldError[] {
  if (!isObj(party) || typeof party.taxId !== 'string' || !/^\d{3}-?\d{2}-?\d{4}$/.test(party.taxId)) return [];
  const problem = taxIdProblem(party.taxId.replace(/-/g, ''), party.taxIdType);
  return problem ? [{ field: `${prefix}taxId`, message: problem }] : [];
}

/** SSA/IRS number ranges: SSNs never start with 000, 666 or 9 and have no 00 group or 0000 serial; ITINs start with 9 and have group 50-65, 70-88, 90-92 or 94-99. */
function taxIdProblem(digits: string, type: unknown): string | null {
  const area = digits.slice(0, 3);
  const group = Number(digits.slice(3, 5));
  if (type === 'SSN') {
    if (area === '000' || area === '666' || area.startsWith('9') || group === 0 || digits.endsWith('0000'))
      return 'is not a valid SSN (SS-4 line 7b)';
  } else if (type === 'ITIN') {
    const okGroup =
      (group >= 50 && group <= 65) || (group >= 70 && group <= 88) || (group >= 90 && group <= 92) || group >= 94;
    if (!area.startsWith('9') || !okGroup) return 'is not a valid ITIN (SS-4 line 7b)';
  }
  return null;
}

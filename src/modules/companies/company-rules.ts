import { Type, type Static } from '@sinclair/typebox';
import countries from 'i18n-iso-countries';
import type { FieldError } from '../../lib/errors.js';

/*
 * The company, address and officer rules (CO-1 to CO-6) in two halves:
 * TypeBox schemas for the shape (Ajv, allErrors: types, enums, patterns, min lengths, required fields)
 * and `companyRuleErrors`, a pure function for the rules that span fields (entity type vs structure type,
 * officer titles, US addresses, country codes). Both halves report dotted field paths so a caller can merge
 * them into one 400 that names every bad field. The orders module reuses both for `formation.company`.
 */

/** The 51 formation-state codes (50 states + DC; LIM-6). */
export const FORMATION_STATES = [
  'AL',
  'AK',
  'AZ',
  'AR',
  'CA',
  'CO',
  'CT',
  'DE',
  'DC',
  'FL',
  'GA',
  'HI',
  'ID',
  'IL',
  'IN',
  'IA',
  'KS',
  'KY',
  'LA',
  'ME',
  'MD',
  'MA',
  'MI',
  'MN',
  'MS',
  'MO',
  'MT',
  'NE',
  'NV',
  'NH',
  'NJ',
  'NM',
  'NY',
  'NC',
  'ND',
  'OH',
  'OK',
  'OR',
  'PA',
  'RI',
  'SC',
  'SD',
  'TN',
  'TX',
  'UT',
  'VT',
  'VA',
  'WA',
  'WV',
  'WI',
  'WY',
] as const;

/**
 * Two-letter state codes accepted in a US address: the 51 formation states plus the USPS codes of the
 * territories and military post offices, which are valid US mailing addresses (an officer may live there)
 * even though no company can be formed there.
 */
const US_ADDRESS_STATES: ReadonlySet<string> = new Set<string>([
  ...FORMATION_STATES,
  'PR',
  'GU',
  'VI',
  'AS',
  'MP',
  'AA',
  'AE',
  'AP',
]);

/** fiscalEndMonth values: English month names, January to December (CO-3). */
export const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
] as const;

/** Officer titles allowed when entityType is CORP (CO-6). */
export const CORP_TITLES = ['President', 'Vice President', 'Secretary', 'Treasurer', 'CEO', 'CFO', 'COO'] as const;
/** Officer titles allowed when entityType is LLC (CO-6). */
export const LLC_TITLES = ['Managing Member', 'Member', 'Manager'] as const;
/** LLC rule: at least one officer carries one of these titles. */
const LLC_OWNER_TITLES: ReadonlySet<string> = new Set(['Member', 'Managing Member']);

/** Default when the request leaves fiscalEndMonth out (CO-3, ORD-FORM-2). */
export const DEFAULT_FISCAL_END_MONTH = 'December';

/**
 * A string enum typed as the union of its values. `enum` (not a union of literals) gives one clear
 * validation message ("must be one of: …") and a plain enum in OpenAPI.
 */
export const stringEnum = <T extends readonly string[]>(values: T, description?: string) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...(description ? { description } : {}) });

/** The Address object (CO-4), shape only; the country code and US state/ZIP are addressRuleErrors' job. */
export const AddressSchema = Type.Object(
  {
    line1: Type.String({ minLength: 1 }),
    line2: Type.Optional(Type.String({ minLength: 1 })),
    city: Type.String({ minLength: 1 }),
    state: Type.Optional(
      Type.String({
        minLength: 1,
        description: 'Optional. When given: a two-letter code for US addresses (e.g. DE), free text elsewhere.',
      }),
    ),
    postalCode: Type.Optional(
      Type.String({
        minLength: 1,
        description: 'Optional. When given: five digits for US addresses (ZIP+4 is not accepted), free text elsewhere.',
      }),
    ),
    country: Type.String({
      minLength: 1,
      description: 'ISO 3166-1 alpha-2 code in upper case, e.g. US, DE; XK (Kosovo) included.',
    }),
  },
  {
    title: 'Address',
    additionalProperties: false,
    description:
      'state and postalCode are optional for every country; on a US address (country US) a state given is a two-letter code and a postalCode given is five digits.',
  },
);

/** An Address as validated by AddressSchema. */
export type AddressInput = Static<typeof AddressSchema>;

/** One Officer (CO-5), shape only; names per type and the title rules are companyRuleErrors' job. */
const OfficerSchema = Type.Object(
  {
    type: stringEnum(['PERSON', 'COMPANY'] as const),
    firstName: Type.Optional(
      Type.String({ minLength: 1, description: 'Required for PERSON; not allowed for COMPANY.' }),
    ),
    lastName: Type.Optional(
      Type.String({ minLength: 1, description: 'Required for PERSON; not allowed for COMPANY.' }),
    ),
    companyName: Type.Optional(
      Type.String({ minLength: 1, description: 'Required for COMPANY; not allowed for PERSON.' }),
    ),
    title: Type.String({
      minLength: 1,
      description: `CORP: one of ${CORP_TITLES.join(', ')}. LLC: one of ${LLC_TITLES.join(', ')}, and at least one officer is a Member or Managing Member.`,
    }),
    address: AddressSchema,
    isPrimary: Type.Optional(
      Type.Boolean({ description: 'Exactly one officer of a company is true; absent means false.' }),
    ),
  },
  { title: 'Officer', additionalProperties: false },
);

/** An Officer as validated by OfficerSchema. */
export type OfficerInput = Static<typeof OfficerSchema>;

/** The company request fields of POST /companies, without userId (CO-1). */
export const CompanyFieldsSchema = Type.Object(
  {
    legalName: Type.String({ minLength: 1 }),
    tradeName: Type.Optional(Type.String({ minLength: 1, description: 'Optional DBA name.' })),
    ein: Type.Optional(Type.String({ pattern: '^\\d{2}-\\d{7}$', description: 'XX-XXXXXXX' })),
    entityType: stringEnum(['LLC', 'CORP'] as const),
    structureType: Type.Optional(
      stringEnum(['MEMBER', 'MANAGER'] as const, 'Required when entityType is LLC; not allowed for CORP.'),
    ),
    taxElection: Type.Optional(
      stringEnum(['C Corporation', 'S Corporation'] as const, 'Required when entityType is CORP; not allowed for LLC.'),
    ),
    fiscalEndMonth: Type.Optional(stringEnum(MONTHS, 'English month name; default December.')),
    formationDate: Type.Optional(
      Type.String({ format: 'date', description: 'Date of initial filing in the state of formation (YYYY-MM-DD).' }),
    ),
    formationState: Type.Optional(stringEnum(FORMATION_STATES)),
    principalAddress: AddressSchema,
    mailingAddress: AddressSchema,
    officers: Type.Array(OfficerSchema, {
      description: 'Request only (never returned). At least one; exactly one isPrimary.',
    }),
  },
  { additionalProperties: false },
);

/** The company request fields as validated by CompanyFieldsSchema (not yet checked by companyRuleErrors). */
export type CompanyInput = Static<typeof CompanyFieldsSchema>;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isSet = (v: unknown) => v !== undefined && v !== null;

/**
 * Cross-field rules of one Address (CO-4): the country is a real ISO 3166-1 alpha-2 code
 * (i18n-iso-countries, which includes XK); on a US address a state, when given, is a two-letter US state code
 * and a postal code, when given, has five digits. Both stay optional for US addresses too: the public API
 * marks them optional for every country and only constrains their format. Shape errors (missing line1,
 * wrong types) are the schema's job and are not repeated here.
 * @param prefix dotted path of the address including the trailing dot, e.g. 'officers.0.address.'.
 */
function addressRuleErrors(address: unknown, prefix: string): FieldError[] {
  if (!isObject(address)) return [];
  const errors: FieldError[] = [];
  const { country, state, postalCode } = address;
  if (typeof country === 'string' && country.length > 0 && !isCountryCode(country)) {
    errors.push({
      field: `${prefix}country`,
      message: `'${country}' is not an ISO 3166-1 alpha-2 country code (upper case, e.g. US)`,
    });
  }
  if (country === 'US') {
    if (typeof state === 'string' && !US_ADDRESS_STATES.has(state)) {
      errors.push({
        field: `${prefix}state`,
        message: 'must be a two-letter US state code in upper case (e.g. DE) for US addresses',
      });
    }
    if (typeof postalCode === 'string' && !/^\d{5}$/.test(postalCode)) {
      errors.push({ field: `${prefix}postalCode`, message: 'must be five digits for US addresses (e.g. 19801)' });
    }
  }
  return errors;
}

function isCountryCode(code: string): boolean {
  // Upper case only: ISO 3166-1 writes alpha-2 codes in capitals, and one spelling keeps stored data uniform.
  return /^[A-Z]{2}$/.test(code) && countries.isValid(code);
}

/**
 * The cross-field rules of a company (CO-2 to CO-6):
 * structureType required for LLC and refused for CORP; taxElection required for CORP and refused for LLC;
 * both addresses (see addressRuleErrors); at least one officer, exactly one isPrimary; PERSON officers need
 * firstName and lastName (companyName refused), COMPANY officers need companyName (names refused);
 * titles from the entity type's list; an LLC has at least one Member or Managing Member.
 *
 * Pure and defensive: it tolerates input that already failed the schema (wrong types are skipped, not
 * thrown on), so its errors can be merged with the schema's into one response.
 * @param fieldPrefix prepended to every field path, e.g. 'formation.company.' (include the trailing dot).
 * @returns every broken rule as `{field, message}` with dotted paths; empty when the company is valid.
 */
export function companyRuleErrors(company: unknown, fieldPrefix = ''): FieldError[] {
  if (!isObject(company)) return [];
  const c = company;
  const errors: FieldError[] = [];
  const add = (field: string, message: string) => errors.push({ field: `${fieldPrefix}${field}`, message });
  const entityType = c.entityType;

  if (entityType === 'LLC') {
    if (!isSet(c.structureType)) add('structureType', 'is required when entityType is LLC (MEMBER or MANAGER)');
    if (isSet(c.taxElection)) add('taxElection', 'is not allowed when entityType is LLC');
  } else if (entityType === 'CORP') {
    if (!isSet(c.taxElection))
      add('taxElection', "is required when entityType is CORP ('C Corporation' or 'S Corporation')");
    if (isSet(c.structureType)) add('structureType', 'is not allowed when entityType is CORP');
  }

  for (const key of ['principalAddress', 'mailingAddress']) {
    errors.push(...addressRuleErrors(c[key], `${fieldPrefix}${key}.`));
  }

  if (Array.isArray(c.officers)) errors.push(...officerRuleErrors(c.officers, entityType, fieldPrefix));
  return errors;
}

function officerRuleErrors(officers: unknown[], entityType: unknown, fieldPrefix: string): FieldError[] {
  const errors: FieldError[] = [];
  const add = (field: string, message: string) => errors.push({ field: `${fieldPrefix}${field}`, message });
  if (officers.length === 0) {
    add('officers', 'at least one officer is required');
    return errors;
  }
  const primaries = officers.filter((o) => isObject(o) && o.isPrimary === true).length;
  if (primaries !== 1) add('officers', `exactly one officer must have isPrimary true (found ${primaries})`);

  const titles: readonly string[] | null =
    entityType === 'CORP' ? CORP_TITLES : entityType === 'LLC' ? LLC_TITLES : null;
  officers.forEach((o, i) => {
    if (!isObject(o)) return;
    const at = `officers.${i}.`;
    if (o.type === 'PERSON') {
      if (!isSet(o.firstName)) add(`${at}firstName`, 'is required for a PERSON officer');
      if (!isSet(o.lastName)) add(`${at}lastName`, 'is required for a PERSON officer');
      if (isSet(o.companyName)) add(`${at}companyName`, 'is not allowed for a PERSON officer');
    } else if (o.type === 'COMPANY') {
      if (!isSet(o.companyName)) add(`${at}companyName`, 'is required for a COMPANY officer');
      if (isSet(o.firstName)) add(`${at}firstName`, 'is not allowed for a COMPANY officer');
      if (isSet(o.lastName)) add(`${at}lastName`, 'is not allowed for a COMPANY officer');
    }
    if (titles && typeof o.title === 'string' && o.title.length > 0 && !titles.includes(o.title)) {
      add(`${at}title`, `must be one of ${titles.join(', ')} when entityType is ${entityType as string}`);
    }
    errors.push(...addressRuleErrors(o.address, `${fieldPrefix}${at}address.`));
  });

  if (entityType === 'LLC' && !officers.some((o) => isObject(o) && LLC_OWNER_TITLES.has(o.title as string))) {
    add('officers', 'an LLC needs at least one officer with title Member or Managing Member');
  }
  return errors;
}

import fs from 'node:fs';
import type { Environment } from '../src/context.js';
import type { TestApp, TestTenant } from './harness.js';
import { corpFields, createUser, llcFields } from './factories.js';

/*
 * Fixtures of the orders tests, API and dashboard checkout alike. Expected amounts are computed here from the SOURCE
 * data (data/price-catalog.json, data/state-fees.json and the expedited fees of ORD-FORM-5), never from the
 * implementation.
 */

const priceCatalog = JSON.parse(fs.readFileSync('data/price-catalog.json', 'utf8')) as {
  products: Array<{ type: string; defaultAmount: number; wholesaleAmount: number }>;
};
const stateFeeData = JSON.parse(fs.readFileSync('data/state-fees.json', 'utf8')) as {
  states: Record<string, Record<string, number>>;
};

/** The expedited fees of ORD-FORM-5, verbatim (dollars; LLCs only). */
export const SPEC_EXPEDITED_FEES: Record<string, number> = { AZ: 85, DE: 185, FL: 195, NV: 550, NY: 205, WY: 103.75 };
export const EXPEDITED_MESSAGE = 'Expedited formation is not available for the selected state and entity type';

export const toCents = (dollars: number) => Math.round(dollars * 100);

function catalogProduct(type: string) {
  const p = priceCatalog.products.find((x) => x.type === type);
  if (!p) throw new Error(`no catalogue price for ${type}`);
  return p;
}

/** Catalogue wholesale price of a product type, cents. */
export function wholesale(type: string): number {
  return toCents(catalogProduct(type).wholesaleAmount);
}

/** Catalogue list price (`defaultAmount`) of a product type, cents: what customers pay where no retail price is set. */
export function listPrice(type: string): number {
  return toCents(catalogProduct(type).defaultAmount);
}

/** A state fee from data/state-fees.json, cents. kind: Formation, ForeignQualification, AnnualReport. */
export function stateFee(
  state: string,
  kind: 'Formation' | 'ForeignQualification' | 'AnnualReport',
  entityType: 'LLC' | 'CORP',
): number {
  return toCents(stateFeeData.states[state][`${entityType === 'LLC' ? 'llc' : 'corp'}${kind}`]);
}

/** A supplied registered agent in `state`. */
export const suppliedAgent = (state: string, overrides: Record<string, unknown> = {}) => ({
  type: 'PERSON',
  firstName: 'Grace',
  lastName: 'Hopper',
  addressStreet: '1 Agent Way',
  addressCity: 'Capital City',
  addressState: state,
  addressZip: '12345',
  ...overrides,
});

/** The SSN used in EIN fixtures; tests check it never comes back or reaches the logs. */
export const TEST_SSN = '123-45-6789';

/** A valid SS-4 ein object. */
export const einObject = (overrides: Record<string, unknown> = {}) => ({
  responsibleParty: {
    firstName: 'Ada',
    lastName: 'Lovelace',
    taxIdType: 'SSN',
    taxId: TEST_SSN,
    title: 'Managing Member',
  },
  reasonForApplying: 'started_new_business',
  principalActivity: 'retail',
  principalProductOrService: 'Handmade furniture',
  employees: { agricultural: 0, household: 0, other: 0 },
  irsQuestions: {
    ownsHeavyHighwayVehicle: false,
    involvesGambling: false,
    filesExciseTaxForm720: false,
    sellsAlcoholTobaccoOrFirearms: false,
  },
  ...overrides,
});

/** formation.company of an LLC (or CORP) formed in any state: no formationState/formationDate (ORD-FORM-1). */
export function formationCompany(entityType: 'LLC' | 'CORP' = 'LLC', overrides: Record<string, unknown> = {}) {
  const {
    formationDate: _d,
    formationState: _s,
    ...fields
  } = (entityType === 'LLC' ? llcFields() : corpFields()) as Record<string, unknown>;
  return { ...fields, ...overrides };
}

/** A POST /orders body forming a company in `state` with a supplied agent, unless overridden. */
export function formationBody(
  userId: string,
  state = 'DE',
  opts: { entityType?: 'LLC' | 'CORP'; formation?: Record<string, unknown>; extra?: Record<string, unknown> } = {},
) {
  return {
    userId,
    filingState: state,
    formation: {
      company: formationCompany(opts.entityType ?? 'LLC'),
      registeredAgent: suppliedAgent(state),
      ...opts.formation,
    },
    ...opts.extra,
  };
}

/** Adds test money (dollars) through the test helper. */
export async function credit(tenant: TestTenant, dollars: number): Promise<void> {
  const res = await tenant.api('POST', '/test_helpers/balance-credits', { amount: dollars });
  if (res.statusCode !== 201) throw new Error(`credit: ${res.statusCode} ${res.body}`);
}

/** The tenant's balance in cents (test environment by default), read from the API. */
export async function balanceCents(tenant: TestTenant, env: Environment = 'test'): Promise<number> {
  const res = await tenant.api('GET', '/organization', undefined, { env });
  return toCents(res.json().balance);
}

/** Row counts the 402 tests compare before and after. */
export async function counts(t: TestApp, organizationId: string) {
  const q = async (table: string) =>
    Number(
      (await t.ctx.pool.query(`SELECT count(*) FROM ${table} WHERE organization_id = $1`, [organizationId])).rows[0]
        .count,
    );
  return {
    orders: await q('orders'),
    orderGroups: await q('order_groups'),
    ledger: await q('ledger_entries'),
    companies: await q('companies'),
    events: await q('events'),
    history: await q('order_status_history'),
  };
}

/** A user of the tenant (test environment). */
export async function newUser(tenant: TestTenant, env: Environment = 'test') {
  return createUser(tenant, env);
}

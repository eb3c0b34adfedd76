import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCompany, personOfficer } from './factories.js';
import { createTestApp, type TestApp, type TestTenant } from './harness.js';
import {
  credit,
  einObject,
  EXPEDITED_MESSAGE,
  formationBody,
  formationCompany,
  newUser,
  suppliedAgent,
  TEST_SSN,
} from './orders-fixtures.js';

/*
 * POST /orders request rules (ORD, ORD-FORM, ORD-RA, ORD-FQ, ORD-EIN, ORD-AR): each broken rule answers with its
 * status, names the field and the rule (in the messages, the numbering integrators know, e.g. "formation rule 2").
 * Money is plentiful here; amounts are checked in orders-billing.test.ts.
 */

let t: TestApp;
let tenant: TestTenant;
let userId: string;
beforeAll(async () => {
  t = await createTestApp();
  tenant = await t.newTenant('Rules Org');
  userId = (await newUser(tenant)).id;
  await credit(tenant, 100_000);
});
afterAll(() => t.close());

const post = (body: unknown) => tenant.api('POST', '/orders', body);
const fields = (res: { json(): any }) => (res.json().errors ?? []).map((e: { field: string }) => e.field);
const messageOf = (res: { json(): any }, field: string) =>
  (res.json().errors ?? []).find((e: { field: string }) => e.field === field)?.message as string | undefined;

async function expect400(body: unknown, field: string, rule?: string | RegExp) {
  const res = await post(body);
  expect(res.statusCode, res.body).toBe(400);
  expect(res.json().code).toBe('validation_error');
  expect(fields(res)).toContain(field);
  if (rule) expect(messageOf(res, field)).toMatch(rule);
  return res;
}

/** An existing DE LLC owned by a fresh admin user. */
async function existingCompany(overrides: Record<string, unknown> = {}) {
  const { user, company } = await createCompany(tenant, 'test', overrides);
  return { adminId: user.id, companyId: company.id };
}

describe('cross-product rules', () => {
  it('ORD-1: at least one product object', async () => {
    const { adminId, companyId } = await existingCompany();
    const res = await post({ userId: adminId, companyId, filingState: 'DE' });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toContain('cross-product rule 1');
  });

  it('ORD-2: formation and foreignQualification never together', async () => {
    await expect400(
      formationBody(userId, 'DE', { extra: { foreignQualification: true } }),
      'foreignQualification',
      /cross-product rule 2/,
    );
  });

  it('ORD-3: companyId is required unless formation is included, and refused with it', async () => {
    await expect400(
      { userId, filingState: 'DE', ein: einObject() },
      'companyId',
      /is required unless formation is included/,
    );
    const { companyId } = await existingCompany();
    await expect400(
      formationBody(userId, 'DE', { extra: { companyId } }),
      'companyId',
      /formation creates the company/,
    );
  });

  it('ORD-4: one filingState from the listed codes', async () => {
    for (const filingState of ['XX', 'de', 'PR', ['DE', 'NY']]) {
      await expect400({ ...formationBody(userId, 'DE'), filingState }, 'filingState');
    }
  });

  it('refuses unknown product keys and fields', async () => {
    await expect400(
      { ...formationBody(userId, 'DE'), certificateOfGoodStanding: true },
      'certificateOfGoodStanding',
      /not a known field/,
    );
  });
});

describe('formation rules', () => {
  it('ORD-FORM-1: ein, tradeName, formationDate, formationState are refused inside formation.company, each named', async () => {
    const company = formationCompany('LLC', {
      ein: '12-3456789',
      tradeName: 'Acme',
      formationDate: '2024-01-01',
      formationState: 'DE',
    });
    const res = await expect400(
      formationBody(userId, 'DE', { formation: { company } }),
      'formation.company.ein',
      /formation rule 1/,
    );
    for (const f of ['tradeName', 'formationDate', 'formationState']) {
      expect(messageOf(res, `formation.company.${f}`)).toMatch(/formation rule 1/);
    }
  });

  it('ORD-FORM-4: a registered agent is required: ordered or supplied in filingState', async () => {
    await expect400(
      { userId, filingState: 'DE', formation: { company: formationCompany() } },
      'formation.registeredAgent',
      /formation rule 2/,
    );
    await expect400(
      formationBody(userId, 'DE', { formation: { registeredAgent: suppliedAgent('NY') } }),
      'formation.registeredAgent.addressState',
      /filingState/,
    );
    await expect400(
      formationBody(userId, 'DE', { extra: { registeredAgent: { isChangeOfAgent: false } } }),
      'formation.registeredAgent',
      /formation rule 2/,
    );
    const ordered = await post({
      userId,
      filingState: 'DE',
      formation: { company: formationCompany() },
      registeredAgent: { isChangeOfAgent: false },
    });
    expect(ordered.statusCode, ordered.body).toBe(201);
  });

  it('ORD-FORM-2: formationState comes from filingState, fiscalEndMonth defaults to December, the user is admin', async () => {
    const res = await post(formationBody(userId, 'WY'));
    expect(res.statusCode, res.body).toBe(201);
    const company = (await tenant.api('GET', `/companies/${res.json().companyId}`)).json();
    expect(company).toMatchObject({ formationState: 'WY', fiscalEndMonth: 'December', formationDate: null, ein: null });
    const admin = await t.ctx.pool.query('SELECT 1 FROM company_admins WHERE company_id = $1 AND user_id = $2', [
      company.id,
      userId,
    ]);
    expect(admin.rowCount).toBe(1);
    const june = await post(
      formationBody(userId, 'WY', { formation: { company: formationCompany('LLC', { fiscalEndMonth: 'June' }) } }),
    );
    expect((await tenant.api('GET', `/companies/${june.json().companyId}`)).json().fiscalEndMonth).toBe('June');
  });

  it('ORD-FORM-3: officer and title rules of the company (CO-5, CO-6)', async () => {
    const llcPresident = formationCompany('LLC', { officers: [personOfficer({ title: 'President' })] });
    await expect400(
      formationBody(userId, 'DE', { formation: { company: llcPresident } }),
      'formation.company.officers.0.title',
    );
    const corpMember = formationCompany('CORP', { officers: [personOfficer({ title: 'Member' })] });
    await expect400(
      formationBody(userId, 'DE', { entityType: 'CORP', formation: { company: corpMember } }),
      'formation.company.officers.0.title',
    );
    const noMember = formationCompany('LLC', { officers: [personOfficer({ title: 'Manager' })] });
    await expect400(
      formationBody(userId, 'DE', { formation: { company: noMember } }),
      'formation.company.officers',
      /Member or Managing Member/,
    );
    await expect400(
      formationBody(userId, 'DE', { formation: { company: formationCompany('LLC', { officers: [] }) } }),
      'formation.company.officers',
    );
    const noStructure = formationCompany('LLC', { structureType: undefined });
    await expect400(
      formationBody(userId, 'DE', { formation: { company: noStructure } }),
      'formation.company.structureType',
    );
  });

  it('ORD-FORM-5: expedited only for LLCs in AZ DE FL NV NY WY, with the exact message', async () => {
    for (const [state, entityType] of [
      ['CA', 'LLC'],
      ['TX', 'LLC'],
      ['DE', 'CORP'],
      ['NV', 'CORP'],
    ] as const) {
      const res = await post(formationBody(userId, state, { entityType, formation: { expedited: true } }));
      expect(res.statusCode).toBe(400);
      expect(res.json().message).toBe(EXPEDITED_MESSAGE);
      expect(messageOf(res, 'formation.expedited')).toBe(EXPEDITED_MESSAGE);
    }
    const ok = await post(formationBody(userId, 'NV', { formation: { expedited: true } }));
    expect(ok.statusCode, ok.body).toBe(201);
  });

  it('ORD-FORM-6: alternativeNames: up to 10 non-empty strings beside company', async () => {
    const names = (n: number) => Array.from({ length: n }, (_, i) => `Fallback ${i + 1} LLC`);
    await expect400(
      formationBody(userId, 'DE', { formation: { alternativeNames: names(11) } }),
      'formation.alternativeNames',
    );
    await expect400(
      formationBody(userId, 'DE', { formation: { alternativeNames: [''] } }),
      'formation.alternativeNames.0',
    );
    await expect400(
      formationBody(userId, 'DE', { formation: { alternativeNames: ['  '] } }),
      'formation.alternativeNames.0',
    );
    const ok = await post(formationBody(userId, 'DE', { formation: { alternativeNames: names(10) } }));
    expect(ok.statusCode, ok.body).toBe(201);
  });
});

describe('registeredAgent rules and the supplied agent', () => {
  it('ORD-RA-1: isChangeOfAgent is a required boolean', async () => {
    const { adminId, companyId } = await existingCompany();
    await expect400(
      { userId: adminId, companyId, filingState: 'DE', registeredAgent: {} },
      'registeredAgent.isChangeOfAgent',
      /required/,
    );
    await expect400(
      { userId: adminId, companyId, filingState: 'DE', registeredAgent: { isChangeOfAgent: 'no' } },
      'registeredAgent.isChangeOfAgent',
    );
  });

  it('ORD-RA-1: isChangeOfAgent true ordered with a formation is accepted as a new appointment', async () => {
    const company = formationCompany('LLC', { legalName: 'Change Ignored LLC' });
    const body = { userId, filingState: 'DE', formation: { company }, registeredAgent: { isChangeOfAgent: true } };
    const quoted = await tenant.api('POST', '/orders/quote', body);
    expect(quoted.statusCode, quoted.body).toBe(200);
    const asNew = await tenant.api('POST', '/orders/quote', { ...body, registeredAgent: { isChangeOfAgent: false } });
    expect(quoted.json()).toEqual(asNew.json());

    const res = await post(body);
    expect(res.statusCode, res.body).toBe(201);
    const agent = res.json().items.find((i: { orderType: string }) => i.orderType === 'registered_agent');
    expect(agent).toMatchObject({ filingType: null, subscriptionStatus: 'active', filingStatus: 'submitted' });
    const events = (await tenant.api('GET', `/events?orderId=${agent.orderId}`)).json().data;
    expect(events.map((e: { type: string; data: { filingType: unknown } }) => [e.type, e.data.filingType])).toEqual([
      ['filing.status_changed', null],
    ]);
  });

  it('a formation whose US addresses have no state or postalCode is placed (CO-4: both optional)', async () => {
    const bare = { line1: '1209 Orange Street', city: 'Wilmington', country: 'US' };
    const company = formationCompany('LLC', { legalName: 'No Zip LLC', principalAddress: bare, mailingAddress: bare });
    const res = await post({
      userId,
      filingState: 'DE',
      formation: { company },
      registeredAgent: { isChangeOfAgent: false },
    });
    expect(res.statusCode, res.body).toBe(201);
    const created = (await tenant.api('GET', `/companies/${res.json().companyId}`)).json();
    expect(created.principalAddress).toEqual(bare);
  });

  it('ORD-RA-2: no agent address is supplied with the service', async () => {
    const { adminId, companyId } = await existingCompany();
    await expect400(
      {
        userId: adminId,
        companyId,
        filingState: 'DE',
        registeredAgent: { isChangeOfAgent: false, addressStreet: '1 Main St' },
      },
      'registeredAgent.addressStreet',
    );
  });

  it('ORD-RA-3: a supplied agent is only for keeping an existing agent, in filingState', async () => {
    const { adminId, companyId } = await existingCompany();
    const both = {
      userId: adminId,
      companyId,
      filingState: 'DE',
      registeredAgent: { isChangeOfAgent: false },
      annualReport: { filingYear: 2025, registeredAgent: suppliedAgent('DE') },
    };
    await expect400(both, 'annualReport.registeredAgent', /registeredAgent rule/);
    await expect400(
      {
        userId: adminId,
        companyId,
        filingState: 'DE',
        annualReport: { filingYear: 2025, registeredAgent: suppliedAgent('NJ') },
      },
      'annualReport.registeredAgent.addressState',
      /filingState/,
    );
  });

  it('ORD-RA-3, ORD-RA-6: what a supplied agent gives is validated; contradictions are refused', async () => {
    const company = suppliedAgent('DE', { type: 'COMPANY', firstName: undefined, lastName: undefined });
    await expect400(
      formationBody(userId, 'DE', { formation: { registeredAgent: { ...company, firstName: 'Grace' } } }),
      'formation.registeredAgent.firstName',
      /COMPANY/,
    );
    await expect400(
      formationBody(userId, 'DE', {
        formation: { registeredAgent: suppliedAgent('DE', { companyName: 'Agents Inc' }) },
      }),
      'formation.registeredAgent.companyName',
      /PERSON/,
    );
    await expect400(
      formationBody(userId, 'DE', { formation: { registeredAgent: suppliedAgent('DE', { addressZip: '1234' }) } }),
      'formation.registeredAgent.addressZip',
    );
    await expect400(
      formationBody(userId, 'DE', { formation: { registeredAgent: suppliedAgent('DE', { type: 'TRUST' }) } }),
      'formation.registeredAgent.type',
    );
    await expect400(
      formationBody(userId, 'DE', { formation: { registeredAgent: suppliedAgent('DE', { addressStreet: '' }) } }),
      'formation.registeredAgent.addressStreet',
    );
    const ok = await post(
      formationBody(userId, 'DE', { formation: { registeredAgent: { ...company, companyName: 'Agents Inc' } } }),
    );
    expect(ok.statusCode, ok.body).toBe(201);
  });

  it('ORD-RA-6: an agent with details missing is accepted, none of its fields being required', async () => {
    for (const agent of [
      {},
      { type: 'PERSON' },
      { companyName: 'Agents Inc', addressState: 'DE' },
      suppliedAgent('DE', { firstName: undefined, addressZip: undefined }),
    ]) {
      const res = await post(formationBody(userId, 'DE', { formation: { registeredAgent: agent } }));
      expect(res.statusCode, res.body).toBe(201);
    }
  });
});

describe('foreignQualification rules', () => {
  it('ORD-FQ-1: an agent in the state: ordered, supplied, or on file', async () => {
    const { adminId, companyId } = await existingCompany();
    const base = { userId: adminId, companyId, filingState: 'CA' };
    await expect400(
      { ...base, foreignQualification: true },
      'foreignQualification.registeredAgent',
      /foreignQualification rule 1/,
    );
    await expect400(
      { ...base, foreignQualification: { registeredAgent: suppliedAgent('NV') } },
      'foreignQualification.registeredAgent.addressState',
      /filingState/,
    );
    const supplied = await post({ ...base, foreignQualification: { registeredAgent: suppliedAgent('CA') } });
    expect(supplied.statusCode, supplied.body).toBe(201);

    const other = await existingCompany();
    const ordered = await post({
      userId: other.adminId,
      companyId: other.companyId,
      filingState: 'CA',
      foreignQualification: true,
      registeredAgent: { isChangeOfAgent: false },
    });
    expect(ordered.statusCode, ordered.body).toBe(201);

    const third = await existingCompany();
    expect(
      (
        await post({
          userId: third.adminId,
          companyId: third.companyId,
          filingState: 'TX',
          registeredAgent: { isChangeOfAgent: false },
        })
      ).statusCode,
    ).toBe(201);
    const onFile = await post({
      userId: third.adminId,
      companyId: third.companyId,
      filingState: 'TX',
      foreignQualification: true,
    });
    expect(onFile.statusCode, onFile.body).toBe(201);
  });

  it('ORD-RA-7: an agent the company supplied for the state on an earlier order is an agent on file', async () => {
    const { adminId, companyId } = await existingCompany();
    const base = { userId: adminId, companyId, filingState: 'CA' };
    await expect400({ ...base, foreignQualification: true }, 'foreignQualification.registeredAgent');
    const earlier = await post({
      ...base,
      annualReport: { filingYear: 2025, registeredAgent: { addressState: 'CA' } },
    });
    expect(earlier.statusCode, earlier.body).toBe(201);
    const onFile = await post({ ...base, foreignQualification: true });
    expect(onFile.statusCode, onFile.body).toBe(201);
    // An agent supplied for another state is not on file in this one.
    await expect400(
      { userId: adminId, companyId, filingState: 'NV', foreignQualification: true },
      'foreignQualification.registeredAgent',
    );
  });

  it('ORD-FQ-2: companyId of an existing company is required', async () => {
    await expect400(
      { userId, filingState: 'CA', foreignQualification: { registeredAgent: suppliedAgent('CA') } },
      'companyId',
      /foreignQualification rule 2/,
    );
  });

  it('ORD-FQ-3: the company needs formationState (and entityType)', async () => {
    const { adminId, companyId } = await existingCompany({ formationState: undefined, formationDate: undefined });
    await expect400(
      { userId: adminId, companyId, filingState: 'CA', foreignQualification: { registeredAgent: suppliedAgent('CA') } },
      'companyId',
      /foreignQualification rule 3/,
    );
  });

  it('ORD-FQ-5: refuses qualifying in the home state', async () => {
    const { adminId, companyId } = await existingCompany();
    await expect400(
      { userId: adminId, companyId, filingState: 'DE', foreignQualification: { registeredAgent: suppliedAgent('DE') } },
      'filingState',
      /home state/,
    );
  });

  it('ORD-FQ-4: 409 when a paid qualification exists in that state; a cancelled one does not block', async () => {
    const { adminId, companyId } = await existingCompany();
    const body = {
      userId: adminId,
      companyId,
      filingState: 'FL',
      foreignQualification: { registeredAgent: suppliedAgent('FL') },
    };
    const first = await post(body);
    expect(first.statusCode, first.body).toBe(201);
    const again = await post(body);
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ code: 'qualification_already_paid' });
    expect(again.json().message).toMatch(/foreignQualification rule 4/);
    // Another state is fine.
    expect(
      (await post({ ...body, filingState: 'GA', foreignQualification: { registeredAgent: suppliedAgent('GA') } }))
        .statusCode,
    ).toBe(201);
    const orderId = first.json().items[0].orderId;
    const cancel = await tenant.api('POST', `/test_helpers/orders/${orderId}/advance`, { filingStatus: 'cancelled' });
    expect(cancel.statusCode, cancel.body).toBe(200);
    const reorder = await post(body);
    expect(reorder.statusCode, reorder.body).toBe(201);
  });

  it('ORD-FQ-4: an unpaid attempt (exception 460) does not block', async () => {
    const { adminId, companyId } = await existingCompany();
    const body = {
      userId: adminId,
      companyId,
      filingState: 'OH',
      foreignQualification: { registeredAgent: suppliedAgent('OH') },
    };
    const first = await post(body);
    const orderId = first.json().items[0].orderId;
    await tenant.api('POST', `/test_helpers/orders/${orderId}/advance`, {
      filingStatus: 'exception',
      exceptionCode: '460',
    });
    expect((await post(body)).statusCode).toBe(201);
  });
});

describe('EIN rule', () => {
  it('ORD-EIN-4: 409 ein_already_requested when the company has an EIN or a non-cancelled EIN order', async () => {
    const withEin = await existingCompany({ ein: '12-3456789' });
    const has = await post({
      userId: withEin.adminId,
      companyId: withEin.companyId,
      filingState: 'DE',
      ein: einObject(),
    });
    expect(has.statusCode).toBe(409);
    expect(has.json()).toMatchObject({ code: 'ein_already_requested' });
    expect(has.json().message).toMatch(/EIN rule/);

    const { adminId, companyId } = await existingCompany();
    const body = { userId: adminId, companyId, filingState: 'DE', ein: einObject() };
    const first = await post(body);
    expect(first.statusCode, first.body).toBe(201);
    const again = await post(body);
    expect(again.statusCode).toBe(409);
    expect(again.json().code).toBe('ein_already_requested');
    await tenant.api('POST', `/test_helpers/orders/${first.json().items[0].orderId}/advance`, {
      filingStatus: 'cancelled',
    });
    expect((await post(body)).statusCode).toBe(201);
  });

  it('ORD-EIN-1, ORD-EIN-2: the SS-4 object: required parts, conditional fields, valid tax ids never echoed', async () => {
    const { adminId, companyId } = await existingCompany();
    const base = { userId: adminId, companyId, filingState: 'DE' };
    for (const f of [
      'responsibleParty',
      'employees',
      'irsQuestions',
      'reasonForApplying',
      'principalActivity',
      'principalProductOrService',
    ]) {
      await expect400({ ...base, ein: einObject({ [f]: undefined }) }, `ein.${f}`, /required/);
    }
    await expect400(
      { ...base, ein: einObject({ irsQuestions: { involvesGambling: false } }) },
      'ein.irsQuestions.ownsHeavyHighwayVehicle',
    );
    await expect400(
      { ...base, ein: einObject({ employees: { agricultural: 0, household: 1, other: 2 } }) },
      'ein.firstWagesDate',
      /SS-4 line 15/,
    );
    await expect400(
      { ...base, ein: einObject({ reasonForApplying: 'other' }) },
      'ein.reasonForApplyingOther',
      /SS-4 line 10/,
    );
    await expect400(
      { ...base, ein: einObject({ principalActivity: 'other' }) },
      'ein.principalActivityOther',
      /SS-4 line 16/,
    );
    const badSsn = '000-12-3456';
    const res = await expect400(
      { ...base, ein: einObject({ responsibleParty: { ...einObject().responsibleParty, taxId: badSsn } }) },
      'ein.responsibleParty.taxId',
      /SSN/,
    );
    expect(res.body).not.toContain(badSsn);
    const itinAsSsn = await post({
      ...base,
      ein: einObject({ responsibleParty: { ...einObject().responsibleParty, taxIdType: 'ITIN' } }),
    });
    expect(itinAsSsn.statusCode).toBe(400);
    expect(itinAsSsn.body).not.toContain(TEST_SSN);
  });
});

describe('annualReport', () => {
  it('ORD-AR-1: filingYear is an integer, at most next year', async () => {
    const { adminId, companyId } = await existingCompany();
    const base = { userId: adminId, companyId, filingState: 'DE' };
    await expect400({ ...base, annualReport: { filingYear: '2025' } }, 'annualReport.filingYear');
    await expect400({ ...base, annualReport: { filingYear: 2025.5 } }, 'annualReport.filingYear');
    await expect400(
      { ...base, annualReport: { filingYear: new Date().getUTCFullYear() + 2 } },
      'annualReport.filingYear',
      /later than/,
    );
  });

  it('ORD-AR-1: annualReport {} is accepted (no field is required) and reports on the current year', async () => {
    const { adminId, companyId } = await existingCompany();
    const body = { userId: adminId, companyId, filingState: 'DE', annualReport: {} };
    const quote = await tenant.api('POST', '/orders/quote', body);
    expect(quote.statusCode, quote.body).toBe(200);
    expect(
      quote
        .json()
        .lines.map((l: { description: string }) => l.description)
        .join(' '),
    ).toContain(String(new Date().getUTCFullYear()));
  });
});

describe('annual report covering several years (CAL-35)', () => {
  it('a Georgia LLC may pay up to three years at once, priced per year; other states and a fourth year are refused', async () => {
    const { adminId, companyId } = await existingCompany({ formationState: 'GA' });
    const base = { userId: adminId, companyId, filingState: 'GA' };
    const one = await tenant.api('POST', '/orders/quote', { ...base, annualReport: { filingYear: 2026 } });
    const three = await tenant.api('POST', '/orders/quote', { ...base, annualReport: { filingYear: 2026, years: 3 } });
    expect(three.statusCode, three.body).toBe(200);
    expect(three.json().total).toBeCloseTo(one.json().total * 3, 2);
    const descriptions = three.json().lines.map((l: { description: string }) => l.description);
    for (const year of ['2026', '2027', '2028']) expect(descriptions.join(' ')).toContain(`Annual report ${year} (GA)`);
    const placed = await post({ ...base, annualReport: { filingYear: 2026, years: 3 } });
    expect(placed.statusCode, placed.body).toBe(201);
    // The subscription renews after the third year, not after the first.
    const orderId = placed.json().items.find((i: { orderType: string }) => i.orderType === 'annual_report').orderId;
    const period = await t.ctx.pool.query(
      `SELECT current_period_end = ((now() AT TIME ZONE 'UTC')::date + interval '3 years')::date AS three_years
         FROM orders WHERE id = $1`,
      [orderId],
    );
    expect(period.rows[0].three_years).toBe(true);

    await expect400({ ...base, annualReport: { filingYear: 2026, years: 4 } }, 'annualReport.years', /at most 3/);
    const de = await existingCompany();
    await expect400(
      { userId: de.adminId, companyId: de.companyId, filingState: 'DE', annualReport: { filingYear: 2026, years: 2 } },
      'annualReport.years',
      /must be 1/,
    );
  });
});

describe('the user and the company', () => {
  it('ORD-5, TEN-3: unknown or other-tenant user and company are 404 naming their field (ids never leak across tenants)', async () => {
    const { adminId, companyId } = await existingCompany();
    const expect404 = async (body: unknown, field: string, rule: RegExp, env: 'test' | 'live' = 'test') => {
      const res = await tenant.api('POST', '/orders', body, { env });
      expect(res.statusCode, res.body).toBe(404);
      expect(res.json().code).toBe('not_found');
      expect(res.json().errors.map((e: { field: string }) => e.field)).toContain(field);
      expect(res.json().errors.find((e: { field: string }) => e.field === field).message).toMatch(rule);
    };
    await expect404(formationBody('user_00000000000000000000000000', 'DE'), 'userId', /no user/);
    await expect404(
      { userId: adminId, companyId: 'comp_00000000000000000000000000', filingState: 'DE', ein: einObject() },
      'companyId',
      /no company/,
    );
    const other = await t.newTenant('Other Org');
    const foreign = await createCompany(other);
    await expect404(
      { userId: adminId, companyId: foreign.company.id, filingState: 'DE', ein: einObject() },
      'companyId',
      /no company/,
    );
    await expect404({ userId: foreign.user.id, companyId, filingState: 'DE', ein: einObject() }, 'userId', /no user/);
    // The same ids at the live address do not exist either (environments are separate tenants).
    await expect404(
      { userId: adminId, companyId, filingState: 'DE', ein: einObject() },
      'companyId',
      /no company/,
      'live',
    );
  });

  it("TEN-3: a formation for another organization's user or a user of the other environment is 404 naming userId and writes nothing", async () => {
    const other = await t.newTenant('Formation Stranger Org');
    const foreignUser = await newUser(other);
    const liveUser = await newUser(tenant, 'live');
    // Rows of both organizations in both environments: the company, its admin link, the order group, the orders,
    // their history and events, and the ledger.
    const rows = async () => {
      const { rows: found } = await t.ctx.pool.query<{ table: string; n: number }>(
        `SELECT 'companies' AS table, count(*)::int AS n FROM companies WHERE organization_id = ANY($1)
         UNION ALL SELECT 'company_admins', count(*)::int FROM company_admins WHERE organization_id = ANY($1)
         UNION ALL SELECT 'order_groups', count(*)::int FROM order_groups WHERE organization_id = ANY($1)
         UNION ALL SELECT 'orders', count(*)::int FROM orders WHERE organization_id = ANY($1)
         UNION ALL SELECT 'order_status_history', count(*)::int FROM order_status_history WHERE organization_id = ANY($1)
         UNION ALL SELECT 'events', count(*)::int FROM events WHERE organization_id = ANY($1)
         UNION ALL SELECT 'ledger_entries', count(*)::int FROM ledger_entries WHERE organization_id = ANY($1)
         UNION ALL SELECT 'balances', coalesce(sum(balance_cents), 0)::int FROM balances WHERE organization_id = ANY($1)`,
        [[tenant.organizationId, other.organizationId]],
      );
      return Object.fromEntries(found.map((r) => [r.table, r.n]));
    };
    const before = await rows();
    for (const [who, foreignId] of [
      ["another organization's user", foreignUser.id],
      ["the same organization's live user at the test address", liveUser.id],
    ] as const) {
      const body = formationBody(foreignId, 'DE', { extra: { ein: einObject() } });
      const res = await post(body);
      expect(res.statusCode, `${who}: ${res.body}`).toBe(404);
      expect(res.json()).toMatchObject({ code: 'not_found', errors: [{ field: 'userId' }] });
      expect(res.json().errors[0].message, who).toMatch(/no user/);
      expect(await rows(), `${who}: nothing written`).toEqual(before);
    }
    // Control: the tenant's own user forms the same company, which writes each of those rows.
    const own = await post(formationBody(userId, 'DE', { extra: { ein: einObject() } }));
    expect(own.statusCode, own.body).toBe(201);
    const after = await rows();
    for (const table of ['companies', 'company_admins', 'order_groups', 'orders', 'events', 'ledger_entries'])
      expect(after[table], table).toBeGreaterThan(before[table]!);
  });

  it('ORD-5, AUTH-5: 403 when the user is not an admin of the existing company', async () => {
    const { companyId } = await existingCompany();
    const stranger = await newUser(tenant);
    const res = await post({ userId: stranger.id, companyId, filingState: 'DE', ein: einObject() });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ code: 'forbidden' });
    expect(res.json().message).toMatch(/not an admin/);
  });
});

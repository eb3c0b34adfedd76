import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { companyRuleErrors, type CompanyInput } from '../src/modules/companies/company-rules.js';
import { corpFields, createCompany, createUser, llcFields, personOfficer, usAddress } from './factories.js';
import { createTestApp, type TestApp, type TestTenant } from './harness.js';

let t: TestApp;
let tenant: TestTenant;
let userId: string;
beforeAll(async () => {
  t = await createTestApp();
  tenant = await t.newTenant('Companies Co');
  userId = (await createUser(tenant)).id;
});
afterAll(() => t.close());

type Body = Record<string, any>;
const fieldsOf = (res: { json: () => any }): string[] =>
  (res.json().errors ?? []).map((e: { field: string }) => e.field);
const post = (body: Body, on: TestTenant = tenant) => on.api('POST', '/companies', body);
const llc = (overrides: Body = {}) => ({ ...llcFields(), userId, ...overrides });
const corp = (overrides: Body = {}) => ({ ...corpFields(), userId, ...overrides });
const RESPONSE_FIELDS = [
  'createdAt',
  'ein',
  'entityType',
  'fiscalEndMonth',
  'formationDate',
  'formationState',
  'id',
  'legalName',
  'mailingAddress',
  'principalAddress',
  'slug',
  'structureType',
  'taxElection',
  'tradeName',
  'updatedAt',
];

/** Posts the body and expects a 400 naming `field`. */
async function expectInvalid(body: Body, field: string) {
  const res = await post(body);
  expect(res.statusCode, res.body).toBe(400);
  expect(res.json().code).toBe('validation_error');
  expect(fieldsOf(res), res.body).toContain(field);
  return res;
}

describe('POST /companies: happy paths', () => {
  it('creates an LLC and returns exactly the Company response fields plus slug', async () => {
    const res = await post(llc({ tradeName: 'Acme', ein: '12-3456789' }));
    expect(res.statusCode, res.body).toBe(201);
    const c = res.json();
    expect(Object.keys(c).sort()).toEqual(RESPONSE_FIELDS);
    expect(c.id).toMatch(/^comp_[0-9a-z]{26}$/);
    expect(c).toMatchObject({
      legalName: 'Acme Holdings LLC',
      tradeName: 'Acme',
      ein: '12-3456789',
      entityType: 'LLC',
      structureType: 'MEMBER',
      taxElection: null,
      formationDate: '2024-03-01',
      formationState: 'DE',
      principalAddress: usAddress(),
      mailingAddress: usAddress(),
    });
    expect(c).not.toHaveProperty('officers');
    expect(c.slug).toMatch(/^acme-holdings-llc(-\d+)?$/);
  });

  it('defaults fiscalEndMonth to December and returns absent optional fields as null', async () => {
    const res = await post(corp({ legalName: 'Defaults Inc' }));
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({
      fiscalEndMonth: 'December',
      tradeName: null,
      ein: null,
      structureType: null,
      formationDate: null,
      formationState: null,
      taxElection: 'C Corporation',
      entityType: 'CORP',
    });
  });

  it('accepts every rule at its edge: a COMPANY officer, DC, XK, non-US free-text addresses, line2, another month', async () => {
    const kosovo = {
      line1: 'Rruga Nëna Terezë 1',
      line2: 'Floor 2',
      city: 'Prishtina',
      state: 'Prishtina District',
      postalCode: '10000',
      country: 'XK',
    };
    const res = await post(
      corp({
        legalName: 'Edge Cases Inc',
        taxElection: 'S Corporation',
        fiscalEndMonth: 'June',
        formationState: 'DC',
        mailingAddress: kosovo,
        officers: [
          personOfficer({ title: 'CEO', isPrimary: true }),
          {
            type: 'COMPANY',
            companyName: 'Holdco GmbH',
            title: 'Secretary',
            address: { line1: 'Unter den Linden 1', city: 'Berlin', country: 'DE' },
          },
        ],
      }),
    );
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({
      fiscalEndMonth: 'June',
      formationState: 'DC',
      mailingAddress: kosovo,
      taxElection: 'S Corporation',
    });
  });

  it('accepts an LLC whose owner is a Member beside a Manager', async () => {
    const res = await post(
      llc({
        legalName: 'Managed LLC',
        structureType: 'MANAGER',
        officers: [
          personOfficer({ title: 'Manager', isPrimary: true }),
          personOfficer({ title: 'Member', isPrimary: false }),
        ],
      }),
    );
    expect(res.statusCode, res.body).toBe(201);
  });

  it('makes the user an admin of the company (listed under GET /companies?userId=)', async () => {
    const owner = await createUser(tenant);
    const created = (await post(llc({ userId: owner.id, legalName: 'Owned LLC' }))).json();
    const list = await tenant.api('GET', `/companies?userId=${owner.id}`);
    expect(list.statusCode).toBe(200);
    expect(list.json().data.map((c: { id: string }) => c.id)).toEqual([created.id]);
  });
});

describe('POST /companies: company rules', () => {
  const cases: Array<[string, () => Body, string]> = [
    [
      'legalName is required',
      () => {
        const { legalName: _, ...b } = llc();
        return b;
      },
      'legalName',
    ],
    ['legalName must not be empty', () => llc({ legalName: '' }), 'legalName'],
    ['tradeName must not be empty', () => llc({ tradeName: '' }), 'tradeName'],
    [
      'entityType is required',
      () => {
        const { entityType: _, ...b } = llc();
        return b;
      },
      'entityType',
    ],
    ['entityType is LLC or CORP', () => llc({ entityType: 'LP' }), 'entityType'],
    [
      'structureType is required for an LLC',
      () => {
        const { structureType: _, ...b } = llc();
        return b;
      },
      'structureType',
    ],
    ['structureType is refused for a CORP', () => corp({ structureType: 'MEMBER' }), 'structureType'],
    ['structureType is MEMBER or MANAGER', () => llc({ structureType: 'OWNER' }), 'structureType'],
    [
      'taxElection is required for a CORP',
      () => {
        const { taxElection: _, ...b } = corp();
        return b;
      },
      'taxElection',
    ],
    ['taxElection is refused for an LLC', () => llc({ taxElection: 'C Corporation' }), 'taxElection'],
    ['taxElection is C Corporation or S Corporation', () => corp({ taxElection: 'B Corporation' }), 'taxElection'],
    ['fiscalEndMonth is an English month name', () => llc({ fiscalEndMonth: 'Dec' }), 'fiscalEndMonth'],
    ['fiscalEndMonth is capitalised', () => llc({ fiscalEndMonth: 'december' }), 'fiscalEndMonth'],
    ['formationState is one of the listed codes', () => llc({ formationState: 'PR' }), 'formationState'],
    ['formationState is upper case', () => llc({ formationState: 'de' }), 'formationState'],
    ['ein has a hyphen', () => llc({ ein: '123456789' }), 'ein'],
    ['ein has seven digits after the hyphen', () => llc({ ein: '12-345678' }), 'ein'],
    ['formationDate is a date', () => llc({ formationDate: '2024-13-01' }), 'formationDate'],
    ['formationDate is not a timestamp', () => llc({ formationDate: '2024-03-01T00:00:00Z' }), 'formationDate'],
    ['formationDate has no year 0 (PostgreSQL has none)', () => llc({ formationDate: '0000-01-01' }), 'formationDate'],
    [
      'principalAddress is required',
      () => {
        const { principalAddress: _, ...b } = llc();
        return b;
      },
      'principalAddress',
    ],
    [
      'mailingAddress is required',
      () => {
        const { mailingAddress: _, ...b } = llc();
        return b;
      },
      'mailingAddress',
    ],
    [
      'userId is required',
      () => {
        const { userId: _, ...b } = llc();
        return b;
      },
      'userId',
    ],
    ['unknown fields are refused', () => llc({ color: 'blue' }), 'color'],
  ];
  for (const [rule, body, field] of cases) it(`400: ${rule}`, () => expectInvalid(body(), field).then(() => undefined));

  it('404 naming userId for an unknown user, a user of the other environment or of another organization', async () => {
    const liveUser = await createUser(tenant, 'live');
    const otherOrgUser = await createUser(await t.newTenant('Elsewhere'));
    for (const userId of ['user_01hzzzzzzzzzzzzzzzzzzzzzzz', liveUser.id, otherOrgUser.id]) {
      const res = await post(llc({ userId }));
      expect(res.statusCode, res.body).toBe(404);
      expect(res.json().code).toBe('not_found');
      expect(res.json().errors).toEqual([{ field: 'userId', message: expect.stringContaining(userId) }]);
    }
  });
});

describe('POST /companies: address rules', () => {
  const at = (addr: Body) => llc({ principalAddress: addr });
  const cases: Array<[string, Body, string]> = [
    ['line1 is required', at({ city: 'Paris', country: 'FR' }), 'principalAddress.line1'],
    ['line1 must not be empty', at({ line1: '', city: 'Paris', country: 'FR' }), 'principalAddress.line1'],
    ['line2 must not be empty', at(usAddress({ line2: '' })), 'principalAddress.line2'],
    ['city is required', at({ line1: '1 Rue', country: 'FR' }), 'principalAddress.city'],
    ['country is required', at({ line1: '1 Rue', city: 'Paris' }), 'principalAddress.country'],
    ['country is an ISO 3166-1 alpha-2 code', at(usAddress({ country: 'ZZ' })), 'principalAddress.country'],
    [
      'country is two letters, not three',
      at({ line1: '1 Rue', city: 'Paris', country: 'FRA' }),
      'principalAddress.country',
    ],
    ['country is upper case', at({ line1: '1 Rue', city: 'Paris', country: 'fr' }), 'principalAddress.country'],
    [
      'state must not be empty',
      at({ line1: '1 Rue', city: 'Paris', country: 'FR', state: '' }),
      'principalAddress.state',
    ],
    [
      'postalCode must not be empty',
      at({ line1: '1 Rue', city: 'Paris', country: 'FR', postalCode: '' }),
      'principalAddress.postalCode',
    ],
    ['a US state is a two-letter code', at(usAddress({ state: 'Delaware' })), 'principalAddress.state'],
    ['a US state is a real code', at(usAddress({ state: 'XX' })), 'principalAddress.state'],
    ['a US postalCode has five digits', at(usAddress({ postalCode: '1980' })), 'principalAddress.postalCode'],
    ['a US postalCode is not ZIP+4', at(usAddress({ postalCode: '19808-1234' })), 'principalAddress.postalCode'],
    ['unknown address fields are refused', at(usAddress({ county: 'New Castle' })), 'principalAddress.county'],
    [
      'the mailing address follows the same rules',
      llc({ mailingAddress: usAddress({ postalCode: 'ABCDE' }) }),
      'mailingAddress.postalCode',
    ],
  ];
  for (const [rule, body, field] of cases) it(`400: ${rule}`, () => expectInvalid(body, field).then(() => undefined));

  it('accepts US addresses without state or postalCode, as CO-4 makes both optional', async () => {
    const bare = usAddress({ state: undefined, postalCode: undefined });
    const res = await post(
      llc({
        legalName: 'Bare Address LLC',
        principalAddress: bare,
        mailingAddress: usAddress({ postalCode: undefined }),
        officers: [personOfficer({ address: usAddress({ state: undefined }) })],
      }),
    );
    expect(res.statusCode, res.body).toBe(201);
    const company = res.json();
    expect(company.principalAddress).toEqual({ line1: bare.line1, city: bare.city, country: 'US' });
    expect(company.mailingAddress).toEqual({ ...usAddress(), postalCode: undefined, country: 'US' });
    expect(company.mailingAddress).not.toHaveProperty('postalCode');
    const read = await tenant.api('GET', `/companies/${company.id}`);
    expect(read.json().principalAddress).toEqual({ line1: bare.line1, city: bare.city, country: 'US' });
  });
});

describe('POST /companies: officer rules', () => {
  const officers = (...list: Body[]) => llc({ officers: list });
  const cases: Array<[string, Body, string]> = [
    [
      'officers are required',
      (() => {
        const { officers: _, ...b } = llc();
        return b;
      })(),
      'officers',
    ],
    ['at least one officer', officers(), 'officers'],
    ['one officer must be primary', officers(personOfficer({ isPrimary: false })), 'officers'],
    ['only one officer may be primary', officers(personOfficer(), personOfficer({ title: 'Member' })), 'officers'],
    ['type is PERSON or COMPANY', officers(personOfficer({ type: 'TRUST' })), 'officers.0.type'],
    ['a PERSON needs firstName', officers(personOfficer({ firstName: undefined })), 'officers.0.firstName'],
    ['a PERSON needs lastName', officers(personOfficer({ lastName: undefined })), 'officers.0.lastName'],
    ['firstName must not be empty', officers(personOfficer({ firstName: '' })), 'officers.0.firstName'],
    ['a PERSON has no companyName', officers(personOfficer({ companyName: 'X Ltd' })), 'officers.0.companyName'],
    [
      'a COMPANY needs companyName',
      officers({ type: 'COMPANY', title: 'Member', address: usAddress(), isPrimary: true }),
      'officers.0.companyName',
    ],
    [
      'companyName must not be empty',
      officers({ type: 'COMPANY', companyName: '', title: 'Member', address: usAddress(), isPrimary: true }),
      'officers.0.companyName',
    ],
    [
      'a COMPANY has no person names',
      officers({
        type: 'COMPANY',
        companyName: 'X',
        firstName: 'A',
        title: 'Member',
        address: usAddress(),
        isPrimary: true,
      }),
      'officers.0.firstName',
    ],
    [
      'an LLC title is Managing Member, Member or Manager',
      officers(personOfficer(), personOfficer({ title: 'CEO', isPrimary: false })),
      'officers.1.title',
    ],
    ['an LLC has a Member or Managing Member', officers(personOfficer({ title: 'Manager' })), 'officers'],
    ['an officer needs an address', officers(personOfficer({ address: undefined })), 'officers.0.address'],
    [
      'an officer address follows the address rules',
      officers(personOfficer({ address: usAddress({ postalCode: '123' }) })),
      'officers.0.address.postalCode',
    ],
    ['isPrimary is a boolean', officers(personOfficer({ isPrimary: 'yes' })), 'officers.0.isPrimary'],
    ['unknown officer fields are refused', officers(personOfficer({ ssn: '123-45-6789' })), 'officers.0.ssn'],
  ];
  for (const [rule, body, field] of cases) it(`400: ${rule}`, () => expectInvalid(body, field).then(() => undefined));

  it('400: a CORP title is one of the CORP list', () =>
    expectInvalid(corp({ officers: [personOfficer({ title: 'Managing Member' })] }), 'officers.0.title'));
});

describe('POST /companies: every bad field at once', () => {
  it('reports schema and cross-field errors together with dotted paths', async () => {
    const res = await post({
      legalName: '',
      entityType: 'CORP',
      structureType: 'MEMBER',
      ein: '1-2',
      principalAddress: usAddress({ postalCode: '1234' }),
      mailingAddress: { line1: 'x', city: 'y', country: 'QQ' },
      officers: [
        personOfficer({ title: 'Member', isPrimary: false }),
        { type: 'COMPANY', title: 'CEO', address: usAddress({ state: 'Del' }) },
      ],
      userId: 'user_01hzzzzzzzzzzzzzzzzzzzzzzz',
    });
    // Every broken rule at once; the unknown userId (a 404) is reported only once the body itself is valid.
    expect(res.statusCode).toBe(400);
    expect(new Set(fieldsOf(res))).toEqual(
      new Set([
        'legalName',
        'ein',
        'structureType',
        'taxElection',
        'principalAddress.postalCode',
        'mailingAddress.country',
        'officers',
        'officers.0.title',
        'officers.1.companyName',
        'officers.1.address.state',
      ]),
    );
  });

  it('companyRuleErrors prefixes every path (for formation.company in orders)', () => {
    const errors = companyRuleErrors(
      {
        ...llcFields(),
        structureType: undefined,
        officers: [personOfficer({ title: 'CEO' })],
      } as unknown as CompanyInput,
      'formation.company.',
    );
    expect(errors.map((e) => e.field).sort()).toEqual([
      'formation.company.officers',
      'formation.company.officers.0.title',
      'formation.company.structureType',
    ]);
    expect(companyRuleErrors(llcFields() as unknown as CompanyInput)).toEqual([]);
  });
});

describe('slugs and lookups', () => {
  it('gives each company a unique readable slug in the tenant: name, then -2, -3', async () => {
    const own = await t.newTenant('Slugs');
    const owner = await createUser(own);
    const slugs = [];
    for (let i = 0; i < 3; i++)
      slugs.push(
        (await post({ ...llcFields({ legalName: 'Ünïcode & Sons, L.L.C.' }), userId: owner.id }, own)).json().slug,
      );
    expect(slugs).toEqual(['unicode-and-sons-l-l-c', 'unicode-and-sons-l-l-c-2', 'unicode-and-sons-l-l-c-3']);
    const other = await t.newTenant('Other slugs');
    const otherUser = await createUser(other);
    expect(
      (await post({ ...llcFields({ legalName: 'Ünïcode & Sons, L.L.C.' }), userId: otherUser.id }, other)).json().slug,
    ).toBe('unicode-and-sons-l-l-c');
  });

  it('gives concurrent companies of the same name distinct slugs', async () => {
    const own = await t.newTenant('Race');
    const owner = await createUser(own);
    const results = await Promise.all(
      Array.from({ length: 5 }, () =>
        post({ ...llcFields({ legalName: 'Race Condition LLC' }), userId: owner.id }, own),
      ),
    );
    expect(results.map((r) => r.statusCode)).toEqual([201, 201, 201, 201, 201]);
    expect(new Set(results.map((r) => r.json().slug)).size).toBe(5);
  });

  it('finds a company by id and by slug (any case)', async () => {
    const { company } = await createCompany(tenant, 'test', { legalName: 'Lookup Ventures LLC' });
    for (const key of [company.id, company.slug, company.slug.toUpperCase()]) {
      const res = await tenant.api('GET', `/companies/${key}`);
      expect(res.statusCode, key).toBe(200);
      expect(res.json()).toEqual(company);
    }
  });

  it('404 for an unknown id or slug', async () => {
    for (const key of ['comp_01hzzzzzzzzzzzzzzzzzzzzzzz', 'no-such-slug']) {
      const res = await tenant.api('GET', `/companies/${key}`);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ code: 'not_found', message: expect.stringContaining(key) });
    }
  });

  it('keeps test and live apart: a company created with the test key is 404 with the live key', async () => {
    const { company } = await createCompany(tenant, 'test', { legalName: 'Test Only LLC' });
    expect((await tenant.api('GET', `/companies/${company.id}`, undefined, { env: 'live' })).statusCode).toBe(404);
    expect((await tenant.api('GET', `/companies/${company.slug}`, undefined, { env: 'live' })).statusCode).toBe(404);
  });
});

describe('GET /companies', () => {
  it('pages newest first and filters by admin user', async () => {
    const own = await t.newTenant('List');
    const a = await createCompany(own);
    const b = await createCompany(own);
    const c = await createCompany(own);
    await createCompany(own, 'live');
    const first = await own.api('GET', '/companies?limit=2');
    expect(first.json()).toMatchObject({ object: 'list', hasMore: true });
    expect(first.json().data.map((x: { id: string }) => x.id)).toEqual([c.company.id, b.company.id]);
    expect(first.json().data[0]).not.toHaveProperty('officers');
    const second = await own.api('GET', `/companies?limit=2&startingAfter=${b.company.id}`);
    expect(second.json()).toMatchObject({ hasMore: false });
    expect(second.json().data.map((x: { id: string }) => x.id)).toEqual([a.company.id]);
    const ofA = await own.api('GET', `/companies?userId=${a.user.id}`);
    expect(ofA.json().data.map((x: { id: string }) => x.id)).toEqual([a.company.id]);
  });
});

describe('PATCH /companies/{companyIdOrSlug}', () => {
  const patch = (key: string, body: Body) => tenant.api('PATCH', `/companies/${key}`, body);

  it('updates the given fields, keeps the others and the slug', async () => {
    const { company } = await createCompany(tenant, 'test', { legalName: 'Before LLC', tradeName: 'Old' });
    const res = await patch(company.slug, {
      legalName: 'After LLC',
      fiscalEndMonth: 'March',
      ein: '98-7654321',
      structureType: 'MANAGER',
      mailingAddress: { line1: '10 Downing St', city: 'London', postalCode: 'SW1A 2AA', country: 'GB' },
      officers: [personOfficer({ title: 'Member' })],
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(Object.keys(res.json()).sort()).toEqual(RESPONSE_FIELDS);
    expect(res.json()).toMatchObject({
      id: company.id,
      slug: company.slug,
      legalName: 'After LLC',
      tradeName: 'Old',
      fiscalEndMonth: 'March',
      ein: '98-7654321',
      structureType: 'MANAGER',
      formationState: 'DE',
      principalAddress: company.principalAddress,
      mailingAddress: { line1: '10 Downing St', city: 'London', postalCode: 'SW1A 2AA', country: 'GB' },
    });
    expect(new Date(res.json().updatedAt).getTime()).toBeGreaterThanOrEqual(
      new Date(company.updatedAt as string).getTime(),
    );
    expect((await tenant.api('GET', `/companies/${company.id}`)).json()).toEqual(res.json());
  });

  it('moves updatedAt only when a PATCH changes something', async () => {
    const { company } = await createCompany(tenant, 'test', { ...llcFields(), legalName: 'Still LLC' });
    for (const body of [{}, { legalName: 'Still LLC' }, { principalAddress: company.principalAddress }]) {
      const res = await patch(company.id, body);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().updatedAt, JSON.stringify(body)).toBe(company.updatedAt);
    }
    await new Promise((r) => setTimeout(r, 5));
    const changed = await patch(company.id, { legalName: 'Moved LLC' });
    expect(new Date(changed.json().updatedAt).getTime()).toBeGreaterThan(
      new Date(company.updatedAt as string).getTime(),
    );
  });

  it('null clears tradeName, ein, formationDate and formationState', async () => {
    const { company } = await createCompany(tenant, 'test', { tradeName: 'T', ein: '12-3456789' });
    const res = await patch(company.id, { tradeName: null, ein: null, formationDate: null, formationState: null });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ tradeName: null, ein: null, formationDate: null, formationState: null });
  });

  it('accepts entityType unchanged and refuses a change', async () => {
    const { company } = await createCompany(tenant);
    expect((await patch(company.id, { entityType: 'LLC' })).statusCode).toBe(200);
    const res = await patch(company.id, { entityType: 'CORP', taxElection: 'C Corporation' });
    expect(res.statusCode).toBe(400);
    expect(fieldsOf(res)).toContain('entityType');
  });

  it('validates the merged company with the same rules', async () => {
    const { company: llcCo } = await createCompany(tenant);
    const { company: corpCo } = await createCompany(tenant, 'test', { ...corpFields(), legalName: 'Patch Corp' });
    const cases: Array<[string, Body, string]> = [
      [llcCo.id, { taxElection: 'S Corporation' }, 'taxElection'],
      [corpCo.id, { structureType: 'MEMBER' }, 'structureType'],
      [corpCo.id, { officers: [personOfficer({ title: 'Member' })] }, 'officers.0.title'],
      [llcCo.id, { officers: [personOfficer({ title: 'Manager' })] }, 'officers'],
      [llcCo.id, { officers: [] }, 'officers'],
      [llcCo.id, { principalAddress: usAddress({ postalCode: '1234' }) }, 'principalAddress.postalCode'],
      [llcCo.id, { legalName: '' }, 'legalName'],
      [llcCo.id, { ein: '12345' }, 'ein'],
      [llcCo.id, { formationState: 'ZZ' }, 'formationState'],
      [llcCo.id, { fiscalEndMonth: 'Smarch' }, 'fiscalEndMonth'],
      [llcCo.id, { userId }, 'userId'],
      [llcCo.id, { slug: 'mine' }, 'slug'],
    ];
    for (const [id, body, field] of cases) {
      const res = await patch(id, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(fieldsOf(res), JSON.stringify(body)).toContain(field);
    }
    // Nothing was written by the refused requests.
    expect((await tenant.api('GET', `/companies/${llcCo.id}`)).json()).toEqual(llcCo);
  });

  it('reports every bad field of a PATCH at once', async () => {
    const { company } = await createCompany(tenant, 'test', { ...corpFields(), legalName: 'Many Errors Corp' });
    const res = await patch(company.id, {
      structureType: 'MEMBER',
      ein: 'x',
      mailingAddress: usAddress({ state: 'Texas' }),
    });
    expect(new Set(fieldsOf(res))).toEqual(new Set(['structureType', 'ein', 'mailingAddress.state']));
  });

  it('refuses a formationDate in year 0 with a 400 naming the field, and leaves the company as it was', async () => {
    const { company } = await createCompany(tenant, 'test', { ...llcFields(), legalName: 'Year Zero LLC' });
    const res = await patch(company.id, { formationDate: '0000-12-31' });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().errors).toEqual([{ field: 'formationDate', message: 'must be a calendar date as YYYY-MM-DD' }]);
    expect((await tenant.api('GET', `/companies/${company.id}`)).json().formationDate).toBe(company.formationDate);
  });

  it('404 for an unknown company', async () => {
    expect((await patch('comp_01hzzzzzzzzzzzzzzzzzzzzzzz', { legalName: 'X' })).statusCode).toBe(404);
  });
});

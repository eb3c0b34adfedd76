import { Type, type Static } from '@sinclair/typebox';

/*
 * The `ein` product object of POST /orders, designed after IRS Form SS-4 (Application for Employer
 * Identification Number). The public API leaves its fields open beyond a required list covering the responsible
 * party, employee counts and IRS questions (ORD-EIN-1); each field names the SS-4 line it feeds. The entity's legal
 * name, type, addresses, state and closing month come from the company record (SS-4 lines 1, 4-6, 9a-9b, 12),
 * so they are not asked again here.
 */

const literals = <T extends readonly string[]>(values: T, description: string) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    { description },
  );

/** SS-4 line 10: why the entity applies. `other` needs `reasonForApplyingOther`. */
export const EIN_REASONS = [
  'started_new_business',
  'hired_employees',
  'banking_purpose',
  'changed_type_of_organization',
  'purchased_going_business',
  'created_trust',
  'created_pension_plan',
  'other',
] as const;

/** SS-4 line 16: the principal activity check boxes. `other` needs `principalActivityOther`. */
export const EIN_PRINCIPAL_ACTIVITIES = [
  'construction',
  'rental_and_leasing',
  'transportation_and_warehousing',
  'health_care_and_social_assistance',
  'accommodation_and_food_service',
  'wholesale_agent_broker',
  'wholesale_other',
  'retail',
  'real_estate',
  'manufacturing',
  'finance_and_insurance',
  'other',
] as const;

/**
 * ein.responsibleParty: the SS-4 responsible party, and the body of PUT /orders/{orderId}/ein-responsible-party
 * (ORD-EIN-8); `taxId` is write-only (sealed until filed, shown as its last four digits: ORD-EIN-6).
 */
export const ResponsiblePartySchema = Type.Object(
  {
    firstName: Type.String({ minLength: 1, maxLength: 35 }),
    middleName: Type.Optional(Type.String({ minLength: 1, maxLength: 35 })),
    lastName: Type.String({
      minLength: 1,
      maxLength: 35,
      description:
        'As on the Social Security card or ITIN letter; the IRS matches name and number (exception 484 when they differ).',
    }),
    taxIdType: literals(['SSN', 'ITIN'] as const, 'Kind of taxpayer identification number in taxId.'),
    taxId: Type.String({
      pattern: '^\\d{3}-?\\d{2}-?\\d{4}$',
      writeOnly: true,
      description:
        'SS-4 line 7b: SSN or ITIN, nine digits with or without hyphens (123-45-6789). Write-only: never returned in any response and never logged; stored encrypted for the filing team only until the order is filed or cancelled plus the retention period, and shown everywhere else as its last four digits.',
    }),
    title: Type.String({
      minLength: 1,
      maxLength: 60,
      description: "The responsible party's role in the entity, e.g. Managing Member, Member, President, CEO.",
    }),
  },
  {
    additionalProperties: false,
    title: 'EinResponsibleParty',
    description:
      'SS-4 lines 7a-7b: the individual who ultimately owns or controls the entity (a natural person, not an entity).',
  },
);

/** A responsible party as validated by {@link ResponsiblePartySchema}. */
export type ResponsibleParty = Static<typeof ResponsiblePartySchema>;

/** ein.employees: expected employee counts by kind (SS-4 line 13). */
const EinEmployeesSchema = Type.Object(
  {
    agricultural: Type.Integer({ minimum: 0, description: 'Agricultural employees.' }),
    household: Type.Integer({ minimum: 0, description: 'Household employees.' }),
    other: Type.Integer({ minimum: 0, description: 'All other employees.' }),
  },
  {
    additionalProperties: false,
    title: 'EinEmployees',
    description: 'SS-4 line 13: the highest number of employees expected in the next 12 months, by kind (0 for none).',
  },
);

/** ein.irsQuestions: the yes/no questions of the IRS online EIN application. */
const EinIrsQuestionsSchema = Type.Object(
  {
    ownsHeavyHighwayVehicle: Type.Boolean({
      description: 'Owns a highway motor vehicle with a taxable gross weight of 55,000 pounds or more (Form 2290).',
    }),
    involvesGambling: Type.Boolean({ description: 'Involves gambling or wagering (Forms 730 and 11-C).' }),
    filesExciseTaxForm720: Type.Boolean({
      description: 'Needs to file Form 720, Quarterly Federal Excise Tax Return.',
    }),
    sellsAlcoholTobaccoOrFirearms: Type.Boolean({
      description: 'Sells or manufactures alcohol, tobacco or firearms (ATF).',
    }),
  },
  {
    additionalProperties: false,
    title: 'EinIrsQuestions',
    description: 'The yes/no questions of the IRS online EIN application; every one must be answered.',
  },
);

/** The `ein` product object (see the module comment). */
export const EinOrderSchema = Type.Object(
  {
    responsibleParty: ResponsiblePartySchema,
    reasonForApplying: literals(EIN_REASONS, 'SS-4 line 10: reason for applying.'),
    reasonForApplyingOther: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 100,
        description: 'Required when reasonForApplying is other; refused otherwise.',
      }),
    ),
    businessStartDate: Type.Optional(
      Type.String({
        format: 'date',
        description:
          'SS-4 line 11: date the business started or was acquired (YYYY-MM-DD). Default: the formation filing date for a company formed in the same request, else today.',
      }),
    ),
    principalActivity: literals(EIN_PRINCIPAL_ACTIVITIES, 'SS-4 line 16: principal activity.'),
    principalActivityOther: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 100,
        description: 'Required when principalActivity is other; refused otherwise.',
      }),
    ),
    principalProductOrService: Type.String({
      minLength: 1,
      maxLength: 200,
      description:
        'SS-4 line 17: principal line of merchandise sold, specific construction work done, products produced or services provided.',
    }),
    naicsCode: Type.Optional(
      Type.String({
        pattern: '^\\d{6}$',
        description: 'Six-digit NAICS code of the principal activity, when known (exception 486 when wrong).',
      }),
    ),
    employees: EinEmployeesSchema,
    firstWagesDate: Type.Optional(
      Type.String({
        format: 'date',
        description:
          'SS-4 line 15: first date wages are or will be paid (YYYY-MM-DD). Required when any employee count is above 0; refused when all are 0.',
      }),
    ),
    expectsEmploymentTaxUnder1000: Type.Optional(
      Type.Boolean({
        default: false,
        description:
          'SS-4 line 14: expects employment tax liability of $1,000 or less in a full calendar year (files Form 944 instead of 941). Default false.',
      }),
    ),
    previousEin: Type.Optional(
      Type.String({
        pattern: '^\\d{2}-\\d{7}$',
        description: 'SS-4 line 18: an EIN the entity applied for and received before (XX-XXXXXXX), if any.',
      }),
    ),
    irsQuestions: EinIrsQuestionsSchema,
  },
  {
    additionalProperties: false,
    title: 'EinOrder',
    description:
      'EIN application data after IRS Form SS-4. The entity data (name, type, addresses, closing month) come from the company. With formation in the same request the EIN is part of formation tier 2 and costs nothing extra (billing rule 4). Refused with 409 ein_already_requested when the company has an EIN or a non-cancelled EIN order (EIN rule).',
  },
);

import { Type, type Static } from '@sinclair/typebox';
import { DateTime, Nullable } from '../../lib/schemas.js';
import { CompanyFieldsSchema, FORMATION_STATES } from '../companies/company-rules.js';
import { EinOrderSchema } from './ein.schemas.js';

/*
 * POST /orders and POST /orders/quote (ORD-1, ORD-4, ORD-9). The request is a set of
 * per-product objects, not an item array. The schema checks shapes; rules spanning fields and the database
 * are in order-rules.ts and order-checks.ts, and every message names its rule.
 */

/** The order types POST /orders creates, one per product object (ORD-4). */
export const ORDER_TYPES = ['formation', 'ein', 'annual_report', 'registered_agent', 'foreign_qualification'] as const;

/** An order item's orderType: one of ORDER_TYPES, or `dba` (dashboard tier 3 only, DASH-4). */
export type OrderType = (typeof ORDER_TYPES)[number] | 'dba';

/** States where an LLC may be formed expedited (ORD-FORM-5). */
export const EXPEDITED_STATES = ['AZ', 'DE', 'FL', 'NV', 'NY', 'WY'] as const;

/** A two-letter state code as a plain `enum` (one clear Ajv message instead of one per code). */
const stateCode = (description: string) => Type.String({ enum: [...FORMATION_STATES], description });

/** A supplied registered agent (ORD-RA-3): flat address fields, addressState must equal filingState. */
// ORD-RA-3, ORD-RA-6: every field is optional (the contract marks none required); what is given is validated.
const SuppliedAgentSchema = Type.Object(
  {
    type: Type.Optional(Type.Union([Type.Literal('PERSON'), Type.Literal('COMPANY')])),
    firstName: Type.Optional(
      Type.String({
        minLength: 1,
        description: 'Used with PERSON; refused for COMPANY. Missing for a PERSON: flagged.',
      }),
    ),
    lastName: Type.Optional(
      Type.String({
        minLength: 1,
        description: 'Used with PERSON; refused for COMPANY. Missing for a PERSON: flagged.',
      }),
    ),
    companyName: Type.Optional(
      Type.String({
        minLength: 1,
        description: 'Used with COMPANY; refused for PERSON. Missing for a COMPANY: flagged.',
      }),
    ),
    addressStreet: Type.Optional(
      Type.String({
        minLength: 1,
        description: 'Street address in the filing state (no PO boxes: an agent must accept service in person).',
      }),
    ),
    addressCity: Type.Optional(Type.String({ minLength: 1 })),
    addressState: Type.Optional(
      stateCode("Two-letter code; when given it must equal the request's filingState (registeredAgent rule 3)."),
    ),
    addressZip: Type.Optional(Type.String({ pattern: '^\\d{5}(-\\d{4})?$', description: 'ZIP or ZIP+4.' })),
  },
  {
    additionalProperties: false,
    title: 'SuppliedRegisteredAgent',
    description:
      'An agent the company already has, kept instead of ordering registered agent service (registeredAgent rule 3). Refused when registeredAgent service is ordered in the same request. Every field is optional, as the contract lists none as required; a field that is given is validated (type PERSON or COMPANY, the names that type uses and not the others, addressState equal to filingState, addressZip five digits or ZIP+4), and fields not listed here are refused. An agent with details missing is accepted: the order is placed, and the filing team sees which details are missing on the order and asks for them with exception 469 (bad or missing registered agent information) when the filing needs them. A supplied agent also counts as "an agent on file" in its state for later foreign qualifications of the company (foreignQualification rule 1).',
  },
);

/** Fields refused inside formation.company (ORD-FORM-1), kept in the schema so the 400 can name the rule. */
export const FORMATION_EXCLUDED_FIELDS = ['ein', 'tradeName', 'formationDate', 'formationState'] as const;

const refused = (why: string) =>
  Type.Optional(Type.Unknown({ description: `Refused with 400 (formation rule 1): ${why}` }));

/** formation.company: the company fields minus those ORD-FORM-1 excludes. */
const FormationCompanySchema = Type.Object(
  {
    ...Type.Omit(CompanyFieldsSchema, [...FORMATION_EXCLUDED_FIELDS]).properties,
    ein: refused('the EIN comes from an EIN order.'),
    tradeName: refused('a trade name is not part of a formation.'),
    formationDate: refused('the state sets the formation date on filing.'),
    formationState: refused('formationState comes from filingState.'),
  },
  {
    additionalProperties: false,
    title: 'FormationCompany',
    description:
      "The company to form. formationState is the request's filingState; fiscalEndMonth defaults to December; officer and title rules are those of the Officer table (formation rules 1-4).",
  },
);

/** The `formation` product object (ORD-FORM-1 to ORD-FORM-6). */
const FormationSchema = Type.Object(
  {
    expedited: Type.Optional(
      Type.Boolean({
        default: false,
        description:
          'Default false. true only for LLCs in AZ, DE, FL, NV, NY, WY (formation rule 5): the expedited state fee replaces the standard fee and the expedited_formation service charge is billed on top.',
      }),
    ),
    company: FormationCompanySchema,
    alternativeNames: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 200 }), {
        maxItems: 10,
        description: 'Up to 10 fallback names in order of preference, used if the state rejects the legal name.',
      }),
    ),
    registeredAgent: Type.Optional(SuppliedAgentSchema),
  },
  {
    additionalProperties: false,
    title: 'FormationOrder',
    description:
      'Forms a new company in filingState. Needs a registered agent: order registeredAgent in the same request or supply formation.registeredAgent (formation rule 2). Billed at formation_tier_1 wholesale + the state formation fee, or formation_tier_2 when ein is in the same request (billing rules 4, 7).',
  },
);

/** The `registeredAgent` product object: `{isChangeOfAgent}` (ORD-RA-1 to ORD-RA-4). */
const RegisteredAgentOrderSchema = Type.Object(
  {
    isChangeOfAgent: Type.Boolean({
      description:
        'false: a new appointment; true: a change-of-agent filing replacing the current agent, reported with filingType change_of_agent. Ordered together with a formation it is always a new appointment (registeredAgent rule 1): true is accepted there and treated as false.',
    }),
  },
  {
    additionalProperties: false,
    title: 'RegisteredAgentOrder',
    description:
      "Registered agent service in filingState, an annual subscription at registered_agent wholesale, no state fee (billing rule 5). The service's own agent address is used (rule 2). When the company already has active service in filingState the order is a no-op: nothing is charged and the existing order item is returned (rule 4).",
  },
);

/** The `annualReport` product object; every field optional (ORD-AR-1: the contract shows only registeredAgent). */
const AnnualReportOrderSchema = Type.Object(
  {
    // Optional (ORD-AR-1): the contract shows no field of annualReport beyond registeredAgent, so `annualReport: {}`
    // must work.
    filingYear: Type.Optional(
      Type.Integer({
        minimum: 2000,
        maximum: 2100,
        description: 'Year of the report (e.g. 2025); at most next year. Default: the current year (UTC).',
      }),
    ),
    years: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 5,
        description:
          "Consecutive filing years the order covers, from filingYear (default 1). More than 1 only where the filing state lets the company's entity type pay several years at once (Georgia LLCs: up to 3); otherwise 400. Priced per year: the annual_report service and the state fee once for each year. Every covered year shows as filed in the compliance calendar once the order is filed.",
      }),
    ),
    registeredAgent: Type.Optional(SuppliedAgentSchema),
  },
  {
    additionalProperties: false,
    title: 'AnnualReportOrder',
    description:
      "The state annual (or biennial) report in filingState, renewed yearly (subscription). Billed at annual_report wholesale + the state report fee for the company's entity type. registeredAgent: the agent to list when the company keeps its own.",
  },
);

/** The object form of `foreignQualification`: an optional supplied registeredAgent. */
const ForeignQualificationObjectSchema = Type.Object(
  { registeredAgent: Type.Optional(SuppliedAgentSchema) },
  { additionalProperties: false, title: 'ForeignQualificationOrder' },
);

/** The `foreignQualification` product: `true` or the object form (ORD-FQ-1 to ORD-FQ-4). */
const ForeignQualificationSchema = Type.Union([Type.Literal(true), ForeignQualificationObjectSchema], {
  description:
    "Qualifies an existing company (companyId) in filingState. true when nothing is to configure. Needs a registered agent in filingState: ordered in the same request, supplied here, or an agent on file (rule 1). An agent on file is the company's active registered agent service in filingState, or an agent the company supplied for filingState on an earlier order that is not cancelled (a formation, annual report or foreign qualification there). The company needs formationState and entityType (rule 3). 409 qualification_already_paid when a paid, non-cancelled qualification exists in that state (rule 4).",
});

/** Body of POST /orders and POST /orders/quote (ORD-1 to ORD-4). */
export const OrderBody = Type.Object(
  {
    userId: Type.String({
      pattern: '^user_',
      description:
        'The ordering user (prefix user_); must exist in this environment and, for an existing company, be one of its admins (403 otherwise). Becomes the admin of a company formed by this request.',
    }),
    companyId: Type.Optional(
      Type.String({
        pattern: '^comp_',
        description:
          'prefix comp_. Required unless formation is included; refused with formation (the formation creates the company).',
      }),
    ),
    filingState: stateCode(
      `Two-letter code, one of ${FORMATION_STATES.join(' ')}; one state per request (cross-product rule 4).`,
    ),
    formation: Type.Optional(FormationSchema),
    ein: Type.Optional(EinOrderSchema),
    annualReport: Type.Optional(AnnualReportOrderSchema),
    foreignQualification: Type.Optional(ForeignQualificationSchema),
    registeredAgent: Type.Optional(RegisteredAgentOrderSchema),
  },
  {
    additionalProperties: false,
    title: 'OrderRequest',
    description:
      'At least one product object (cross-product rule 1); formation and foreignQualification never together (rule 2).',
  },
);

/** A POST /orders body as validated by OrderBody (rules across fields not yet checked: see order-rules.ts). */
export type OrderBodyInput = Static<typeof OrderBody>;

/** One order item of the POST /orders answer (ORD-4) plus filingType, filingState and amount (dollars). */
export const OrderItemSchema = Type.Object(
  {
    orderId: Type.String({ description: 'prefix order_' }),
    orderType: Type.String({ description: 'formation, ein, annual_report, registered_agent, foreign_qualification' }),
    filingStatus: Type.String({ description: 'submitted for a new order; see States and transitions.' }),
    filingDate: Nullable(Type.String({ format: 'date', description: 'null until filed.' })),
    subscriptionStatus: Nullable(
      Type.String({ description: 'active for registered_agent and annual_report, null for one-time filings.' }),
    ),
    createdAt: DateTime,
    filingType: Nullable(
      Type.String({ description: 'change_of_agent for a change-of-agent registered agent order, else null.' }),
    ),
    filingState: Type.String(),
    amount: Type.Number({
      description:
        'Dollars this order was debited when placed (service + state fee). An existing registered agent item returned by a no-op shows its original amount; nothing is charged again.',
    }),
  },
  { title: 'OrderItem' },
);

/** POST /orders answer: `{companyId, items}`, one item per product ordered (ORD-4). */
export const OrderResultSchema = Type.Object(
  {
    companyId: Type.String({ description: 'The company of every item (the new company for a formation).' }),
    items: Type.Array(OrderItemSchema, { description: 'One per product ordered.' }),
  },
  { title: 'OrderResult' },
);

/** One priced line of a quote: a service line or a state fee, amount in dollars. */
const QuoteLineSchema = Type.Object(
  {
    orderType: Type.String({ description: 'The order item this line belongs to.' }),
    type: Type.String({ description: 'Product type of the price catalogue (formation_tier_1, ein, …) or state_fee.' }),
    description: Type.String(),
    amount: Type.Number({ description: 'Dollars.' }),
    stateFee: Type.Boolean({ description: 'True for a state government fee line.' }),
  },
  { title: 'QuoteLine' },
);

/** POST /orders/quote answer (ORD-9): the priced lines and their total, in dollars; nothing is placed. */
export const QuoteSchema = Type.Object(
  {
    companyId: Nullable(Type.String({ description: 'null when the request forms a new company.' })),
    filingState: Type.String(),
    lines: Type.Array(QuoteLineSchema),
    total: Type.Number({ description: 'Dollars the request would debit from the balance now.' }),
  },
  { title: 'Quote' },
);

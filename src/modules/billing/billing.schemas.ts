import { Type } from '@sinclair/typebox';
import { DateTime, Nullable } from '../../lib/schemas.js';
import { PRODUCT_TYPES } from './pricing.js';
import {
  MAX_OPERATOR_CREDIT_DOLLARS,
  MAX_PRICE_DOLLARS,
  MAX_STATE_FEE_DOLLARS,
  MAX_TEST_CREDIT_DOLLARS,
} from '../../lib/amounts.js';

const Dollars = (description: string) => Type.Number({ description: `${description} In US dollars.` });

/** A price row (PRICE-1, PRICE-2); every amount in dollars. */
export const PriceRowSchema = Type.Object(
  {
    type: Type.String({ enum: [...PRODUCT_TYPES], description: 'Product type.' }),
    name: Type.String(),
    description: Type.String(),
    defaultAmount: Dollars('List price, used at in-app checkout when no retailAmount is set.'),
    retailAmount: Nullable(Dollars('Your custom price for in-app checkout (whole dollars); null until set.')),
    wholesaleAmount: Dollars(
      'What the service operator collects for this product: the debit of API orders and the floor for retailAmount.',
    ),
    enabled: Type.Boolean({
      description: 'False removes a formation tier from dashboard checkout; API orders are never blocked.',
    }),
  },
  { title: 'PriceRow' },
);

/** GET /organization/prices answer: all nine price rows in one unpaginated list. */
export const PriceListSchema = Type.Object(
  {
    object: Type.Literal('list'),
    data: Type.Array(PriceRowSchema, {
      description: 'All nine product types, always in catalogue order; not paginated.',
    }),
    hasMore: Type.Boolean({ description: 'Always false: the price list is never paginated.' }),
  },
  { title: 'PriceList' },
);

/** Path `{type}` of /organization/prices/{type} and the operator's wholesale routes; an unknown type answers 404. */
export const PriceTypeParams = Type.Object({
  type: Type.String({ description: `One of: ${PRODUCT_TYPES.join(', ')}. Any other value answers 404.` }),
});

/** Body of PUT /organization/prices/{type}: retailAmount in whole dollars and/or enabled (PRICE-4, PRICE-5). */
export const UpdatePriceBody = Type.Object(
  {
    retailAmount: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: MAX_PRICE_DOLLARS,
        description: `Whole dollars, at least wholesaleAmount and at most ${MAX_PRICE_DOLLARS}.`,
      }),
    ),
    enabled: Type.Optional(
      Type.Boolean({ description: 'false is accepted only for formation_tier_1/2/3, and one tier must stay enabled.' }),
    ),
  },
  {
    additionalProperties: false,
    title: 'UpdatePriceRequest',
    description: 'At least one of retailAmount and enabled.',
  },
);

/** One ledger entry as GET /balance-transactions shows it (BILL-15); amounts in dollars. */
export const BalanceTransactionSchema = Type.Object(
  {
    id: Type.String({ description: 'prefix txn_' }),
    object: Type.Literal('balance_transaction'),
    type: Type.Union(
      [Type.Literal('credit'), Type.Literal('debit'), Type.Literal('reversal'), Type.Literal('clawback')],
      {
        description:
          'credit: money added (a top-up once paid, a test credit, an operator credit); debit: one priced line of an order; reversal: undoes one debit (order cancelled); clawback: money of a top-up taken back because its payment was disputed or refunded (may take the balance below zero).',
      },
    ),
    amount: Dollars('Signed: positive adds to the balance, negative (debits) takes from it.'),
    balanceAfter: Dollars('The balance right after this entry.'),
    lineType: Nullable(
      Type.String({ description: 'Debits and reversals: the product type of the line, or state_fee.' }),
    ),
    description: Type.String(),
    orderId: Nullable(Type.String({ description: 'The order item this line belongs to (prefix order_).' })),
    reversesTransactionId: Nullable(Type.String({ description: 'Reversals only: the debit reversed.' })),
    reference: Nullable(
      Type.String({
        description:
          'The payment this entry comes from: the top-up (prefix topup_) for its credit, the Stripe dispute (dp_…) or refund for a clawback; null otherwise.',
      }),
    ),
    createdAt: DateTime,
  },
  { title: 'BalanceTransaction' },
);

/** A page of balance transactions, newest first (cursor `startingAfter`). */
export const BalanceTransactionListSchema = Type.Object(
  {
    object: Type.Literal('list'),
    data: Type.Array(BalanceTransactionSchema),
    hasMore: Type.Boolean({ description: 'True when more items follow; pass the last id as startingAfter.' }),
  },
  { title: 'BalanceTransactionList' },
);

/** Body of POST /test_helpers/balance-credits: `{amount}` in dollars (TEN-7, LIM-3). */
export const TestCreditBody = Type.Object(
  {
    amount: Type.Number({
      exclusiveMinimum: 0,
      maximum: MAX_TEST_CREDIT_DOLLARS,
      description: 'Test dollars to add, > 0, at most two decimals.',
    }),
  },
  { additionalProperties: false, title: 'TestCreditRequest' },
);

// Operator (admin) schemas: not part of the integrator OpenAPI document.

/** `live` or `test`: which balance an operator credit goes to. */
const EnvironmentSchema = Type.Union([Type.Literal('live'), Type.Literal('test')]);

/** Body of POST /admin/v1/organizations/{id}/balance-credits: `{environment, amount (dollars), note?}`. */
export const AdminCreditBody = Type.Object(
  {
    environment: EnvironmentSchema,
    amount: Type.Number({
      exclusiveMinimum: 0,
      maximum: MAX_OPERATOR_CREDIT_DOLLARS,
      description: `Dollars to add, > 0, at most two decimals and at most ${MAX_OPERATOR_CREDIT_DOLLARS}.`,
    }),
    note: Type.Optional(
      Type.String({ minLength: 1, maxLength: 500, description: 'Shown as the description of the credit.' }),
    ),
  },
  { additionalProperties: false },
);

/** Path `{id}`: an organization id (prefix org_). */
export const OrgIdParams = Type.Object({ id: Type.String() });
/** Path `{id, type}` of /admin/v1/organizations/{id}/wholesale-prices/{type}. */
export const OrgTypeParams = Type.Object({ id: Type.String(), type: Type.String() });
/** Path `{state}` of /admin/v1/state-fees/{state}: a two-letter state code. */
export const StateParams = Type.Object({ state: Type.String({ minLength: 2, maxLength: 2 }) });

/** Body of PUT /admin/v1/wholesale-prices/{type}: default wholesale and/or list price, whole dollars (PRICE-7, LIM-3). */
export const CatalogPriceBody = Type.Object(
  {
    wholesaleAmount: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: MAX_PRICE_DOLLARS,
        description: `Whole dollars, at most ${MAX_PRICE_DOLLARS}.`,
      }),
    ),
    defaultAmount: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: MAX_PRICE_DOLLARS,
        description: `Whole dollars, at least wholesaleAmount and at most ${MAX_PRICE_DOLLARS}.`,
      }),
    ),
  },
  { additionalProperties: false },
);

/** Body of PUT /admin/v1/organizations/{id}/wholesale-prices/{type}: the organization's floor in whole dollars. */
export const OrgWholesaleBody = Type.Object(
  {
    wholesaleAmount: Type.Number({
      minimum: 0,
      maximum: MAX_PRICE_DOLLARS,
      description: `Whole dollars, at most ${MAX_PRICE_DOLLARS}.`,
    }),
  },
  { additionalProperties: false },
);

const Fee = (d: string) =>
  Type.Optional(Type.Number({ minimum: 0, maximum: MAX_STATE_FEE_DOLLARS, description: `${d}, dollars.` }));

/** Body of PUT /admin/v1/state-fees/{state}: the fees to change, in dollars, plus a `note` on why (BILL-16, LIM-3). */
export const StateFeeBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    llcFormation: Fee('LLC formation fee'),
    corpFormation: Fee('Corporation formation fee'),
    llcForeignQualification: Fee('Foreign LLC qualification fee'),
    corpForeignQualification: Fee('Foreign corporation qualification fee'),
    llcAnnualReport: Fee('LLC annual report fee'),
    corpAnnualReport: Fee('Corporation annual report fee'),
    expeditedFormation: Type.Optional(
      Nullable(
        Type.Number({
          minimum: 0,
          maximum: MAX_STATE_FEE_DOLLARS,
          description: 'Expedited LLC formation fee (replaces the standard fee), dollars; null = not available.',
        }),
      ),
    ),
    note: Type.Optional(
      Type.String({ minLength: 1, maxLength: 1000, description: 'Why the fee changed; kept in source.operatorNotes.' }),
    ),
  },
  { additionalProperties: false },
);

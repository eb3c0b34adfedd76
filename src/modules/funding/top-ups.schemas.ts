import { Type } from '@sinclair/typebox';
import { DateTime, ListOf, Nullable } from '../../lib/schemas.js';
import { MAX_TOP_UP_DOLLARS } from '../../lib/amounts.js';

/** Body of POST /balance/top-ups: `{amount}` in dollars (FUND-1, FUND-3; the configured bounds are checked after). */
export const CreateTopUpBody = Type.Object(
  {
    amount: Type.Number({
      exclusiveMinimum: 0,
      maximum: MAX_TOP_UP_DOLLARS,
      description:
        'Dollars to add to the balance, at most two decimals, between the service’s TOP_UP_MIN and TOP_UP_MAX (10 and 50,000 unless the operator set others).',
    }),
  },
  { additionalProperties: false, title: 'CreateTopUpRequest' },
);

/** A top-up (FUND-1, FUND-4); amounts in dollars. */
export const TopUpSchema = Type.Object(
  {
    id: Type.String({ description: 'prefix topup_' }),
    object: Type.Literal('top_up'),
    amount: Type.Number({ description: 'In US dollars.' }),
    status: Type.Union(
      [
        Type.Literal('pending'),
        Type.Literal('processing'),
        Type.Literal('succeeded'),
        Type.Literal('failed'),
        Type.Literal('expired'),
      ],
      {
        description:
          'pending: waiting to be paid at checkoutUrl; processing: a bank debit is under way (a few business days); succeeded: the amount was credited; failed: not paid, nothing credited; expired: the payment page expired unpaid.',
      },
    ),
    checkoutUrl: Nullable(
      Type.String({
        format: 'uri',
        description:
          'Live, while pending: the Stripe Checkout page where the top-up is paid by card or US bank account. null otherwise (test top-ups are credited at once).',
      }),
    ),
    failureMessage: Nullable(Type.String({ description: 'Why a failed top-up was not credited.' })),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { title: 'TopUp' },
);

/** A page of top-ups, newest first. */
export const TopUpList = ListOf(TopUpSchema);

/** Path `{topUpId}` of GET /balance/top-ups/{topUpId}. */
export const TopUpParams = Type.Object({ topUpId: Type.String({ minLength: 1, description: 'prefix topup_' }) });

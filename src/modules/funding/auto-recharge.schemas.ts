import { Type } from '@sinclair/typebox';
import { MAX_TOP_UP_DOLLARS } from '../../lib/amounts.js';
import { DateTime, Nullable } from '../../lib/schemas.js';

/** Body of PUT /balance/auto-recharge (FUND-32): on/off, threshold and amount in dollars. */
export const UpdateAutoRechargeBody = Type.Object(
  {
    enabled: Type.Boolean({
      description: 'Whether the live balance is recharged. Turning it on needs a saved payment method.',
    }),
    threshold: Type.Number({
      minimum: 0,
      maximum: 10_000_000,
      description:
        'Dollars: a debit that takes the live balance below this amount queues a recharge. 0 to 10,000,000, at most two decimals.',
    }),
    amount: Type.Number({
      exclusiveMinimum: 0,
      maximum: MAX_TOP_UP_DOLLARS,
      description:
        'Dollars added by each recharge, at most two decimals, between the service’s TOP_UP_MIN and TOP_UP_MAX (10 and 50,000 unless the operator set others).',
    }),
  },
  { additionalProperties: false, title: 'UpdateAutoRechargeRequest' },
);

/** A recharge (FUND-33, FUND-37); amounts in dollars. */
const AutoRechargeSchema = Type.Object(
  {
    id: Type.String({ description: 'prefix arc_' }),
    object: Type.Literal('auto_recharge'),
    amount: Type.Number({ description: 'In US dollars.' }),
    threshold: Type.Number({ description: 'The threshold it was queued under, in US dollars.' }),
    status: Type.Union(
      [Type.Literal('queued'), Type.Literal('processing'), Type.Literal('succeeded'), Type.Literal('failed')],
      {
        description:
          'queued: waiting for its next attempt; processing: a bank debit is under way (a few business days); succeeded: credited as the top-up topUpId; failed: three attempts failed, auto-recharge was turned off.',
      },
    ),
    attempts: Type.Integer({ minimum: 0, maximum: 3, description: 'Failed attempts so far (three stop it).' }),
    topUpId: Nullable(
      Type.String({ description: 'The top-up that carried its money (prefix topup_), once succeeded.' }),
    ),
    failureMessage: Nullable(Type.String({ description: 'Why the last attempt failed.' })),
    nextAttemptAt: Nullable(Type.String({ ...DateTime, description: 'When a queued recharge is tried again.' })),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { title: 'AutoRecharge' },
);

/** The organization's auto-recharge (FUND-30, FUND-37); amounts in dollars. */
export const AutoRechargeSettingsSchema = Type.Object(
  {
    object: Type.Literal('auto_recharge_settings'),
    enabled: Type.Boolean({ description: 'Whether the live balance is recharged now.' }),
    threshold: Nullable(Type.Number({ description: 'Dollars; null until set.' })),
    amount: Nullable(Type.Number({ description: 'Dollars; null until set.' })),
    paymentMethodSaved: Type.Boolean({
      description: 'Whether a card or US bank account is saved (through POST /balance/auto-recharge/setup).',
    }),
    disabledReason: Nullable(
      Type.String({
        description:
          'Why the service turned auto-recharge off (three failed attempts); cleared when it is turned on or a method is saved again.',
      }),
    ),
    lastRecharge: Nullable(AutoRechargeSchema),
  },
  { title: 'AutoRechargeSettings' },
);

/** Answer of POST /balance/auto-recharge/setup (FUND-31). */
export const AutoRechargeSetupSchema = Type.Object(
  {
    checkoutUrl: Type.String({
      format: 'uri',
      description:
        'The Stripe Checkout page (setup mode) where an owner saves a card or US bank account; nothing is charged there.',
    }),
  },
  { title: 'AutoRechargeSetup' },
);

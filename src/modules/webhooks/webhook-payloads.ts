import { Type, type TSchema } from '@sinclair/typebox';
import { DateTime, Nullable } from '../../lib/schemas.js';
import { DocumentSchema } from '../documents/documents.schemas.js';

/*
 * The webhook payloads, one schema per event type, for the OpenAPI document's `webhooks` section (OpenAPI 3.1):
 * code generators and the SDK type a verified event from them. The bodies themselves are built where the events
 * are emitted (filing-events.ts, documents.service.ts, webhooks.service.ts, compliance-reminders.ts); tests check every
 * delivered event against these schemas, so the documentation cannot drift from what receivers get.
 */

/** `data` of filing.status_changed (EVT-3): the order's new state. */
const FilingStatusChangedDataSchema = Type.Object(
  {
    orderId: Type.String({ description: 'prefix order_' }),
    companyId: Type.String({ description: 'prefix comp_' }),
    orderType: Type.String({
      description: 'formation, ein, annual_report, registered_agent, foreign_qualification, dba',
    }),
    filingStatus: Type.String({ description: 'submitted, pending, exception, filed or cancelled' }),
    filingDate: Nullable(Type.String({ format: 'date', description: 'Set when filed (YYYY-MM-DD).' })),
    filingType: Nullable(
      Type.String({ description: 'change_of_agent for a change-of-agent registered agent filing, else null.' }),
    ),
    subscriptionStatus: Nullable(
      Type.String({
        description:
          'active, past_due or canceled for registered agent and annual report subscriptions; null for one-time filings.',
      }),
    ),
    exceptionCode: Type.Optional(
      Nullable(
        Type.String({
          description: 'Only when filingStatus is exception: the stable numeric code as a string, e.g. "465".',
        }),
      ),
    ),
    exceptionReason: Type.Optional(
      Nullable(
        Type.String({ description: 'Only when filingStatus is exception: the standard description of the code.' }),
      ),
    ),
    exceptionMessage: Type.Optional(
      Nullable(
        Type.String({
          description: 'Only when filingStatus is exception: free text from the filing team, when given.',
        }),
      ),
    ),
  },
  { title: 'FilingStatusChangedData' },
);

/** `data` of compliance.deadline_approaching and compliance.deadline_missed (CAL-20). */
const ComplianceDeadlineDataSchema = Type.Object(
  {
    companyId: Type.String({ maxLength: 100, description: 'prefix comp_' }),
    jurisdiction: Type.String({
      minLength: 2,
      maxLength: 2,
      description: 'Two-letter code of the state the report is owed to.',
    }),
    kind: Type.String({ maxLength: 20, description: 'annual_report, initial_report or estimated_tax' }),
    dueDate: Type.String({ format: 'date', maxLength: 10, description: 'YYYY-MM-DD' }),
    daysUntilDue: Type.Integer({
      description:
        '60, 30 or 7 (or fewer, when first seen later) for deadline_approaching; negative for deadline_missed.',
    }),
    reportName: Type.String({ maxLength: 200, description: "The state's name for the filing." }),
    orderable: Type.Boolean({
      description: 'True when our annual report product covers it (POST /orders with annualReport).',
    }),
  },
  { title: 'ComplianceDeadlineData' },
);

/** `data` of webhook.test, sent by POST /webhook-endpoints/{id}/test. */
const WebhookTestDataSchema = Type.Object(
  {
    endpointId: Type.String({ description: 'The endpoint tested (prefix we_).' }),
    message: Type.String(),
  },
  { title: 'WebhookTestData' },
);

const Dollars = (description: string) => Type.Number({ description: `${description} In US dollars.` });

/** `data` of balance.top_up_succeeded (FUND-9): the top-up credited and the balance right after. */
const TopUpSucceededDataSchema = Type.Object(
  {
    topUpId: Type.String({ description: 'prefix topup_' }),
    amount: Dollars('The amount credited.'),
    balance: Dollars('The balance right after the credit.'),
    balanceTransactionId: Type.String({ description: 'The credit (prefix txn_).' }),
  },
  { title: 'TopUpSucceededData' },
);

/** `data` of balance.top_up_failed (FUND-9): nothing was credited. */
const TopUpFailedDataSchema = Type.Object(
  {
    topUpId: Type.String({ description: 'prefix topup_' }),
    amount: Dollars('The amount that was asked.'),
    failureMessage: Type.String(),
  },
  { title: 'TopUpFailedData' },
);

/** `data` of balance.top_up_reversed (FUND-13): money of a top-up taken back after a dispute or refund. */
const TopUpReversedDataSchema = Type.Object(
  {
    topUpId: Type.String({ description: 'prefix topup_' }),
    reason: Type.Union([Type.Literal('dispute'), Type.Literal('refund')]),
    reference: Type.String({ description: 'The Stripe dispute (dp_…) or refund the clawback names.' }),
    amount: Dollars('The amount taken back (positive).'),
    balance: Dollars('The balance right after; it may be below zero.'),
    balanceTransactionId: Type.String({ description: 'The clawback (prefix txn_).' }),
  },
  { title: 'TopUpReversedData' },
);

/** `data` of balance.top_up_reinstated (FUND-26): what a dispute took, given back once Stripe closed it won. */
const TopUpReinstatedDataSchema = Type.Object(
  {
    topUpId: Type.String({ description: 'prefix topup_' }),
    reason: Type.Literal('dispute_won'),
    reference: Type.String({ description: 'The Stripe dispute (dp_…) that was won.' }),
    amount: Dollars('The amount given back (positive): what the dispute took.'),
    balance: Dollars('The balance right after.'),
    balanceTransactionId: Type.String({ description: 'The credit (prefix txn_).' }),
  },
  { title: 'TopUpReinstatedData' },
);

/** `data` of balance.low (FUND-16): a debit took the balance below the organization's lowBalanceThreshold. */
const BalanceLowDataSchema = Type.Object(
  {
    balance: Dollars('The balance right after the debit.'),
    threshold: Dollars('The lowBalanceThreshold it went below.'),
    balanceTransactionId: Type.String({ description: 'The last entry of the posting that crossed it (prefix txn_).' }),
  },
  { title: 'BalanceLowData' },
);

/** `data` of balance.auto_recharge_failed (FUND-36): a recharge failed three times and auto-recharge was turned off. */
const AutoRechargeFailedDataSchema = Type.Object(
  {
    autoRechargeId: Type.String({ description: 'prefix arc_' }),
    amount: Dollars('The amount the recharge asked for; nothing was credited.'),
    attempts: Type.Integer({ description: 'Failed attempts (3).' }),
    failureMessage: Type.String({ description: "Why the last attempt failed (Stripe's message)." }),
  },
  { title: 'AutoRechargeFailedData' },
);

const envelope = <T extends TSchema>(type: string, data: T, title: string, description: string) =>
  Type.Object(
    {
      id: Type.String({ description: 'prefix evt_; deduplicate on it' }),
      type: Type.Literal(type),
      createdAt: Type.String({ ...DateTime, description: 'ISO 8601 with milliseconds, UTC' }),
      data,
    },
    { title, description },
  );

/** The envelope of each event type, as POSTed to webhook endpoints and sent by GET /events/stream. */
export const WEBHOOK_EVENT_SCHEMAS = {
  'filing.status_changed': envelope(
    'filing.status_changed',
    FilingStatusChangedDataSchema,
    'FilingStatusChangedEvent',
    'An order changed filingStatus or subscriptionStatus: placed (submitted), with the state (pending), in exception, filed, cancelled; subscription renewals and lapses too.',
  ),
  'document.uploaded': envelope(
    'document.uploaded',
    DocumentSchema,
    'DocumentUploadedEvent',
    'A document arrived for an order or company: filed articles, EIN confirmation, qualification certificate, registered-agent mail. data.fileUrl stays valid 7 days.',
  ),
  'compliance.deadline_approaching': envelope(
    'compliance.deadline_approaching',
    ComplianceDeadlineDataSchema,
    'ComplianceDeadlineApproachingEvent',
    'A state report of a company falls due in 60, 30 or 7 days and no filed or pending annual report order covers it. Sent once per report and threshold.',
  ),
  'compliance.deadline_missed': envelope(
    'compliance.deadline_missed',
    ComplianceDeadlineDataSchema,
    'ComplianceDeadlineMissedEvent',
    'A state report of a company passed its due date yesterday (or within the last week, when first seen later) and no filed or pending annual report order covers it. Sent once per report.',
  ),
  'balance.top_up_succeeded': envelope(
    'balance.top_up_succeeded',
    TopUpSucceededDataSchema,
    'TopUpSucceededEvent',
    'A top-up was paid and its amount credited to the balance (in test mode at once).',
  ),
  'balance.top_up_failed': envelope(
    'balance.top_up_failed',
    TopUpFailedDataSchema,
    'TopUpFailedEvent',
    'A top-up was not paid (a bank debit failed, or a payment had to be refunded); nothing was credited.',
  ),
  'balance.top_up_reversed': envelope(
    'balance.top_up_reversed',
    TopUpReversedDataSchema,
    'TopUpReversedEvent',
    'The payment of a credited top-up was disputed or refunded, and that amount was taken back from the balance, even below zero (orders answer 402 until it is funded again).',
  ),
  'balance.top_up_reinstated': envelope(
    'balance.top_up_reinstated',
    TopUpReinstatedDataSchema,
    'TopUpReinstatedEvent',
    'A dispute of a top-up was closed in your favour: what the dispute took back is credited to the balance again.',
  ),
  'balance.low': envelope(
    'balance.low',
    BalanceLowDataSchema,
    'BalanceLowEvent',
    "A debit took the balance from at or above the organization's lowBalanceThreshold to below it. Sent once per crossing: again only after the balance has been at or above the threshold.",
  ),
  'balance.auto_recharge_failed': envelope(
    'balance.auto_recharge_failed',
    AutoRechargeFailedDataSchema,
    'AutoRechargeFailedEvent',
    'An automatic recharge of the live balance failed three times (a declined card, a failed bank debit): nothing was credited, auto-recharge was turned off until it is turned on again or a payment method is saved again, and the owners were emailed. A successful recharge is a top-up: balance.top_up_succeeded.',
  ),
  'webhook.test': envelope(
    'webhook.test',
    WebhookTestDataSchema,
    'WebhookTestEvent',
    'Sent only by POST /webhook-endpoints/{id}/test, to that endpoint only; it cannot be subscribed to.',
  ),
} as const;

/**
 * The OpenAPI 3.1 `webhooks` object: one POST per event type with its envelope as the request body. What the
 * receiver must answer and how the request is signed are stated once here, as they hold for every type.
 */
export function openApiWebhooks(): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(WEBHOOK_EVENT_SCHEMAS).map(([type, schema]) => [
      type,
      {
        post: {
          operationId: `${type.replace(/[._](\w)/g, (_m, c: string) => c.toUpperCase())}Webhook`,
          tags: ['Webhook Endpoints'],
          summary: `${type} event`,
          description: `${schema.description} POSTed to every enabled endpoint subscribed to ${type}, with the header \
Service-Signature: t={unix seconds},v1={hex HMAC-SHA256 of "{t}.{raw body}" keyed with the endpoint's whsec_ secret} \
(two v1 entries during the 24 hours after a secret rotation, the new secret's first), and Service-Event-Id (the event id). Verify the signature on the raw body before parsing it (the SDK's webhooks.constructEvent).`,
          security: [],
          requestBody: { required: true, content: { 'application/json': { schema } } },
          responses: {
            200: {
              description:
                'Any 2xx answer within the timeout acknowledges the event; anything else is retried with backoff (410 Gone disables the endpoint).',
            },
          },
        },
      },
    ]),
  );
}

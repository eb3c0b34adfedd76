import { Type } from '@sinclair/typebox';
import { ListOf, PageQuery } from '../../lib/schemas.js';
import { LISTED_EVENT_TYPES } from './events.service.js';

/** The envelope of every event, as webhooks deliver it (EVT-1). */
export const EventSchema = Type.Object(
  {
    id: Type.String({ description: 'prefix evt_; deduplicate on it' }),
    type: Type.String({ description: LISTED_EVENT_TYPES.join(', ') }),
    createdAt: Type.String({
      format: 'date-time',
      description: 'ISO 8601 with milliseconds, UTC, e.g. 2025-01-31T17:04:05.123Z',
    }),
    data: Type.Object(
      {},
      {
        additionalProperties: true,
        description:
          'filing.status_changed: orderId, companyId, orderType, filingStatus, filingDate, filingType, subscriptionStatus, and exceptionCode, exceptionReason, exceptionMessage when filingStatus is exception. document.uploaded: orderId, companyId, documentId, documentType, fileName, fileType, fileUrl (signed, valid 7 days from the event), createdAt. compliance.deadline_approaching and compliance.deadline_missed: companyId, jurisdiction, kind, dueDate, daysUntilDue, reportName, orderable. balance.top_up_succeeded: topUpId, amount, balance, balanceTransactionId. balance.top_up_failed: topUpId, amount, failureMessage. balance.top_up_reversed: topUpId, reason (dispute or refund), reference, amount, balance, balanceTransactionId. balance.top_up_reinstated: topUpId, reason (dispute_won), reference, amount, balance, balanceTransactionId. balance.low: balance, threshold, balanceTransactionId. balance.auto_recharge_failed: autoRechargeId, amount, attempts, failureMessage. webhook.test (sent by POST /webhook-endpoints/{id}/test, listed but never subscribable): message, endpointId.',
      },
    ),
  },
  { title: 'Event' },
);

/** Path `{eventId}` of GET /events/{eventId} (EVT-6). */
export const EventParams = Type.Object({ eventId: Type.String({ minLength: 1 }) });

/** Query of GET /events: cursor pagination plus optional `type` and `orderId` filters. */
export const ListEventsQuery = Type.Composite(
  [
    PageQuery,
    Type.Object({
      type: Type.Optional(
        Type.Union(
          LISTED_EVENT_TYPES.map((t) => Type.Literal(t)),
          { description: 'Only events of this type.' },
        ),
      ),
      orderId: Type.Optional(Type.String({ minLength: 1, description: 'Only events about this order.' })),
    }),
  ],
  { additionalProperties: false },
);

/** A page of events, newest first. */
export const EventList = ListOf(EventSchema);

import { Type } from '@sinclair/typebox';
import { DateTime, Nullable } from '../../lib/schemas.js';
import { DocumentSchema } from '../documents/documents.schemas.js';
import { EXCEPTION_CODES, EXCEPTION_REASONS } from '../orders/exception-codes.js';
import { FILING_STATUSES } from '../orders/order-statuses.js';
import { MAX_EXCEPTION_MESSAGE } from './transitions.js';

const codeList = EXCEPTION_CODES.map((c) => `- \`${c}\`: ${EXCEPTION_REASONS[c]}`).join('\n');

/** A filingStatus in requests; its description states the transition table (FIL-2). */
const FilingStatusSchema = Type.Union(
  FILING_STATUSES.map((s) => Type.Literal(s)),
  {
    description:
      'submitted -> pending; any non-terminal -> exception, filed or cancelled; exception -> submitted or pending (resume). filed and cancelled are terminal (409).',
  },
);

// A string such as "465", as the code table writes it (FIL-4, FIL-12); the bare number 465 is accepted too and reported
// as the string. Checked against the code table by planTransition, which names the code when it is not one.
const ExceptionCode = Type.Union([Type.String({ minLength: 1, maxLength: 8 }), Type.Integer()], {
  description: `Required when filingStatus is exception. One of (a string such as "465"; the number 465 is accepted too):\n${codeList}`,
});
const ExceptionMessage = Type.String({
  minLength: 1,
  maxLength: MAX_EXCEPTION_MESSAGE,
  description: 'Free text shown to the integrator with the exception.',
});
const FilingDate = Type.String({
  pattern: '^\\d{4}-\\d{2}-\\d{2}$',
  description:
    'Only with filed: the date the state accepted the filing (YYYY-MM-DD, not in the future). Default: today (UTC).',
});

const Ein = Type.String({
  pattern: '^\\d{2}-\\d{7}$',
  description:
    'Only when an EIN order is filed: the EIN the IRS assigned (12-3456789), set on the company. Required in live; in test a fake 00-NNNNNNN is made when omitted.',
});

/** Body of the operators' transition (FIL-11). */
export const TransitionBody = Type.Object(
  {
    filingStatus: FilingStatusSchema,
    exceptionCode: Type.Optional(ExceptionCode),
    exceptionMessage: Type.Optional(ExceptionMessage),
    filingDate: Type.Optional(FilingDate),
    ein: Type.Optional(Ein),
  },
  { additionalProperties: false },
);

/** Body of the test helper advance (TEN-5). */
export const AdvanceBody = Type.Object(
  {
    filingStatus: FilingStatusSchema,
    exceptionCode: Type.Optional(ExceptionCode),
    exceptionMessage: Type.Optional(ExceptionMessage),
    filingDate: Type.Optional(FilingDate),
    ein: Type.Optional(Ein),
  },
  { additionalProperties: false, title: 'AdvanceOrderRequest' },
);

/** Path `{orderId}` of the operator transition and order routes and of the test-helper advance. */
export const OrderIdParams = Type.Object({ orderId: Type.String({ minLength: 1 }) });

/** The order as integrators see it after a test-helper move (the Order item plus the exception fields). */
export const OrderStatusSchema = Type.Object(
  {
    orderId: Type.String(),
    companyId: Type.String(),
    orderType: Type.String(),
    filingStatus: Type.String(),
    filingDate: Nullable(Type.String({ format: 'date' })),
    filingType: Nullable(Type.String()),
    subscriptionStatus: Nullable(Type.String()),
    exceptionCode: Nullable(Type.String()),
    exceptionReason: Nullable(Type.String()),
    exceptionMessage: Nullable(Type.String()),
    eventId: Type.String({ description: 'Id of the filing.status_changed event this move emitted.' }),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { title: 'AdvancedOrder' },
);

/** One status-history row of an order (operators only); filingDate YYYY-MM-DD, createdAt ISO 8601. */
const HistoryEntrySchema = Type.Object({
  fromStatus: Nullable(Type.String()),
  toStatus: Type.String(),
  exceptionCode: Nullable(Type.String()),
  exceptionMessage: Nullable(Type.String()),
  filingDate: Nullable(Type.String()),
  actor: Type.String({ description: 'api, dashboard, test_helper, cli, operator, operator:<id>' }),
  createdAt: DateTime,
});

/** The operators' view of an order (admin API, console, CLI). Money in dollars. */
export const AdminOrderSchema = Type.Object({
  orderId: Type.String(),
  organizationId: Type.String(),
  environment: Type.String(),
  companyId: Type.String(),
  userId: Type.String(),
  orderType: Type.String(),
  filingState: Type.String(),
  filingStatus: Type.String(),
  filingType: Nullable(Type.String()),
  filingDate: Nullable(Type.String()),
  subscriptionStatus: Nullable(Type.String()),
  exceptionCode: Nullable(Type.String()),
  exceptionReason: Nullable(Type.String()),
  exceptionMessage: Nullable(Type.String()),
  billing: Type.String(),
  amount: Type.Number({ description: 'dollars charged for this order' }),
  createdAt: DateTime,
  updatedAt: DateTime,
  companyLegalName: Type.Optional(Type.String()),
  organizationName: Type.Optional(Type.String()),
  history: Type.Optional(Type.Array(HistoryEntrySchema)),
  documents: Type.Optional(Type.Array(DocumentSchema)),
});

/** Query of GET /admin/v1/orders: filters plus `limit` (1-500, default 100) and `startingAfter`; oldest first. */
export const AdminOrderListQuery = Type.Object(
  {
    status: Type.Optional(FilingStatusSchema),
    state: Type.Optional(Type.String({ pattern: '^[A-Z]{2}$' })),
    orderType: Type.Optional(Type.String({ minLength: 1 })),
    environment: Type.Optional(Type.Union([Type.Literal('live'), Type.Literal('test')])),
    organizationId: Type.Optional(Type.String({ minLength: 1 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
    startingAfter: Type.Optional(
      Type.String({ minLength: 1, description: 'Last orderId of the previous page (the queue is oldest first).' }),
    ),
  },
  { additionalProperties: false },
);

/** A page of AdminOrderSchema rows, oldest first (the filing team's queue order). */
export const AdminOrderList = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(AdminOrderSchema),
  hasMore: Type.Boolean(),
});

import { Type } from '@sinclair/typebox';
import { DateTime } from '../../lib/schemas.js';
import { BalanceTransactionSchema } from '../billing/billing.schemas.js';

/** Path `{month}` of GET /balance/statements/{month} (FUND-22): a calendar month in UTC, not after the current one. */
export const StatementParams = Type.Object({
  month: Type.String({
    pattern: '^\\d{4}-(0[1-9]|1[0-2])$',
    description:
      'The calendar month as YYYY-MM, in UTC (2000-01 up to the current month). A later month answers 400 naming `month`.',
    examples: ['2026-03'],
  }),
});

/** Query of GET /balance/statements/{month}: `format` json (default) or csv (FUND-21). */
export const StatementQuery = Type.Object(
  {
    format: Type.Optional(
      Type.Union([Type.Literal('json'), Type.Literal('csv')], {
        description:
          'json (the default) or csv. Without it, a request whose Accept header names text/csv (and not application/json) gets the CSV.',
      }),
    ),
  },
  { additionalProperties: false },
);

/** A monthly balance statement (FUND-21); amounts in dollars. */
export const BalanceStatementSchema = Type.Object(
  {
    object: Type.Literal('balance_statement'),
    month: Type.String({ description: 'YYYY-MM (UTC).' }),
    environment: Type.Union([Type.Literal('live'), Type.Literal('test')], {
      description: 'The balance of this environment (the API key’s).',
    }),
    currency: Type.Literal('usd'),
    periodStart: { ...DateTime, description: 'The first instant of the month (UTC), included.' },
    periodEnd: { ...DateTime, description: 'The first instant of the next month (UTC), excluded.' },
    final: Type.Boolean({
      description: 'true once the month has ended; false for the current month, whose statement is the month so far.',
    }),
    openingBalance: Type.Number({ description: 'Dollars: the sum of every balance transaction before periodStart.' }),
    totalCredits: Type.Number({
      description: 'Dollars: the sum of the month’s positive transactions (credits, top-ups, reversals).',
    }),
    totalDebits: Type.Number({
      description: 'Dollars, positive: the sum of the month’s negative transactions (debits, clawbacks).',
    }),
    closingBalance: Type.Number({
      description:
        'Dollars: openingBalance + totalCredits - totalDebits, the sum of every balance transaction before periodEnd (so far, for the current month). May be below zero after a clawback.',
    }),
    transactions: Type.Array(BalanceTransactionSchema, {
      description:
        'Every balance transaction of the month, oldest first, each with its order (`orderId`) or payment (`reference`: a top-up, dispute or refund).',
    }),
  },
  { title: 'BalanceStatement' },
);

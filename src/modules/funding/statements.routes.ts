import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { ApiPluginOptions } from '../../context.js';
import { operation, operationErrors } from '../../lib/api-operations.js';
import { BalanceStatementSchema, StatementParams, StatementQuery } from './statements.schemas.js';
import { balanceStatement } from './statements.service.js';
import { statementCsvLines, statementFileName, statementView } from './statements.views.js';

/**
 * Whether a statement request asks for CSV (FUND-21): `format` decides; without it, an Accept header naming text/csv
 * and not application/json.
 */
function wantsCsv(format: 'json' | 'csv' | undefined, accept: string | undefined): boolean {
  if (format) return format === 'csv';
  const a = (accept ?? '').toLowerCase();
  return a.includes('text/csv') && !a.includes('application/json');
}

/** GET /balance/statements/{month}: the month's balance statement, JSON or CSV (FUND-21, FUND-22). */
export const statementRoutes: FastifyPluginAsyncTypebox<ApiPluginOptions> = async (app, { ctx }) => {
  app.get(
    '/balance/statements/:month',
    {
      schema: {
        ...operation('getBalanceStatement'),
        summary: 'Get a monthly balance statement',
        description:
          "The statement of one calendar month (UTC) of the key's environment: the opening balance, every balance transaction of the month with its order or payment, and the closing balance, which is always the sum of every transaction before the month's end. The current month answers the month so far (`final: false`); a later month, or a malformed one, answers 400 naming `month`. `format=csv` (or `Accept: text/csv`) answers the same statement as a CSV file: a header row, an `opening_balance` row, one row per transaction and a `closing_balance` row, amounts in dollars with two decimals.",
        params: StatementParams,
        querystring: StatementQuery,
        response: {
          200: Type.Unsafe({
            description: 'The statement, as JSON or (format=csv, or Accept: text/csv) as CSV.',
            content: {
              'application/json': { schema: BalanceStatementSchema },
              'text/csv': {
                schema: Type.String({
                  description:
                    'id,createdAt,type,lineType,description,orderId,reference,amount,balanceAfter,currency; CRLF line ends.',
                }),
              },
            },
          }),
          ...operationErrors('getBalanceStatement'),
        },
      },
    },
    async (request, reply) => {
      const statement = await balanceStatement(ctx.pool, request.tenant, request.params.month);
      if (!wantsCsv(request.query.format, request.headers.accept)) return statementView(statement);
      return reply
        .header('content-type', 'text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="${statementFileName(statement)}"`)
        .header('cache-control', 'no-store')
        .send(statementCsvLines(statement).join(''));
    },
  );
};

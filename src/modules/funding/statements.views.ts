import { csvText } from '../../lib/csv.js';
import { centsToDecimalString, centsToDollars } from '../../lib/money.js';
import { balanceTransactionView } from '../billing/billing.views.js';
import type { LedgerEntryRow } from '../billing/ledger.js';
import type { BalanceStatement } from './statements.service.js';

/** A statement as GET /balance/statements/{month} answers it in JSON (FUND-21): dollars, dates in ISO 8601 UTC. */
export function statementView(s: BalanceStatement) {
  return {
    object: 'balance_statement' as const,
    month: s.month,
    environment: s.tenant.environment,
    currency: 'usd' as const,
    periodStart: s.periodStart.toISOString(),
    periodEnd: s.periodEnd.toISOString(),
    final: s.final,
    openingBalance: centsToDollars(s.openingCents),
    totalCredits: centsToDollars(s.creditsCents),
    totalDebits: centsToDollars(s.debitsCents),
    closingBalance: centsToDollars(s.closingCents),
    transactions: s.entries.map(balanceTransactionView),
  };
}

/** The header of a statement's CSV (FUND-21). */
const STATEMENT_CSV_HEADER =
  'id,createdAt,type,lineType,description,orderId,reference,amount,balanceAfter,currency\r\n';

const line = (cells: string[]) => `${cells.join(',')}\r\n`;

function entryLine(e: LedgerEntryRow): string {
  return line([
    e.id,
    e.created_at.toISOString(),
    e.type,
    csvText(e.line_type),
    csvText(e.description),
    e.order_id ?? '',
    csvText(e.reference ?? null),
    centsToDecimalString(Number(e.amount_cents)),
    centsToDecimalString(Number(e.balance_after_cents)),
    'USD',
  ]);
}

/**
 * A statement as CSV lines (FUND-21), each ending in CRLF: the header; an `opening_balance` row dated at the period's
 * start; one row per ledger entry (amounts in dollars with two decimals, RFC 4180 quoting, formula-looking text
 * prefixed with an apostrophe); a `closing_balance` row dated at the period's end (or now, for the month under way).
 * The balance rows carry the balance in `balanceAfter` and leave `amount` empty.
 */
export function statementCsvLines(s: BalanceStatement, now: Date = new Date()): string[] {
  const balanceRow = (type: string, at: Date, description: string, cents: number) =>
    line(['', at.toISOString(), type, '', description, '', '', '', centsToDecimalString(cents), 'USD']);
  return [
    STATEMENT_CSV_HEADER,
    balanceRow(
      'opening_balance',
      s.periodStart,
      `Opening balance ${s.month} (${s.tenant.environment})`,
      s.openingCents,
    ),
    ...s.entries.map(entryLine),
    balanceRow(
      'closing_balance',
      s.final ? s.periodEnd : now,
      `${s.final ? 'Closing balance' : 'Balance so far'} ${s.month} (${s.tenant.environment})`,
      s.closingCents,
    ),
  ];
}

/** The file name a statement downloads as: `balance-statement-<environment>-<YYYY-MM>.csv`. */
export function statementFileName(s: BalanceStatement): string {
  return `balance-statement-${s.tenant.environment}-${s.month}.csv`;
}

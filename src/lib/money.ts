/**
 * Money is integer cents inside the service and dollars (at most two decimals) at the API edge
 * (API-5). These are the only conversions.
 */
export type Cents = number;

/**
 * 12.5 -> 1250. Throws RangeError for amounts with more than two decimals or outside the safe range. The decimals are
 * counted on the number as JSON wrote it (its shortest decimal form: 0.29, not 0.28999999999999998), so 103.7500000001
 * is refused although it lies within a millionth of a cent of 103.75.
 */
export function dollarsToCents(dollars: number): Cents {
  const cents = Math.round(dollars * 100);
  if (!Number.isSafeInteger(cents) || !/^-?\d+(\.\d{1,2})?$/.test(String(dollars))) {
    throw new RangeError(`${dollars} is not a dollar amount with at most two decimals`);
  }
  return cents;
}

/** 1250 -> 12.5 (a JSON number of dollars). Accepts bigint-as-string from PostgreSQL. */
export function centsToDollars(cents: Cents | string | bigint): number {
  return Number(cents) / 100;
}

/** A display string, e.g. 1250 -> "$12.50". */
export function formatCents(cents: Cents): string {
  const sign = cents < 0 ? '-' : '';
  return `${sign}$${(Math.abs(cents) / 100).toFixed(2).replace(/\B(?=(\d{3})+(?!\d))/g, ',')}`;
}

/**
 * A dollar amount (a JSON number as the API answers it) as a display string for the console, the dashboard and
 * the CLI, e.g. 1234.5 -> "$1,234.50"; null -> '—'. @throws RangeError for more than two decimals (dollarsToCents).
 */
export function formatDollars(dollars: number | null): string {
  return dollars === null ? '—' : formatCents(dollarsToCents(dollars));
}

/** Cents as a plain two-decimal number for form fields and messages, without sign grouping or '$': 150000 -> "1500.00". */
export function centsToDecimalString(cents: Cents): string {
  return (cents / 100).toFixed(2);
}

import { ValidationError } from './errors.js';
import { dollarsToCents } from './money.js';

/** Highest retail, list or wholesale price, in whole dollars (LIM-3): far above any filing's price, far below overflow. */
export const MAX_PRICE_DOLLARS = 100_000;
/** Highest state fee, in dollars (LIM-3). */
export const MAX_STATE_FEE_DOLLARS = 100_000;
/** Largest single operator credit, in dollars (LIM-3), however it is made (admin API, console, CLI). */
export const MAX_OPERATOR_CREDIT_DOLLARS = 10_000_000;
/** Highest TOP_UP_MAX accepted, in dollars (LIM-3, FUND-3): what one Checkout Session may reasonably collect. */
export const MAX_TOP_UP_DOLLARS = 1_000_000;
/** Largest single test-helper credit, in dollars (LIM-3, TEN-7). */
export const MAX_TEST_CREDIT_DOLLARS = 1_000_000;

/**
 * Converts a dollar amount from a request to cents, naming `field` when it is not acceptable.
 * `whole`: prices are whole dollars (PRICE-4); otherwise at most two decimals (API-5). `positive`: more than 0.
 * `max`: the highest amount accepted, in dollars (LIM-3), so every way in (API, console, CLI) has the same bound.
 * @throws ValidationError on `field`.
 */
export function requestDollarsToCents(
  field: string,
  dollars: number,
  opts: { whole?: boolean; positive?: boolean; max?: number } = {},
): number {
  if (opts.whole && !Number.isInteger(dollars)) {
    throw new ValidationError([{ field, message: `must be whole dollars (no cents), got ${dollars}` }]);
  }
  if (opts.max !== undefined && dollars > opts.max) {
    throw new ValidationError([{ field, message: `must be at most ${opts.max.toLocaleString('en-US')} dollars` }]);
  }
  let cents: number;
  try {
    cents = dollarsToCents(dollars);
  } catch {
    throw new ValidationError([
      { field, message: `must be a dollar amount with at most two decimals, got ${dollars}` },
    ]);
  }
  if (cents < 0 || (opts.positive && cents === 0)) {
    throw new ValidationError([{ field, message: opts.positive ? 'must be greater than 0' : 'must be 0 or more' }]);
  }
  return cents;
}

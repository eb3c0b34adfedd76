import { ValidationError } from '../../lib/errors.js';
import { dollarsToCents } from '../../lib/money.js';

/**
 * Converts a dollar amount from a request to cents, naming `field` when it is not acceptable.
 * `whole`: prices are whole dollars (spec "PUT /organization/prices/{type}" rule 2); otherwise at most two
 * decimals (ARCHITECTURE.md "Money"). @throws ValidationError.
 */
export function requestDollarsToCents(field: string, dollars: number, opts: { whole?: boolean; positive?: boolean } = {}): number {
  if (opts.whole && !Number.isInteger(dollars)) {
    throw new ValidationError([{ field, message: `must be whole dollars (no cents), got ${dollars}` }]);
  }
  let cents: number;
  try {
    cents = dollarsToCents(dollars);
  } catch {
    throw new ValidationError([{ field, message: `must be a dollar amount with at most two decimals, got ${dollars}` }]);
  }
  if (cents < 0 || (opts.positive && cents === 0)) {
    throw new ValidationError([{ field, message: opts.positive ? 'must be greater than 0' : 'must be 0 or more' }]);
  }
  return cents;
}

import { ValidationError } from './errors.js';
import { MAX_CURSOR_LENGTH } from './schemas.js';

/** A Stripe-style page: newest first, `hasMore` when another page follows. */
export interface Page<T> {
  object: 'list';
  data: T[];
  hasMore: boolean;
}

/** Query parameters of every list endpoint. */
export interface PageParams {
  limit?: number;
  startingAfter?: string;
}

/**
 * Builds a page from rows fetched with `LIMIT limit + 1` (ordered by id descending; ids are time-sortable).
 * @param rows up to limit + 1 rows; @param map row -> API object.
 */
export function toPage<R, T>(rows: R[], limit: number, map: (row: R) => T): Page<T> {
  return { object: 'list', data: rows.slice(0, limit).map(map), hasMore: rows.length > limit };
}

/** Spellings of the cursor parameter other clients use (Stripe's `starting_after`, a generic `cursor`). */
const CURSOR_ALIASES = ['starting_after', 'cursor'] as const;

/**
 * A `preValidation` hook for list routes: turns `?starting_after=` or `?cursor=` into `startingAfter` before
 * the (strict) query schema sees it, so integrators used to either spelling page without a 400.
 * @throws ValidationError naming the spelling sent when its value cannot be a cursor (API-7: the error names the
 * parameter the client sent, not the one it was turned into).
 */
export async function acceptCursorAliases(request: { query: unknown }): Promise<void> {
  const query = request.query;
  if (typeof query !== 'object' || query === null) return;
  for (const alias of CURSOR_ALIASES) {
    const value: unknown = Reflect.get(query, alias);
    if (value === undefined) continue;
    if (typeof value !== 'string' || value.length < 1 || value.length > MAX_CURSOR_LENGTH)
      throw new ValidationError([
        {
          field: alias,
          message: `must be the id of the last item of the previous page, once (1 to ${MAX_CURSOR_LENGTH} characters)`,
        },
      ]);
    if (Reflect.get(query, 'startingAfter') === undefined) Reflect.set(query, 'startingAfter', value);
    Reflect.deleteProperty(query, alias);
  }
}

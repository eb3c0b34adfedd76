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

/*
 * Filters of the server-rendered lists (the portal's and the console's): query parameters read leniently, each bad
 * value named beside its field and not applied, and the keyset cursor of the next page.
 */
import { isId } from './ids.js';

/** A page's query string, as Fastify parses it. */
export type Query = Record<string, string | string[] | undefined>;

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** A query parameter as one trimmed string ('' when absent; the first of repeated ones). */
export function param(query: Query, name: string): string {
  const v = query[name];
  return (Array.isArray(v) ? (v[0] ?? '') : (v ?? '')).trim().slice(0, 200);
}

/** A filter's problems by field name, each shown beside its field; a filter with a problem is not applied. */
export type FieldProblems = Record<string, string>;

/** 'YYYY-MM-DD' of a real day, else undefined with a problem recorded for `field`. */
function day(query: Query, field: string, problems: FieldProblems): string | undefined {
  const v = param(query, field);
  if (!v) return undefined;
  const d = new Date(`${v}T00:00:00Z`);
  if (DAY.test(v) && !Number.isNaN(d.getTime()) && d.toISOString().startsWith(v)) return v;
  problems[field] = 'must be a date such as 2026-01-31';
  return undefined;
}

/** One of `allowed`, else undefined (with a problem for a value that is not). */
export function oneOf<T extends string>(query: Query, field: string, allowed: readonly T[], problems: FieldProblems) {
  const v = param(query, field);
  if (!v) return undefined;
  if ((allowed as readonly string[]).includes(v)) return v as T;
  problems[field] = `must be one of ${allowed.join(', ')}`;
  return undefined;
}

/** The date range filter, with a problem on `to` when it ends before it starts. */
export function dateRange(query: Query, problems: FieldProblems): { from?: string; to?: string } {
  const from = day(query, 'from', problems);
  const to = day(query, 'to', problems);
  if (from && to && to < from) {
    problems.to = 'must not be before the start date';
    return { from };
  }
  return { from, to };
}

/** The keyset cursor of a list: the last row's id of the previous page, when it has the list's id shape. */
export function cursor(query: Query, kind: Parameters<typeof isId>[0]): string | undefined {
  const after = param(query, 'after');
  return after && isId(kind, after) ? after : undefined;
}

/**
 * Upper bounds on everything a request can carry (LIM-2, LIM-3), applied to every route's request schemas as the
 * route is added, so a schema written without one still refuses an oversized value with 400 naming the field and
 * the published OpenAPI documents show the bound. Explicit bounds in the schemas always win; these are the fallback.
 */

/** Longest string a path or query parameter may hold when its schema says nothing tighter (ids, slugs, emails). */
const DEFAULT_PARAMETER_MAX_LENGTH = 256;
/** Longest string a header may hold when its schema says nothing tighter. */
const DEFAULT_HEADER_MAX_LENGTH = 256;
/** Longest string field of a request body when its schema says nothing tighter. */
const DEFAULT_BODY_STRING_MAX_LENGTH = 1000;
/** Largest integer a request may carry when its schema says nothing tighter (PostgreSQL `integer`). */
const DEFAULT_INTEGER_MAXIMUM = 2_147_483_647;

type Schema = Record<string, unknown>;

/** True when `pattern` is anchored and repeats nothing without bound (no `*`, `+` or `{n,}`). */
function isBoundedPattern(pattern: string): boolean {
  return pattern.startsWith('^') && pattern.endsWith('$') && !/(?<!\\)[*+]|\{\d+,\}/.test(pattern);
}

/**
 * Adds the default bounds, in place, to the request parts of a route schema (`body`, `querystring`, `params`,
 * `headers`): a `maxLength` to every string without `maxLength`, `enum`, `const` or a bounded pattern, and a
 * `maximum` to every integer without one. Response schemas are left alone.
 */
export function boundRequestSchemas(schema: Schema | undefined): void {
  if (!schema) return;
  bound(schema.body, DEFAULT_BODY_STRING_MAX_LENGTH, new Set());
  bound(schema.querystring, DEFAULT_PARAMETER_MAX_LENGTH, new Set());
  bound(schema.params, DEFAULT_PARAMETER_MAX_LENGTH, new Set());
  bound(schema.headers, DEFAULT_HEADER_MAX_LENGTH, new Set());
}

function bound(node: unknown, maxLength: number, seen: Set<unknown>): void {
  if (!node || typeof node !== 'object' || seen.has(node)) return;
  seen.add(node);
  const s = node as Schema;
  const types = Array.isArray(s.type) ? s.type : s.type ? [s.type] : [];
  const open = s.enum === undefined && s.const === undefined;
  if (
    types.includes('string') &&
    open &&
    s.maxLength === undefined &&
    !(typeof s.pattern === 'string' && isBoundedPattern(s.pattern))
  ) {
    s.maxLength = maxLength;
  }
  if (types.includes('integer') && open && s.maximum === undefined && s.exclusiveMaximum === undefined)
    s.maximum = DEFAULT_INTEGER_MAXIMUM;
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const)
    if (Array.isArray(s[key])) for (const sub of s[key] as unknown[]) bound(sub, maxLength, seen);
  if (s.properties && typeof s.properties === 'object')
    for (const v of Object.values(s.properties as Schema)) bound(v, maxLength, seen);
  if (s.items) bound(s.items, maxLength, seen);
  if (s.additionalProperties && typeof s.additionalProperties === 'object')
    bound(s.additionalProperties, maxLength, seen);
  if (s.patternProperties && typeof s.patternProperties === 'object')
    for (const v of Object.values(s.patternProperties as Schema)) bound(v, maxLength, seen);
}

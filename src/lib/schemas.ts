import { Type, type TSchema } from '@sinclair/typebox';
import { ERROR_STATUS, type ErrorCode } from './errors.js';

/** The one error body, as documented in OpenAPI; `code` is the closed list of ERROR_STATUS, so clients can switch on it. */
export const ErrorSchema = Type.Object(
  {
    message: Type.String({ description: 'Human-readable explanation naming the field or rule at fault.' }),
    code: Type.Unsafe<ErrorCode>({
      type: 'string',
      enum: Object.keys(ERROR_STATUS),
      description: 'Stable machine-readable error code; the list is closed (a new code is a new API version).',
    }),
    requestId: Type.String({ description: 'Id of this request; quote it to support.' }),
    errors: Type.Optional(
      Type.Array(Type.Object({ field: Type.String(), message: Type.String() }), {
        description: 'Validation failures only: every bad field, as a dotted path into the request.',
      }),
    ),
    minimumAmount: Type.Optional(Type.Number({ description: 'Price-floor violations only: the floor in dollars.' })),
  },
  { $id: 'Error', title: 'Error', additionalProperties: true },
);

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Validation failure or a broken rule; `errors` names every bad field.',
  401: "Missing, unknown or revoked API key, or a key used at the other environment's base address.",
  402: 'The prepaid balance cannot cover the request.',
  403: 'The request is understood but not allowed (e.g. the user is not an admin of the company).',
  404: 'No such resource in this tenant (ids of other organizations and environments answer 404 too).',
  409: 'The request conflicts with the current state of the resource.',
  413: 'The request body is too large.',
  415: 'The request body is not JSON.',
  422: 'The Idempotency-Key was already used with a different request body.',
  429:
    'Too many requests for this API key (or client address) in the current window; wait the seconds of the Retry-After header. ' +
    'Every answer carries RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset.',
  500: 'Internal error; the body never carries internal details.',
  503: 'A service this request depends on is unavailable, or the service is overloaded; retry later.',
};

/**
 * Response schemas for the given error statuses, plus the ones every authenticated route can return (429: rate limits).
 * For the admin API, which is not published; integrator routes use operationErrors (api-operations.ts), which documents
 * codes.
 */
export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  const all = new Set([400, 401, 415, 429, 500, ...statuses]);
  return Object.fromEntries([...all].sort().map((s) => [s, Type.Ref('Error', { description: ERROR_DESCRIPTIONS[s] })]));
}

/** Longest `startingAfter` (and its spellings `starting_after`, `cursor`) accepted, in characters. */
export const MAX_CURSOR_LENGTH = 100;

/** Cursor pagination query (Stripe style): `limit` 1-100 (default 20) and `startingAfter` an id from the previous page. */
export const PageQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Page size, 1-100.' })),
    startingAfter: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MAX_CURSOR_LENGTH,
        description:
          "Id of the last item of the previous page; the page goes on right after it, in the list's order (newest first, or by due date for compliance deadlines).",
      }),
    ),
  },
  { additionalProperties: false },
);

/**
 * A page of results, newest first. Titled `<item title>List` (e.g. UserList) when the item has a title, so
 * the OpenAPI document names it as a component (src/lib/openapi-components.ts); pass `title` to override.
 */
export function ListOf<T extends TSchema>(
  item: T,
  title: string | undefined = item.title ? `${item.title}List` : undefined,
) {
  return Type.Object(
    {
      object: Type.Literal('list'),
      data: Type.Array(item),
      hasMore: Type.Boolean({ description: 'True when more items follow; pass the last id as startingAfter.' }),
    },
    title ? { title } : {},
  );
}

/** ISO 8601 timestamp string. */
export const DateTime = Type.String({ format: 'date-time' });

/** Nullable helper for response fields. */
export const Nullable = <T extends TSchema>(s: T) => Type.Union([s, Type.Null()]);

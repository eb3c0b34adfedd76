/**
 * The closed list of error codes and their HTTP status (after unkey's error module).
 * Every error the API returns has the body `{message, code, requestId}`, plus `errors` for validation
 * failures and `minimumAmount` (dollars) for price-floor violations (API-1).
 */
export const ERROR_STATUS = {
  validation_error: 400,
  bad_request: 400,
  price_below_floor: 400,
  unauthorized: 401,
  wrong_environment: 401,
  insufficient_balance: 402,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  ein_already_requested: 409,
  qualification_already_paid: 409,
  invalid_transition: 409,
  idempotency_key_in_use: 409,
  domain_not_verified: 409,
  webhook_endpoint_limit_reached: 409,
  idempotency_key_reused: 422,
  unsupported_media_type: 415,
  payload_too_large: 413,
  rate_limited: 429,
  internal_error: 500,
  service_unavailable: 503,
} as const;

/** One of the closed list of `code` values in an error body; ERROR_STATUS maps it to the HTTP status. */
export type ErrorCode = keyof typeof ERROR_STATUS;

/** One invalid field: `field` is a dotted path into the request, e.g. `officers.0.title`. */
export interface FieldError {
  field: string;
  message: string;
}

/** An error meant for the API client. `extra` is merged into the body (e.g. `{minimumAmount: 50}`). */
export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
    this.status = ERROR_STATUS[code];
  }
}

/** A 400 (`validation_error`) naming every bad field in `errors`. The message summarises the first three. */
export class ValidationError extends AppError {
  constructor(readonly errors: FieldError[]) {
    super('validation_error', summarise(errors), { errors });
  }
}

function summarise(errors: FieldError[]): string {
  const parts = errors.slice(0, 3).map((e) => (e.field ? `${e.field}: ${e.message}` : e.message));
  const more = errors.length > 3 ? ` (and ${errors.length - 3} more)` : '';
  return `Invalid request: ${parts.join('; ')}${more}`;
}

/** Collects field errors across several checks, then throws them together. */
export class FieldErrors {
  readonly list: FieldError[] = [];
  add(field: string, message: string): this {
    this.list.push({ field, message });
    return this;
  }
  /**
   * Adds an error when `value` is longer than `max` characters (LIM-2). For text that reaches a service without a
   * request schema to bound it (console forms, CLI options), so every way in refuses the same lengths.
   */
  maxLength(field: string, value: string | null | undefined, max: number): this {
    if (typeof value === 'string' && value.length > max) this.add(field, `must be at most ${max} characters`);
    return this;
  }
  /** @throws ValidationError when any error was added. */
  throwIfAny(): void {
    if (this.list.length) throw new ValidationError(this.list);
  }
}

/**
 * The 404 for an unknown or other tenant's id, e.g. `notFound('company', 'comp_x')` -> "No such company: 'comp_x'"
 * (TEN-3: 404, not 403, so ids do not leak). Returns the AppError for the caller to throw.
 */
export const notFound = (what: string, id: string): AppError => new AppError('not_found', `No such ${what}: '${id}'`);

/**
 * A body field that references an object this tenant does not have (another tenant's or environment's id, or
 * none at all): 404, like an unknown id in the path, so ids never leak across tenants (TEN-3), with
 * `errors` naming each field as a validation failure would.
 */
export function referencedNotFound(errors: FieldError[]): AppError {
  return new AppError('not_found', errors.map((e) => `${e.field}: ${e.message}`).join('; '), { errors });
}

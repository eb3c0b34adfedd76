import type { components } from './generated/openapi.js';

/** The error body of every failed request: `{message, code, requestId}`, plus `errors` for validation failures. */
export type ApiErrorBody = components['schemas']['Error'];

/** One of the API's error codes (a closed list: switch on it). */
export type ErrorCode = ApiErrorBody['code'];

/** One invalid field of a request: `field` is a dotted path into it (e.g. `officers.0.title`). */
export interface FieldError {
  field: string;
  message: string;
}

/**
 * Base class of every error the SDK throws for an API answer. `status` is the HTTP status, `code` the API's
 * error code, `requestId` the id to quote to support, `errors` the bad fields of a validation failure (else []).
 */
export class FilingComplianceError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  readonly requestId: string | null;
  readonly errors: FieldError[];
  /** The whole error body as the API sent it (null when the answer was not JSON). */
  readonly body: ApiErrorBody | null;

  constructor(status: number, body: ApiErrorBody | null, fallbackMessage: string) {
    super(body?.message ?? fallbackMessage);
    this.name = new.target.name;
    this.status = status;
    this.code = body?.code ?? (status >= 500 ? 'internal_error' : 'bad_request');
    this.requestId = body?.requestId ?? null;
    this.errors = body?.errors ?? [];
    this.body = body;
  }
}

/** 400: the request is invalid (`errors` names every bad field), or a price is below the floor (`minimumAmount`). */
export class InvalidRequestError extends FilingComplianceError {}
/** 401: missing, unknown or revoked key, or a key of the other environment (`wrong_environment`). */
export class AuthenticationError extends FilingComplianceError {}
/** 402 insufficient_balance: the prepaid balance cannot cover the order; nothing was written. */
export class InsufficientBalanceError extends FilingComplianceError {}
/** 403: understood but not allowed (e.g. the user is not an admin of the company). */
export class PermissionError extends FilingComplianceError {}
/** 404: no such resource in this environment of your organization. */
export class NotFoundError extends FilingComplianceError {}
/** 409: conflicts with the current state (ein_already_requested, invalid_transition, idempotency_key_in_use, …). */
export class ConflictError extends FilingComplianceError {}
/** 422 idempotency_key_reused: the Idempotency-Key was already used with another request. */
export class IdempotencyError extends FilingComplianceError {}
/** 429: too many at once (e.g. event streams per key); retry later. */
export class RateLimitError extends FilingComplianceError {}
/** 5xx: the service failed; retrying with the same Idempotency-Key is safe. */
export class ApiError extends FilingComplianceError {}

/** No answer at all: the connection failed or timed out. `cause` is the underlying error. */
export class ConnectionError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ConnectionError';
  }
}

/**
 * The API's address answered with a redirect (3xx), which the SDK never follows: following it would send the API key
 * to wherever the redirect points. Nothing was sent there. `url` is the address asked, `status` the redirect's
 * status, `location` where it pointed (null when it named no place). Set the base address (`baseUrls`, `--base-url`)
 * to the one the API answers at; retrying does not help (AUTH-13).
 */
export class RedirectError extends Error {
  constructor(
    readonly url: string,
    readonly status: number,
    readonly location: string | null,
  ) {
    super(
      `${url} answered ${status} redirecting to ${location ?? '(no Location)'}; the SDK follows no redirect, so the API key is never sent to another address. Set the base address to the one the API answers at.`,
    );
    this.name = 'RedirectError';
  }
}

const BY_STATUS: Record<number, typeof FilingComplianceError> = {
  400: InvalidRequestError,
  401: AuthenticationError,
  402: InsufficientBalanceError,
  403: PermissionError,
  404: NotFoundError,
  409: ConflictError,
  422: IdempotencyError,
  429: RateLimitError,
};

/** The typed error for an HTTP status and (parsed) error body. */
export function errorFor(status: number, body: unknown): FilingComplianceError {
  const parsed = isErrorBody(body) ? body : null;
  const Class = BY_STATUS[status] ?? (status >= 500 ? ApiError : FilingComplianceError);
  return new Class(status, parsed, `HTTP ${status}`);
}

function isErrorBody(body: unknown): body is ApiErrorBody {
  return (
    typeof body === 'object' &&
    body !== null &&
    typeof (body as ApiErrorBody).code === 'string' &&
    typeof (body as ApiErrorBody).message === 'string'
  );
}

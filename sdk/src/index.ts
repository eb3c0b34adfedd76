/*
 * The Filing Compliance Service SDK: `new FilingCompliance({ apiKey })` with one typed method per API operation,
 * typed errors, cursor iteration, the event stream, and webhook signature verification.
 */
export { DEFAULT_BASE_URLS, environmentOf, FilingCompliance } from './client.js';
export type {
  BodyOf,
  Environment,
  FilingComplianceOptions,
  OperationMethods,
  ParamsOf,
  RequestOptions,
  ResultOf,
  Schemas,
} from './client.js';
export {
  ApiError,
  AuthenticationError,
  ConflictError,
  ConnectionError,
  FilingComplianceError,
  IdempotencyError,
  InsufficientBalanceError,
  InvalidRequestError,
  NotFoundError,
  PermissionError,
  RateLimitError,
  RedirectError,
} from './errors.js';
export type { ApiErrorBody, ErrorCode, FieldError } from './errors.js';
export { streamEvents } from './event-stream.js';
export type { EventStreamOptions, StreamedEvent, StreamStatus } from './event-stream.js';
export { EVENT_TYPES, OPERATIONS } from './generated/operations.js';
export type { EventType, OperationId } from './generated/operations.js';
export type { components, operations, paths, webhooks as WebhookPayloads } from './generated/openapi.js';
export { listen } from './listen.js';
export type { ListenOptions, ListenResult } from './listen.js';
export type { Page, PagePromise } from './pagination.js';
export {
  constructEvent,
  DEFAULT_TOLERANCE_SECONDS,
  newSigningSecret,
  SIGNATURE_HEADER,
  signatureHeader,
  SignatureVerificationError,
  webhooks,
} from './webhooks.js';
export type { WebhookEvent } from './webhooks.js';

import type { ErrorObject } from 'ajv';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isDatabaseUnavailable } from './db.js';
import { AppError, ValidationError, type ErrorCode } from './errors.js';
import { scrubSecrets } from './logger.js';
import { toFieldErrors } from './validation.js';

/** The one error body of the service. */
export interface ErrorBody {
  message: string;
  code: ErrorCode;
  requestId: string;
  errors?: Array<{ field: string; message: string }>;
  [extra: string]: unknown;
}

const FASTIFY_CODES: Record<string, [ErrorCode, string]> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: [
    'unsupported_media_type',
    'Request bodies must be JSON: send Content-Type: application/json',
  ],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: ['bad_request', 'Content-Length does not match the body'],
  FST_ERR_CTP_EMPTY_JSON_BODY: ['bad_request', 'The JSON body is empty; send an object'],
  FST_ERR_CTP_INVALID_JSON_BODY: ['bad_request', 'The request body is not valid JSON'],
  FST_ERR_CTP_BODY_TOO_LARGE: ['payload_too_large', 'The request body is too large'],
};

/** Maps any thrown error to the one error body. 5xx bodies never carry the internal message. */
export function toErrorResponse(err: unknown, request: FastifyRequest): { status: number; body: ErrorBody } {
  const requestId = request.id;
  if (err instanceof AppError) {
    // AUTH-11: a message may quote what the caller sent (an id that is an API key or a whsec_ secret pasted into the
    // wrong place); it is answered, and then logged by proxies and clients, without the credential.
    const body: ErrorBody = { message: scrubSecrets(err.message), code: err.code, requestId, ...err.extra };
    if (body.errors) body.errors = body.errors.map((e) => ({ field: e.field, message: scrubSecrets(e.message) }));
    return { status: err.status, body };
  }
  const fe = err as FastifyError & { validation?: ErrorObject[]; validationContext?: string; type?: string };
  if (fe.validation) {
    const v = new ValidationError(toFieldErrors(fe.validation, fe.validationContext));
    return toErrorResponse(v, request);
  }
  const known = fe.code ? FASTIFY_CODES[fe.code] : undefined;
  if (known)
    return {
      status: known[0] === 'bad_request' ? 400 : statusOf(known[0]),
      body: { message: known[1], code: known[0], requestId },
    };
  if (err instanceof SyntaxError || fe.type === 'entity.parse.failed') {
    return { status: 400, body: { message: 'The request body is not valid JSON', code: 'bad_request', requestId } };
  }
  if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) {
    const code: ErrorCode =
      fe.statusCode === 404
        ? 'not_found'
        : fe.statusCode === 429
          ? 'rate_limited'
          : fe.statusCode === 413
            ? 'payload_too_large'
            : fe.statusCode === 415
              ? 'unsupported_media_type'
              : 'bad_request';
    return { status: fe.statusCode, body: { message: fe.message, code, requestId } };
  }
  if (isDatabaseUnavailable(err)) {
    return {
      status: 503,
      body: {
        message: 'The database is unavailable right now; nothing was changed. Retry in a few seconds.',
        code: 'service_unavailable',
        requestId,
      },
    };
  }
  return {
    status: 500,
    body: {
      message: 'An internal error occurred; it has been logged. Quote the requestId when contacting support.',
      code: 'internal_error',
      requestId,
    },
  };
}

function statusOf(code: ErrorCode): number {
  return new AppError(code, '').status;
}

/** Installs the error and not-found handlers on an instance. */
export function installErrorHandlers(app: FastifyInstance): void {
  app.setErrorHandler((err, request, reply: FastifyReply) => {
    const { status, body } = toErrorResponse(err, request);
    if (isDatabaseUnavailable(err))
      request.log.warn(
        { err: { message: (err as Error).message, code: (err as { code?: string }).code } },
        'database unavailable',
      );
    else if (status >= 500) request.log.error({ err }, 'request failed');
    else request.log.info({ code: body.code, status }, 'request refused');
    return reply.status(status).type('application/json').send(body);
  });
  app.setNotFoundHandler(sendNotFound);
}

/** Answers 404 with the one error body naming the method and path (API-1), as for a path no route serves. */
export function sendNotFound(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  // The path may carry a credential typed into the wrong place (a magic-link token, an API key): never echo it.
  const body: ErrorBody = {
    message: `No route for ${request.method} ${scrubSecrets(request.url.split('?')[0])}`,
    code: 'not_found',
    requestId: request.id,
  };
  return reply.status(404).send(body);
}

import { AppError } from './errors.js';

/**
 * What the multipart parser (@fastify/multipart, busboy beneath it) failed with while reading a form, as the client's
 * error (OPS-7): its limits stay 413 `payload_too_large` and a prototype-polluting field name 400; anything else (no
 * boundary or another one, a form cut short, a malformed part header, a JSON field that is not JSON) becomes 400
 * `bad_request`, never a 500 or the parser's own 406, which the closed list of API-2 does not have. An AppError is
 * returned as it is.
 */
export function unreadableFormError(err: unknown): unknown {
  const status = (err as { statusCode?: unknown } | null)?.statusCode;
  if (err instanceof AppError || status === 413 || status === 400) return err;
  return new AppError(
    'bad_request',
    'The form could not be read: send a complete multipart/form-data body with the boundary its Content-Type names',
  );
}

import type { FastifyRequest } from 'fastify';
import { ValidationError, type FieldError } from './errors.js';

const NUL = '\u0000';
const MAX_REPORTED = 10;

/**
 * preValidation hook for every route: PostgreSQL text cannot hold the NUL character (U+0000), so a string carrying
 * one would fail deep inside a query as a 500. It is refused up front instead, wherever it sits: a path parameter,
 * a query parameter or any string (or key) of the body.
 * @throws ValidationError (400) naming each field that holds a NUL (dotted path; query and path parameters by name).
 */
export async function rejectNulCharacters(request: FastifyRequest): Promise<void> {
  const errors: FieldError[] = [];
  collect(request.params, '', errors);
  collect(request.query, '', errors);
  collect(request.body, '', errors);
  if (errors.length) throw new ValidationError(errors);
}

function collect(value: unknown, path: string, errors: FieldError[], depth = 0): void {
  if (errors.length >= MAX_REPORTED || depth > 64) return;
  if (typeof value === 'string') {
    if (value.includes(NUL))
      errors.push({ field: path || 'body', message: 'must not contain the NUL character (\\u0000)' });
    return;
  }
  if (!value || typeof value !== 'object' || Buffer.isBuffer(value)) return;
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) collect(item, join(path, String(i)), errors, depth + 1);
    return;
  }
  for (const [key, item] of Object.entries(value)) {
    if (key.includes(NUL))
      errors.push({
        field: join(path, key.replaceAll(NUL, '\\u0000')),
        message: 'is a field name holding the NUL character (\\u0000)',
      });
    collect(item, join(path, key), errors, depth + 1);
  }
}

function join(a: string, b: string): string {
  return a ? `${a}.${b}` : b;
}

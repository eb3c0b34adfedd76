import type { FastifyRequest } from 'fastify';
import { ValidationError, type FieldError } from './errors.js';

const NUL = '\u0000';
const MAX_REPORTED = 10;

/**
 * preValidation hook for every route: refuses text that cannot be stored or checked as sent, wherever it sits (a
 * path parameter, a query parameter, any string or key of the body). PostgreSQL text cannot hold the NUL character
 * (U+0000), and a string with an unpaired UTF-16 surrogate (a lone \ud800-\udfff escape in JSON) is not Unicode:
 * it cannot be encoded as UTF-8 without being altered, and libraries such as validator throw on it. Either would
 * otherwise fail deep inside a query or a check as a 500.
 * @throws ValidationError (400) naming each such field (dotted path; query and path parameters by name).
 */
export async function rejectUnstorableText(request: FastifyRequest): Promise<void> {
  throwIfUnstorable([request.params, request.query, request.body]);
}

/**
 * The same refusal for the text of a multipart form, read part by part after {@link rejectUnstorableText} has run:
 * each field by its name and value, a file by its field's name and its file name (the file's bytes are not text).
 * @param parts field name to value or file name.
 * @throws ValidationError (400) naming each such field.
 */
export function rejectUnstorableFormText(parts: Record<string, string>): void {
  throwIfUnstorable([parts]);
}

function throwIfUnstorable(values: unknown[]): void {
  // Nearly every request holds no such text: a walk that builds no field paths says so, and only a request that
  // fails it is walked again to name its fields.
  if (values.every((v) => storable(v))) return;
  const errors: FieldError[] = [];
  for (const v of values) collect(v, '', errors);
  if (errors.length) throw new ValidationError(errors);
}

function collect(value: unknown, path: string, errors: FieldError[], depth = 0): void {
  if (errors.length >= MAX_REPORTED || depth > 64) return;
  if (typeof value === 'string') {
    const problem = textProblem(value);
    if (problem) errors.push({ field: path || 'body', message: problem });
    return;
  }
  if (!value || typeof value !== 'object' || Buffer.isBuffer(value)) return;
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) collect(item, join(path, String(i)), errors, depth + 1);
    return;
  }
  for (const [key, item] of Object.entries(value)) {
    const problem = textProblem(key);
    if (problem)
      errors.push({
        field: join(path, key.replaceAll(NUL, '\\u0000').toWellFormed()),
        message: `is a field name that ${problem}`,
      });
    collect(item, join(path, key), errors, depth + 1);
  }
}

/** Whether every string and key in `value` is storable (see {@link textProblem}); past depth 64 nothing is looked at. */
function storable(value: unknown, depth = 0): boolean {
  if (depth > 64) return true;
  if (typeof value === 'string') return textProblem(value) === null;
  if (!value || typeof value !== 'object' || Buffer.isBuffer(value)) return true;
  if (Array.isArray(value)) return value.every((item) => storable(item, depth + 1));
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    if (textProblem(key) !== null || !storable((value as Record<string, unknown>)[key], depth + 1)) return false;
  }
  return true;
}

function textProblem(s: string): string | null {
  if (s.includes(NUL)) return 'must not contain the NUL character (\\u0000)';
  if (!s.isWellFormed()) return 'must be well-formed Unicode (no unpaired surrogate \\ud800-\\udfff)';
  return null;
}

function join(a: string, b: string): string {
  return a ? `${a}.${b}` : b;
}

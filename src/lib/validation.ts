import type { Static, TSchema } from '@sinclair/typebox';
import Ajv, { type ErrorObject } from 'ajv';
import addFormats from 'ajv-formats';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import validator from 'validator';
import type { FastifySchemaCompiler } from 'fastify';
import { ValidationError, type FieldError } from './errors.js';

function buildAjv(coerceTypes: boolean): Ajv {
  const ajv = new Ajv({ allErrors: true, coerceTypes, useDefaults: true, removeAdditional: false, strict: false });
  addFormats(ajv);
  // One definition of a valid email for the whole service: the `validator` package's isEmail (USR-1:
  // a well-kept library), so `format: 'email'` in any schema means exactly that.
  ajv.addFormat('email', { type: 'string', validate: isEmailAddress });
  // API-6: the calendar has no year 0 (0001 follows 1 BC), and PostgreSQL refuses it: such a date is a 400 here,
  // never an error when it is stored.
  for (const name of ['date', 'date-time'] as const) {
    const { validate, compare } = fullFormats[name] as {
      validate: (s: string) => boolean;
      compare: (a: string, b: string) => number | undefined;
    };
    ajv.addFormat(name, { type: 'string', validate: (s: string) => !s.startsWith('0000') && validate(s), compare });
  }
  return ajv;
}

/**
 * The service's one test of an e-mail address (USR-1): validator's isEmail, on well-formed text only, because
 * isEmail throws (URIError) on a string holding an unpaired UTF-16 surrogate instead of answering false.
 */
export function isEmailAddress(s: string): boolean {
  return s.isWellFormed() && validator.isEmail(s);
}

const strictAjv = buildAjv(false);
const coercingAjv = buildAjv(true);

/**
 * Bodies are validated strictly (a string is never turned into a number); query strings, params and
 * headers are coerced because they arrive as text. All errors are collected, so every bad field is named.
 */
// biome-ignore lint/suspicious/noExplicitAny: Fastify types route schemas as any; Ajv checks them at compile time.
export const validatorCompiler: FastifySchemaCompiler<any> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? strictAjv : coercingAjv;
  // biome-ignore lint/suspicious/noExplicitAny: Ajv's ValidateFunction is what Fastify calls, typed differently.
  return ajv.compile(schema) as any;
};

/** Turns Ajv errors into `[{field, message}]` with dotted field paths (`officers.0.title`), in words (API-7). */
export function toFieldErrors(errors: ErrorObject[], part = 'body'): FieldError[] {
  const out: FieldError[] = [];
  const seen = new Set<string>();
  // A nullable field (`X | null`) that fails as X also fails "must be null" and "must match a schema in anyOf";
  // those say nothing when the field has a specific error, so they are dropped then.
  const unionNoise = new Set<string>();
  // A union of literals fails once per literal: those become one "must be one of" per field, where the first stood.
  const literals = new Map<string, { error: FieldError; values: unknown[] }>();
  for (const e of errors) {
    if (e.keyword === 'if') continue;
    const field = fieldOf(e) || (part === 'body' ? '' : part);
    if (e.keyword === 'const') {
      const value = (e.params as { allowedValue: unknown }).allowedValue;
      const known = literals.get(field);
      if (known) {
        known.values.push(value);
        known.error.message = `must be one of: ${known.values.map(String).join(', ')}`;
      } else {
        const error = { field, message: `must be ${JSON.stringify(value)}` };
        literals.set(field, { error, values: [value] });
        out.push(error);
      }
      continue;
    }
    const message = messageOf(e);
    const key = `${field}|${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ field, message });
    if (e.keyword === 'anyOf' || (e.keyword === 'type' && message === 'must be null')) unionNoise.add(key);
  }
  const useful = out.filter(
    (f) =>
      !unionNoise.has(`${f.field}|${f.message}`) ||
      !out.some((o) => o.field === f.field && !unionNoise.has(`${o.field}|${o.message}`)),
  );
  return useful.length ? useful : [{ field: part, message: 'is invalid' }];
}

/** The dotted path of the field an Ajv error is about: a missing or unknown property names itself. */
function fieldOf(e: ErrorObject): string {
  const at = e.instancePath.replace(/^\//, '').replace(/\//g, '.');
  if (e.keyword === 'required') return join(at, (e.params as { missingProperty: string }).missingProperty);
  if (e.keyword === 'additionalProperties')
    return join(at, (e.params as { additionalProperty: string }).additionalProperty);
  return at;
}

/** An Ajv error in the words of an error message; Ajv's own wording where none is given here. */
function messageOf(e: ErrorObject): string {
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties':
      return 'is not a known field';
    case 'enum':
      return `must be one of: ${(p.allowedValues as unknown[]).map((v) => (v === null ? 'null' : String(v))).join(', ')}`;
    case 'format':
      return FORMAT_MESSAGES[p.format as string] ?? e.message ?? 'is invalid';
    case 'pattern':
      return PATTERN_MESSAGES[p.pattern as string] ?? e.message ?? 'is invalid';
    case 'minLength':
      return `must be at least ${p.limit} character${p.limit === 1 ? '' : 's'} long`;
    case 'maxLength':
      return `must be at most ${p.limit} characters long`;
    case 'minItems':
      return `must have at least ${p.limit} item${p.limit === 1 ? '' : 's'}`;
    case 'maxItems':
      return `must have at most ${p.limit} item${p.limit === 1 ? '' : 's'}`;
    case 'minimum':
      return `must be at least ${p.limit}`;
    case 'maximum':
      return `must be at most ${p.limit}`;
    case 'type':
      // Ajv writes a nullable type as "must be string,null".
      return `must be ${String(p.type).split(',').join(' or ')}`;
    default:
      return e.message ?? 'is invalid';
  }
}

/** What a value of each string format the schemas use looks like, in the words of an error message. */
const FORMAT_MESSAGES: Record<string, string> = {
  date: 'must be a calendar date as YYYY-MM-DD',
  'date-time': 'must be an ISO 8601 date-time such as 2025-01-31T17:04:05.123Z',
  email: 'must be an email address',
  uri: 'must be an absolute URL',
};

/** The same for the patterns the request schemas use (a pattern not listed keeps Ajv's "must match pattern"). */
const PATTERN_MESSAGES: Record<string, string> = {
  '^\\d{2}-\\d{7}$': 'must be an EIN as 12-3456789',
  '^\\d{3}-?\\d{2}-?\\d{4}$': 'must be nine digits, as 123-45-6789',
  '^\\d{5}(-\\d{4})?$': 'must be a ZIP code: five digits, or ZIP+4 as 12345-6789',
  '^\\d{6}$': 'must be six digits',
  '^\\d{4}-\\d{2}-\\d{2}$': 'must be a calendar date as YYYY-MM-DD',
  '^\\d{4}-(0[1-9]|1[0-2])$': 'must be a month as YYYY-MM',
  '^[A-Z]{2}$': 'must be a two-letter state code in capitals',
  '^#[0-9a-fA-F]{6}$': 'must be a colour as #rrggbb',
  '^[0-9a-fA-F]{64}$': 'must be 64 hexadecimal digits',
  '^user_': 'must be a user id (user_…)',
  '^comp_': 'must be a company id (comp_…)',
};

function join(a: string, b: string): string {
  return a ? `${a}.${b}` : b;
}

/**
 * The field errors of a route declared with `attachValidation: true` (empty when the request passed its
 * schema). Such routes merge them with their cross-field rule errors so one 400 names every bad field.
 */
function attachedFieldErrors(request: { validationError?: Error }): FieldError[] {
  const v = request.validationError as (Error & { validation?: ErrorObject[]; validationContext?: string }) | undefined;
  if (!v) return [];
  return v.validation
    ? toFieldErrors(v.validation, v.validationContext)
    : [{ field: v.validationContext ?? 'body', message: v.message }];
}

/**
 * A rule of a request value that its schema cannot express. It receives the value as sent (it may have failed the
 * schema), so it narrows before reading and skips what it cannot check, and returns every broken rule as
 * `{field, message}` with dotted paths (empty when none is broken).
 */
export type FieldRule = (input: unknown) => FieldError[];

/**
 * Checks a request value against its TypeBox schema (the strict body validator routes use) and `rules`, and returns
 * it typed by the schema, so what a service receives has passed both. Every error is collected first: the schema's
 * (as `toFieldErrors` names them), then each rule's in order for the fields the schema did not refuse, exact
 * duplicates dropped, so one 400 names every bad field, each with the first reason it fails.
 * @param options.prior errors found before (e.g. a request's params or headers) put first in the same 400.
 * @param options.raise throws the combined errors in a caller's own way; ValidationError when unset or when it returns.
 * @throws ValidationError (400 validation_error, `errors` listing every bad field) when anything failed.
 */
export function validated<T extends TSchema>(
  schema: T,
  value: unknown,
  rules: readonly FieldRule[] = [],
  options: { prior?: FieldError[]; raise?: (errors: FieldError[]) => void } = {},
): Static<T> {
  // Ajv keeps what it compiled per schema object, so this compiles each schema once (the route compiled it already).
  const validate = strictAjv.compile<Static<T>>(schema);
  const errors = [...(options.prior ?? [])];
  const valid = validate(value);
  const schemaErrors = valid ? [] : toFieldErrors(validate.errors ?? []);
  errors.push(...schemaErrors);
  // A field its schema refused is named once, by that refusal: a rule reading the same bad value adds nothing to it.
  const refused = new Set(schemaErrors.map((e) => e.field));
  for (const rule of rules) errors.push(...rule(value).filter((e) => !refused.has(e.field)));
  if (valid && !errors.length) return value;
  const combined = dedupe(errors);
  options.raise?.(combined);
  throw new ValidationError(combined);
}

/**
 * The field errors Fastify attached for a request's params, query string or headers (routes with
 * `attachValidation: true`); empty when those passed or when only the body failed, which `validated` checks itself.
 */
export function attachedNonBodyErrors(request: { validationError?: Error }): FieldError[] {
  const v = request.validationError as (Error & { validationContext?: string }) | undefined;
  return v && v.validationContext !== 'body' ? attachedFieldErrors(request) : [];
}

function dedupe(errors: FieldError[]): FieldError[] {
  const seen = new Set<string>();
  return errors.filter((e) => !seen.has(`${e.field}|${e.message}`) && !!seen.add(`${e.field}|${e.message}`));
}

/**
 * One field of a request body as sent (a parsed form or JSON object), unchecked: undefined when the body is not an
 * object or has no such field. For browser forms that have no body schema, so nothing is assumed about the body.
 */
export function bodyField(body: unknown, name: string): unknown {
  return typeof body === 'object' && body !== null && name in body ? Reflect.get(body, name) : undefined;
}

import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { ValidationError, type FieldError } from '../src/lib/errors.js';
import { bodyField, validated, type FieldRule } from '../src/lib/validation.js';

/* The one helper between a request body and a service: schema errors and rule errors come back in one 400. */

const Body = Type.Object(
  { name: Type.String({ minLength: 1 }), age: Type.Optional(Type.Integer({ minimum: 0 })) },
  { additionalProperties: false },
);

const adultRule: FieldRule = (input) =>
  typeof input === 'object' && input !== null && 'age' in input && typeof input.age === 'number' && input.age < 18
    ? [{ field: 'age', message: 'must be at least 18' }]
    : [];

function errorsOf(run: () => unknown): FieldError[] {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(ValidationError);
    return (err as ValidationError).errors;
  }
  throw new Error('expected a ValidationError');
}

describe('validated', () => {
  it('returns the value typed by the schema when the schema and every rule pass', () => {
    const body = validated(Body, { name: 'Ada', age: 36 }, [adultRule]);
    expect(body.name).toBe('Ada');
  });

  it('throws one ValidationError with the schema errors first, then each rule’s, duplicates dropped', () => {
    const dup: FieldRule = () => [{ field: 'age', message: 'must be at least 18' }];
    expect(errorsOf(() => validated(Body, { name: '', age: 3, extra: 1 }, [adultRule, dup]))).toEqual([
      { field: 'extra', message: 'is not a known field' },
      { field: 'name', message: 'must be at least 1 character long' },
      { field: 'age', message: 'must be at least 18' },
    ]);
  });

  it('runs the rules on input that failed the schema, and puts prior errors first', () => {
    const errors = errorsOf(() =>
      validated(Body, 'not an object', [adultRule], { prior: [{ field: 'idempotency-key', message: 'is too long' }] }),
    );
    expect(errors[0]).toEqual({ field: 'idempotency-key', message: 'is too long' });
    expect(errors.slice(1)).toEqual([{ field: '', message: 'must be object' }]);
  });

  it('lets the caller raise the combined errors its own way', () => {
    class Custom extends Error {}
    expect(() =>
      validated(Body, {}, [], {
        raise: () => {
          throw new Custom();
        },
      }),
    ).toThrow(Custom);
  });
});

describe('error messages (API-7)', () => {
  it('say in words what a limit, a pattern, a format or a choice of values asks for', () => {
    const Form = Type.Object({
      code: Type.String({ minLength: 3, maxLength: 5 }),
      count: Type.Integer({ minimum: 1, maximum: 9 }),
      tags: Type.Array(Type.String(), { maxItems: 2 }),
      zip: Type.String({ pattern: '^\\d{5}(-\\d{4})?$' }),
      odd: Type.String({ pattern: '^x+$' }),
      on: Type.String({ format: 'date' }),
      kind: Type.Union([Type.Literal('a'), Type.Literal('b'), Type.Literal('c')]),
    });
    expect(
      errorsOf(() =>
        validated(Form, {
          code: 'ab',
          count: 10,
          tags: ['1', '2', '3'],
          zip: '1234',
          odd: 'y',
          on: '0000-01-01',
          kind: 'd',
        }),
      ),
    ).toEqual([
      { field: 'code', message: 'must be at least 3 characters long' },
      { field: 'count', message: 'must be at most 9' },
      { field: 'tags', message: 'must have at most 2 items' },
      { field: 'zip', message: 'must be a ZIP code: five digits, or ZIP+4 as 12345-6789' },
      { field: 'odd', message: 'must match pattern "^x+$"' },
      { field: 'on', message: 'must be a calendar date as YYYY-MM-DD' },
      { field: 'kind', message: 'must be one of: a, b, c' },
    ]);
  });
});

describe('bodyField', () => {
  it('reads a field of an object body and nothing else', () => {
    expect(bodyField({ _csrf: 'x' }, '_csrf')).toBe('x');
    expect(bodyField(undefined, '_csrf')).toBeUndefined();
    expect(bodyField('text', 'length')).toBeUndefined();
  });
});

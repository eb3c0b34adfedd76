import { describe, expect, it } from 'vitest';
import { withFields } from '../src/lib/objects.js';

describe('withFields', () => {
  it('gives the base with the fields added, the fields winning where both have a key, and changes neither', () => {
    const base = { id: 'order_1', amountCents: 100, note: 'kept' };
    const fields = { amountCents: 200, amount: '2.00' };
    const out = withFields(base, fields);
    expect(out).toEqual({ id: 'order_1', amountCents: 200, note: 'kept', amount: '2.00' });
    expect(out).not.toBe(base);
    expect(base).toEqual({ id: 'order_1', amountCents: 100, note: 'kept' });
    expect(fields).toEqual({ amountCents: 200, amount: '2.00' });
  });

  it('copies own enumerable properties only, as a spread does', () => {
    const base = Object.create({ inherited: true }, { own: { value: 1, enumerable: true }, hidden: { value: 2 } });
    expect(withFields(base as object, { extra: 3 })).toEqual({ own: 1, extra: 3 });
  });
});

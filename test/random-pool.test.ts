import { describe, expect, it } from 'vitest';
import { newDataKeyText, open, parseDataKey, seal } from '../src/lib/secret-box.js';
import { pooledRandomBytes } from '../src/lib/random-pool.js';

// SEC-2: every seal takes a fresh IV; the IVs and the ids' randomness come from one pool of random bytes.
describe('the pool of random bytes', () => {
  it('never hands out the same bytes twice, across its refills', () => {
    // 12-byte draws do not divide 4,096: every refill leaves a tail that must not be handed out again.
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) seen.add(pooledRandomBytes(12).toString('hex'));
    expect(seen.size).toBe(2000);
  });

  it('gives each caller a copy it may keep', () => {
    const first = pooledRandomBytes(16);
    const kept = Buffer.from(first);
    for (let i = 0; i < 600; i++) pooledRandomBytes(16); // past a refill of the pool
    expect(first.equals(kept)).toBe(true);
  });

  it('refuses a count it cannot give', () => {
    for (const count of [0, -1, 1.5, 4097]) expect(() => pooledRandomBytes(count)).toThrow(RangeError);
  });

  it('seals the same secret for the same record differently each time, and each opens', () => {
    const key = parseDataKey(newDataKeyText())!;
    const keyring = { current: key, previous: [] };
    const sealed = Array.from({ length: 500 }, () => seal(keyring, '123456789', 'order_1'));
    expect(new Set(sealed.map((s) => s.split(':')[3])).size).toBe(500);
    for (const s of sealed) expect(open(keyring, s, 'order_1')).toBe('123456789');
  });
});

import { crc32 } from 'node:zlib';
import type { Environment } from '../../context.js';
import { randomToken } from '../../lib/secrets.js';

/*
 * The API key format (AUTH-1, AUTH-3, AUTH-14): `sk_live_`/`sk_test_`, 32 random bytes in base64url (43 characters),
 * then the CRC32 of those 43 characters in base62, six characters wide: 57 characters in all, as GitHub's and
 * Stripe-like tokens carry one. Anyone can compute a checksum, so it is no secret: it lets a process refuse a
 * mistyped, truncated or made-up key by itself, without a database read.
 */

/** Every key the API accepts has this shape (AUTH-1); anything else is refused before it is hashed. */
const KEY_SHAPE = /^sk_(live|test)_[A-Za-z0-9_-]{32,}$/;
/** A key issued with a checksum: the random part and the checksum apart. */
const CHECKSUMMED = /^sk_(?:live|test)_([A-Za-z0-9_-]{43})([0-9A-Za-z]{6})$/;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** Base62 digits of a CRC32 (62^6 > 2^32). */
const CHECKSUM_LENGTH = 6;

/** A new secret key of `environment`: the prefix, 32 random bytes (base64url) and their checksum. */
export function newApiKey(environment: Environment): string {
  const random = randomToken(32);
  return `sk_${environment}_${random}${checksumOf(random)}`;
}

/** What a presented key's text alone tells: its environment, and whether it carries a valid checksum. */
export interface KeyShape {
  environment: Environment;
  /**
   * True: the checksum holds, the key may be looked up. False: AUTH-1's shape without a valid checksum, which only a
   * key issued before checksums existed may be (AUTH-3: such a key is looked up only when the process knows its hash).
   */
  checksummed: boolean;
}

/** The shape of `key`, or null when it is not AUTH-1's shape at all. */
export function keyShapeOf(key: string): KeyShape | null {
  const shape = KEY_SHAPE.exec(key);
  if (!shape) return null;
  const parts = CHECKSUMMED.exec(key);
  return { environment: shape[1] as Environment, checksummed: !!parts && checksumOf(parts[1]) === parts[2] };
}

function checksumOf(random: string): string {
  let n = crc32(random);
  let out = '';
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

import crypto, { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A URL-safe random token of `bytes` random bytes (base64url). */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/** SHA-256 hex digest; API keys, magic-link tokens and session ids are stored only as this hash. */
export function sha256(value: string): string {
  // crypto.hash (Node 20.12+) is the one-shot form: no Hash object per call, on every API request's key.
  return crypto.hash ? crypto.hash('sha256', value, 'hex') : createHash('sha256').update(value).digest('hex');
}

/** Constant-time string comparison. */
export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}

/** Masks a secret for logs and lists: `sk_test_abc…wxyz`. */
export function redact(secret: string): string {
  const cut = secret.indexOf('_', 3) + 1;
  return `${secret.slice(0, cut + 3)}…${secret.slice(-4)}`;
}

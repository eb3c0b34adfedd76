import { createHmac, randomBytes } from 'node:crypto';

/** Prefix of every endpoint signing secret (WH-1, WH-2). */
const SECRET_PREFIX = 'whsec_';

/** Header carrying the signature (WH-2). */
export const SIGNATURE_HEADER = 'Service-Signature';

/** A new signing secret: `whsec_` + 32 random bytes, base64url (43 characters). */
export function newSigningSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64url')}`;
}

/**
 * The Service-Signature header value for one attempt: `t={unix seconds},v1={hex}[,v1={hex}]`, where each v1 is
 * the hex HMAC-SHA256 of `"{t}.{raw body}"` keyed with one whole `whsec_…` secret string (WH-2;
 * WH-3 for rotation). During a rotation both the new and the old secret sign, new first, so a
 * receiver holding either verifies (Stripe's `webhooks.constructEvent` accepts any matching v1).
 * @param rawBody exactly the bytes sent; @param secrets current secret first; @param timestampSeconds unix seconds.
 */
export function signatureHeader(rawBody: string, secrets: string[], timestampSeconds: number): string {
  const signed = `${timestampSeconds}.${rawBody}`;
  const v1 = secrets.map((secret) => `v1=${createHmac('sha256', secret).update(signed, 'utf8').digest('hex')}`);
  return [`t=${timestampSeconds}`, ...v1].join(',');
}

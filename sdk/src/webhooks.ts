import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { webhooks as Webhooks } from './generated/openapi.js';

type PayloadOf<T> = T extends { requestBody: { content: { 'application/json': infer B } } } ? B : never;

/**
 * A verified webhook event, discriminated by `type`: one member per entry of the `webhooks` section of the API's
 * OpenAPI document, so an event type added to the API is part of it after regenerating.
 */
export type WebhookEvent = { [K in keyof Webhooks]: PayloadOf<Webhooks[K]['post']> }[keyof Webhooks];

/** The header that carries the signature of every webhook request. */
export const SIGNATURE_HEADER = 'Service-Signature';

/** Default allowed age of a signature's timestamp, in seconds (Stripe's default too). */
export const DEFAULT_TOLERANCE_SECONDS = 300;

/** Thrown when a webhook request does not carry a valid, fresh signature. Answer such a request with 400. */
export class SignatureVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SignatureVerificationError';
  }
}

/**
 * Verifies a webhook request and returns its event. `rawBody` must be the body exactly as received (do not parse
 * and re-serialise it); `header` is the Service-Signature value, `t={unix seconds},v1={hex}[,v1={hex}…]`; `secret`
 * is the endpoint's whole `whsec_…` string. Accepted when any v1 entry equals the HMAC-SHA256 of "{t}.{rawBody}"
 * (compared in constant time; during a secret rotation two entries are sent) and the timestamp is at most
 * `toleranceSeconds` old (0 skips the age check).
 * @throws SignatureVerificationError when the header is missing or malformed, no entry matches, or it is too old.
 */
export function constructEvent(
  // Uint8Array, which a Node.js Buffer is: a project without @types/node can call it too.
  rawBody: string | Uint8Array,
  header: string | string[] | undefined | null,
  secret: string,
  toleranceSeconds: number = DEFAULT_TOLERANCE_SECONDS,
): WebhookEvent {
  const value = Array.isArray(header) ? header.join(',') : header;
  if (!value)
    throw new SignatureVerificationError(
      `No ${SIGNATURE_HEADER} header: is this request from the Filing Compliance Service?`,
    );
  const { timestamp, signatures } = parseHeader(value);
  if (timestamp === null || !signatures.length) {
    throw new SignatureVerificationError(
      `Malformed ${SIGNATURE_HEADER} header: expected t={unix seconds},v1={hex signature}`,
    );
  }
  const body = typeof rawBody === 'string' ? rawBody : new TextDecoder().decode(rawBody);
  const expected = createHmac('sha256', secret).update(`${timestamp}.${body}`, 'utf8').digest();
  if (!signatures.some((s) => s.length === expected.length && timingSafeEqual(s, expected))) {
    throw new SignatureVerificationError(
      'No signature matches the expected one for this body and secret: check the whsec_ secret and that the raw body is passed unchanged',
    );
  }
  const age = Math.floor(Date.now() / 1000) - timestamp;
  if (toleranceSeconds > 0 && age > toleranceSeconds) {
    throw new SignatureVerificationError(
      `The signature's timestamp is ${age} seconds old, more than the ${toleranceSeconds} allowed (a replayed request?)`,
    );
  }
  try {
    return JSON.parse(body) as WebhookEvent;
  } catch {
    throw new SignatureVerificationError('The signed body is not JSON');
  }
}

function parseHeader(header: string): { timestamp: number | null; signatures: Buffer[] } {
  let timestamp: number | null = null;
  const signatures: Buffer[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't' && timestamp === null && /^\d+$/.test(value)) timestamp = Number(value);
    // Only well-formed hex is compared; anything else can never match and is skipped.
    if (key === 'v1' && /^[0-9a-f]{64}$/i.test(value)) signatures.push(Buffer.from(value, 'hex'));
  }
  return { timestamp, signatures };
}

/**
 * The Service-Signature value the service would send for `rawBody`: `t={timestamp},v1={hex}` with one v1 per
 * secret, in the order given. For tests of your webhook handler, and for `filing-compliance listen`.
 * @param timestamp unix seconds; default now.
 */
export function signatureHeader(
  rawBody: string,
  secrets: string | string[],
  timestamp: number = Math.floor(Date.now() / 1000),
): string {
  const v1 = (Array.isArray(secrets) ? secrets : [secrets]).map(
    (secret) => `v1=${createHmac('sha256', secret).update(`${timestamp}.${rawBody}`, 'utf8').digest('hex')}`,
  );
  return [`t=${timestamp}`, ...v1].join(',');
}

/** A new random signing secret in the service's format: `whsec_` and 32 random bytes in base64url. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

/** The webhook helpers, also reachable as `client.webhooks` and `FilingCompliance.webhooks`. */
export const webhooks = {
  constructEvent,
  signatureHeader,
  newSigningSecret,
  SIGNATURE_HEADER,
  DEFAULT_TOLERANCE_SECONDS,
};

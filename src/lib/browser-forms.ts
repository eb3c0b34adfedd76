import { createHmac } from 'node:crypto';
import { safeEqual } from './secrets.js';

/*
 * What the server-rendered browser parts (console, partner portal) share about their forms: the one-shot flash
 * message kept in a short-lived cookie, and the CSRF tokens (AUTH-10): a session's synchronizer token, or before any
 * session the HMAC of a nonce kept in an HttpOnly cookie. Each part keeps its own cookie names, paths and purposes.
 */

/** A one-shot message shown on the next page. */
export interface Flash {
  kind: 'ok' | 'error';
  text: string;
}

/** A flash message as a cookie value (base64url JSON). */
export function encodeFlash(flash: Flash): string {
  return Buffer.from(JSON.stringify(flash)).toString('base64url');
}

/** The flash message of a cookie value; null when absent or not one (its text cut at 500 characters). */
export function decodeFlash(raw: string | undefined): Flash | null {
  if (!raw) return null;
  try {
    const f = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as Flash;
    return (f.kind === 'ok' || f.kind === 'error') && typeof f.text === 'string'
      ? { kind: f.kind, text: f.text.slice(0, 500) }
      : null;
  } catch {
    return null;
  }
}

/** The CSRF token of a POST body: `_csrf` of a url-encoded form, or of the fields of a multipart form read so far. */
function bodyCsrf(body: unknown): string {
  const raw = (body as Record<string, unknown> | undefined)?._csrf;
  return typeof raw === 'string' ? raw : '';
}

/** Whether a POST body carries `expected` as its `_csrf` (constant time; false when either is missing). */
export function carriesToken(body: unknown, expected: string | null | undefined): boolean {
  const sent = bodyCsrf(body);
  return Boolean(expected && sent && safeEqual(sent, expected));
}

/**
 * The form token of a pre-session nonce: its HMAC under the server secret, keyed by `purpose` so that one part's
 * token never passes for another's. A cross-site page can neither read the nonce's cookie nor compute this.
 */
export function nonceToken(secret: string, purpose: string, nonce: string): string {
  return createHmac('sha256', `${purpose}:${secret}`).update(nonce).digest('base64url');
}

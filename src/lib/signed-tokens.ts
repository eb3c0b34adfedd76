import { createHmac } from 'node:crypto';
import { safeEqual } from './secrets.js';

/*
 * Tokens that carry their own MAC under a server secret (AUTH-14): `<token>.<MAC>`, the MAC an HMAC-SHA256 of the
 * token (and of what it is bound to) under a key made of the purpose and the secret, in base64url. A process tells
 * a token it issued from a made-up one by itself, so a forged session cookie or form token is refused before any
 * database look-up. The purpose keeps a MAC made for one use from passing for another.
 */

const SIGNED = /^([A-Za-z0-9_.-]{16,200})\.([A-Za-z0-9_-]{43})$/;

/**
 * `token` with its MAC appended: `<token>.<MAC>`. `boundTo`: what the token is only valid with (e.g. the session a
 * form was shown in), checked by {@link verifiedToken} and never written into the token.
 * @param secret the server secret (ctx.secrets.fileUrlSecret).
 * @param purpose what the token is for, e.g. 'dashboard-session'.
 * @param token 16 to 200 characters of `[A-Za-z0-9_.-]`.
 */
export function signToken(secret: string, purpose: string, token: string, boundTo = ''): string {
  return `${token}.${macOf(secret, purpose, token, boundTo)}`;
}

/**
 * The token inside `signed` when its MAC holds for `purpose` and `boundTo`, else null (a forged, altered or foreign
 * token, or none at all). Costs one HMAC, compared in constant time.
 */
export function verifiedToken(
  secret: string,
  purpose: string,
  signed: string | undefined,
  boundTo = '',
): string | null {
  const parts = signed ? SIGNED.exec(signed) : null;
  if (!parts) return null;
  return safeEqual(parts[2], macOf(secret, purpose, parts[1], boundTo)) ? parts[1] : null;
}

function macOf(secret: string, purpose: string, token: string, boundTo: string): string {
  return createHmac('sha256', `${purpose}:${secret}`).update(`${boundTo}\u0000${token}`).digest('base64url');
}

import { randomInt } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import { sha256 } from '../../lib/secrets.js';

/*
 * The second factor (PORTAL-5): RFC 6238 TOTP (SHA-1, 6 digits, 30-second steps: what every authenticator app
 * reads from an otpauth:// URI), through the otpauth library, and one-time recovery codes.
 */

const ISSUER = 'Filing Compliance portal';
const PERIOD_SECONDS = 30;
/** Codes of the step before and after the current one are accepted too (a phone's clock a little off). */
const WINDOW = 1;
/** Recovery codes issued at enrolment, each good once. */
const RECOVERY_CODE_COUNT = 10;
// No 0/O, 1/I/L: codes are read off paper and typed.
const CODE_ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';

function totpOf(base32Secret: string, email: string): TOTP {
  return new TOTP({
    issuer: ISSUER,
    label: email,
    algorithm: 'SHA1',
    digits: 6,
    period: PERIOD_SECONDS,
    secret: Secret.fromBase32(base32Secret),
  });
}

/** A new random authenticator secret (160 bits, base32, as RFC 4226 recommends). */
export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

/** The otpauth:// URI an authenticator app reads (typed in, or from a QR code) for a secret. */
export function totpUri(base32Secret: string, email: string): string {
  return totpOf(base32Secret, email).toString();
}

/**
 * The time step a 6-digit code belongs to when it is valid for the secret now (± one step), else null. The caller
 * accepts the step only when it is later than the member's last accepted step (a code works once, PORTAL-5).
 * @param nowMs the time to check at (ms since the epoch); tests pass their own.
 */
export function totpStep(base32Secret: string, code: string, nowMs = Date.now()): number | null {
  const token = code.replace(/\s+/g, '');
  if (!/^\d{6}$/.test(token)) return null;
  const delta = totpOf(base32Secret, 'member').validate({ token, timestamp: nowMs, window: WINDOW });
  return delta === null ? null : Math.floor(nowMs / 1000 / PERIOD_SECONDS) + delta;
}

/** New recovery codes, `XXXXX-XXXXX` (about 49 bits each); only their {@link recoveryCodeHash} is stored. */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    const chars = Array.from({ length: 10 }, () => CODE_ALPHABET[randomInt(CODE_ALPHABET.length)]).join('');
    return `${chars.slice(0, 5)}-${chars.slice(5)}`;
  });
}

/** The stored form of a recovery code: sha256 of its letters in upper case, spaces and dashes ignored. */
export function recoveryCodeHash(code: string): string {
  return sha256(`portal-recovery:${code.replace(/[\s-]/g, '').toUpperCase()}`);
}

/** Whether typed text has the shape of a recovery code rather than a TOTP code. */
export function looksLikeRecoveryCode(text: string): boolean {
  return text.replace(/[\s-]/g, '').length === 10;
}

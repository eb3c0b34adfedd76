import { timingSafeEqual } from 'node:crypto';
import { type Argon2Options, argon2idHashInWorker, argon2idVerifyInWorker, scryptInWorker } from './password-worker.js';

/**
 * argon2id cost parameters for new hashes (AUTH-9): 46 MiB, one pass, one lane, the first configuration of the OWASP
 * Password Storage Cheat Sheet. About 60 ms per hash on a 2-core machine, against about 1 s for scrypt at the
 * cheat sheet's scrypt minimum: the answer bound of a sign-in during a storm (AUTH-8) has room for the check.
 * They are written into every hash string, so raising them later keeps old hashes verifiable.
 */
const ARGON2ID: Argon2Options = { memoryCost: 47_104, timeCost: 1, parallelism: 1 };
const ARGON2ID_PREFIX = `$argon2id$v=19$m=${ARGON2ID.memoryCost},t=${ARGON2ID.timeCost},p=${ARGON2ID.parallelism}$`;
const SCRYPT_KEY_BYTES = 64;

/**
 * Hashes a password with argon2id and a fresh random salt (AUTH-9), in the hashing child process.
 * @returns the PHC string `$argon2id$v=19$m=47104,t=1,p=1$<salt>$<hash>`.
 */
export async function hashPassword(password: string): Promise<string> {
  return argon2idHashInWorker(password.normalize('NFKC'), ARGON2ID);
}

/**
 * Checks a password against a stored hash: an argon2id PHC string (`hashPassword`), or an older
 * `scrypt$N=…,r=…,p=…$<salt>$<key>` hash, comparing in constant time.
 * @returns false for a wrong password or a malformed hash (never throws on bad input).
 */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const normalized = password.normalize('NFKC');
  if (stored.startsWith('$argon2id$')) return argon2idVerifyInWorker(normalized, stored).catch(() => false);
  const parsed = parseScryptHash(stored);
  if (!parsed) return false;
  const key = await scryptInWorker(normalized, parsed.salt, SCRYPT_KEY_BYTES, {
    ...parsed.params,
    maxmem: 256 * parsed.params.N * parsed.params.r + 1024 * 1024,
  });
  return key.length === parsed.key.length && timingSafeEqual(key, parsed.key);
}

/** Whether a stored hash was made otherwise than `hashPassword` makes one now (an older scrypt hash, other costs). */
export function passwordNeedsRehash(stored: string): boolean {
  return !stored.startsWith(ARGON2ID_PREFIX);
}

/**
 * A hash that never matches (its salt and hash are zeros), verified for unknown e-mails so that they take as long as
 * known ones.
 */
export const DUMMY_HASH = `${ARGON2ID_PREFIX}${'A'.repeat(22)}$${'A'.repeat(43)}`;

function parseScryptHash(
  stored: string,
): { params: { N: number; r: number; p: number }; salt: Buffer; key: Buffer } | null {
  const m = /^scrypt\$N=(\d+),r=(\d+),p=(\d+)\$([A-Za-z0-9+/=]+)\$([A-Za-z0-9+/=]+)$/.exec(stored);
  if (!m) return null;
  const [N, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])];
  // Refuse absurd parameters from a tampered row instead of allocating gigabytes.
  if (N < 2 || N > 2 ** 20 || (N & (N - 1)) !== 0 || r < 1 || r > 32 || p < 1 || p > 16) return null;
  return { params: { N, r, p }, salt: Buffer.from(m[4], 'base64'), key: Buffer.from(m[5], 'base64') };
}

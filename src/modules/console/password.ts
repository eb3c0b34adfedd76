import { randomBytes, timingSafeEqual } from 'node:crypto';
import { scryptInWorker } from './scrypt-worker.js';

/**
 * scrypt cost parameters for new hashes: N=2^17, r=8, p=1 (the OWASP Password Storage Cheat Sheet minimum,
 * ~128 MiB and a few hundred ms per hash). They are written into every hash string, so raising them later
 * keeps old hashes verifiable.
 */
const PARAMS = { N: 2 ** 17, r: 8, p: 1 };
const KEY_BYTES = 64;
const SALT_BYTES = 16;

// In a child process (scrypt-worker.ts): its 128 MiB never touch the HTTP server's address space.
function derive(password: string, salt: Buffer, params: { N: number; r: number; p: number }): Promise<Buffer> {
  return scryptInWorker(password.normalize('NFKC'), salt, KEY_BYTES, {
    ...params,
    maxmem: 256 * params.N * params.r + 1024 * 1024,
  });
}

/**
 * Hashes a password with scrypt and a fresh 16-byte salt (AUTH-9).
 * @returns `scrypt$N=131072,r=8,p=1$<salt base64>$<key base64>`.
 */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, PARAMS);
  return `scrypt$N=${PARAMS.N},r=${PARAMS.r},p=${PARAMS.p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

/**
 * Checks a password against a hash made by `hashPassword`, comparing in constant time.
 * @returns false for a wrong password or a malformed hash (never throws on bad input).
 */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parseHash(stored);
  if (!parsed) return false;
  const key = await derive(password, parsed.salt, parsed.params);
  return key.length === parsed.key.length && timingSafeEqual(key, parsed.key);
}

/** A hash that never matches, verified for unknown e-mails so that they take as long as known ones. */
export const DUMMY_HASH = `scrypt$N=${PARAMS.N},r=${PARAMS.r},p=${PARAMS.p}$${Buffer.alloc(SALT_BYTES).toString('base64')}$${Buffer.alloc(KEY_BYTES).toString('base64')}`;

function parseHash(stored: string): { params: { N: number; r: number; p: number }; salt: Buffer; key: Buffer } | null {
  const m = /^scrypt\$N=(\d+),r=(\d+),p=(\d+)\$([A-Za-z0-9+/=]+)\$([A-Za-z0-9+/=]+)$/.exec(stored);
  if (!m) return null;
  const [N, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])];
  // Refuse absurd parameters from a tampered row instead of allocating gigabytes.
  if (N < 2 || N > 2 ** 20 || (N & (N - 1)) !== 0 || r < 1 || r > 32 || p < 1 || p > 16) return null;
  return { params: { N, r, p }, salt: Buffer.from(m[4], 'base64'), key: Buffer.from(m[5], 'base64') };
}

import { randomFillSync } from 'node:crypto';

/*
 * Cryptographic random bytes drawn from a buffer the operating system refills 4 KiB at a time. Each `randomBytes`
 * call pays a system call and OpenSSL's set-up (about 5 µs for 12 bytes on the 2-vCPU development VM), and an order
 * placement needs many small draws: ulid asks for one byte per character of an id (16 per id), and sealing the EIN's
 * tax id asks for a 12-byte IV. Drawn bytes are never handed out twice.
 */
const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let next = POOL_BYTES;

function reserve(count: number): number {
  if (next + count > POOL_BYTES) {
    randomFillSync(pool);
    next = 0;
  }
  const at = next;
  next += count;
  return at;
}

/** One cryptographically random byte (0-255). */
export function randomByte(): number {
  return pool[reserve(1)]!;
}

/**
 * `count` cryptographically random bytes, as a Buffer of their own (a copy: the caller may keep it).
 * @throws RangeError when `count` is not between 1 and 4096.
 */
export function pooledRandomBytes(count: number): Buffer {
  if (!Number.isInteger(count) || count < 1 || count > POOL_BYTES) {
    throw new RangeError(`count must be an integer from 1 to ${POOL_BYTES}, got ${count}`);
  }
  const at = reserve(count);
  return Buffer.from(pool.subarray(at, at + count));
}

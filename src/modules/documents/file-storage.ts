import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import mime from 'mime-types';
import type { Config } from '../../config-types.js';

/**
 * Document files live under STORAGE_DIR (config.storageDir) at a key the service makes itself
 * (`<environment>/<documentId>`): no part of a path ever comes from a request, so an upload cannot
 * write or read outside the directory (DOC-4).
 */
export function storageKeyFor(environment: string, documentId: string): string {
  if (!/^(live|test)$/.test(environment) || !/^doc_[0-9a-z]+$/.test(documentId))
    throw new Error(`bad storage key parts: ${environment}/${documentId}`);
  return `${environment}/${documentId}`;
}

/** Absolute path of a storage key; refuses keys that would leave the storage directory. */
function storagePath(config: Pick<Config, 'storageDir'>, key: string): string {
  const root = path.resolve(config.storageDir);
  const full = path.resolve(root, key);
  if (!full.startsWith(root + path.sep)) throw new Error(`storage key escapes the storage directory: ${key}`);
  return full;
}

/** Writes the bytes atomically (temp file + rename), creating directories as needed. */
export async function writeStoredFile(
  config: Pick<Config, 'storageDir'>,
  key: string,
  bytes: Uint8Array,
): Promise<void> {
  const full = storagePath(config, key);
  await fs.promises.mkdir(path.dirname(full), { recursive: true });
  const tmp = `${full}.${randomBytes(6).toString('hex')}.tmp`;
  await fs.promises.writeFile(tmp, bytes, { mode: 0o600 });
  await fs.promises.rename(tmp, full);
}

/** Removes a stored file; a missing file is not an error (used to undo a write whose transaction failed). */
export async function removeStoredFile(config: Pick<Config, 'storageDir'>, key: string): Promise<void> {
  await fs.promises.rm(storagePath(config, key), { force: true });
}

/**
 * A read stream of a stored file with its size in bytes and the type its first bytes show (sniffFileType; null
 * when they match no known type), or null when the file is missing on disk.
 */
export async function openStoredFile(
  config: Pick<Config, 'storageDir'>,
  key: string,
): Promise<{ stream: fs.ReadStream; size: number; sniffedType: string | null } | null> {
  const full = storagePath(config, key);
  const stat = await fs.promises.stat(full).catch(() => null);
  if (!stat?.isFile()) return null;
  const handle = await fs.promises.open(full, 'r');
  let head: Buffer;
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(16), 0, 16, 0);
    head = buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
  return { stream: fs.createReadStream(full), size: stat.size, sniffedType: sniffFileType(head) };
}

/** The file types a document may have, told apart by their first bytes (never by the client's word). */
const SIGNATURES: Array<[string, number[][]]> = [
  ['application/pdf', [[0x25, 0x50, 0x44, 0x46, 0x2d]]],
  ['image/png', [[0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]]],
  ['image/jpeg', [[0xff, 0xd8, 0xff]]],
  [
    'image/tiff',
    [
      [0x49, 0x49, 0x2a, 0x00],
      [0x4d, 0x4d, 0x00, 0x2a],
    ],
  ],
];

/** The content types a document may have (PDF, PNG, JPEG, TIFF), told apart by their leading bytes. */
export const ALLOWED_FILE_TYPES = SIGNATURES.map(([type]) => type);

/** The content type of `bytes` by its signature, or null when it is none of ALLOWED_FILE_TYPES. */
function sniffFileType(bytes: Uint8Array): string | null {
  for (const [type, signatures] of SIGNATURES) {
    if (signatures.some((sig) => sig.every((b, i) => bytes[i] === b))) return type;
  }
  return null;
}

/**
 * The content type to store for an upload: what the bytes are when they carry a known signature; otherwise the
 * caller's word (its part content type, else its file name's extension) when that names an accepted type, so a
 * scanned or generated file without the usual header is not refused. Bytes that open like markup (`<html>`,
 * `<svg>`, `<?xml`) are never taken on the caller's word. Files are served with `nosniff` and a sandboxing CSP.
 * @returns null when the upload is not an accepted document (415 for the caller).
 */
export function acceptedFileType(
  bytes: Uint8Array,
  claimedType?: string | null,
  fileName?: string | null,
): string | null {
  const sniffed = sniffFileType(bytes);
  if (sniffed) return sniffed;
  if (looksLikeMarkup(bytes)) return null;
  const byName = fileName ? mime.lookup(fileName) : false;
  const claims = [claimedType?.split(';')[0]?.trim().toLowerCase(), byName || undefined];
  return claims.find((t): t is string => Boolean(t) && ALLOWED_FILE_TYPES.includes(t!)) ?? null;
}

function looksLikeMarkup(bytes: Uint8Array): boolean {
  const head = Buffer.from(bytes.subarray(0, 512))
    .toString('utf8')
    .replace(/^\uFEFF/, '')
    .trimStart();
  return head.startsWith('<');
}

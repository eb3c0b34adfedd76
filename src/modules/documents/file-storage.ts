import { Readable } from 'node:stream';
import mime from 'mime-types';

/**
 * Document files are stored (document-store.ts) at a key the service makes itself (`<environment>/<documentId>`):
 * no part of a key ever comes from a request, so an upload cannot write or read outside the store (DOC-4).
 */
export function storageKeyFor(environment: string, documentId: string): string {
  if (!/^(live|test)$/.test(environment) || !/^doc_[0-9a-z]+$/.test(documentId))
    throw new Error(`bad storage key parts: ${environment}/${documentId}`);
  return `${environment}/${documentId}`;
}

/**
 * The first `bytes` bytes of a stream (fewer when it is shorter), and a stream of the whole content, those bytes
 * included: the type of a file is read from its head before it is stored or served (DOC-3), without reading the
 * rest into memory. Errors of `source` reach the returned stream.
 */
export async function peekStream(source: Readable, bytes: number): Promise<{ head: Buffer; stream: Readable }> {
  const chunks = source[Symbol.asyncIterator]();
  const read: Buffer[] = [];
  let length = 0;
  let ended = false;
  while (length < bytes) {
    const next = await chunks.next();
    if (next.done) {
      ended = true;
      break;
    }
    const chunk = Buffer.from(next.value);
    read.push(chunk);
    length += chunk.length;
  }
  const first = Buffer.concat(read);
  async function* whole() {
    if (first.length) yield first;
    if (ended) return;
    for (;;) {
      const next = await chunks.next();
      if (next.done) return;
      yield Buffer.from(next.value);
    }
  }
  return { head: first.subarray(0, bytes), stream: Readable.from(whole(), { objectMode: false }) };
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
export function sniffFileType(bytes: Uint8Array): string | null {
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

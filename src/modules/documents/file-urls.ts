import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';
import type { AppContext } from '../../context.js';
import { safeEqual } from '../../lib/secrets.js';

/** Lifetime of the fileUrl returned by GET /documents and GET /documents/{id}: one hour (DOC-5). */
export const FILE_URL_TTL_SECONDS = 3600;

/**
 * Lifetime of the fileUrl inside a `document.uploaded` event: 7 days, so the link still works when a
 * delivery succeeds on its last retry (the default schedule spans about 28 hours) or is resent later.
 * GET /documents/{id} always gives a fresh one-hour link.
 */
export const EVENT_FILE_URL_TTL_SECONDS = 7 * 24 * 3600;

/** Path of the file route (documents.web-routes.ts). */
export const FILES_PATH = '/files';

/**
 * A link to the document's file served by this service: `<origin>/files/<id>?expires=<unix s>&signature=<hex>`,
 * signature = HMAC-SHA256(`<documentId>.<expires>`) keyed with the instance's file-URL secret. Anyone with
 * the link can fetch the file until it expires; nothing else grants access.
 * @param options.ttlSeconds lifetime in seconds (default one hour; negative values make an expired link, for tests).
 */
export function signedFileUrl(
  ctx: AppContext,
  documentId: string,
  options: { ttlSeconds?: number; now?: Date } = {},
): string {
  const now = options.now ?? new Date();
  const expires = Math.floor(now.getTime() / 1000) + (options.ttlSeconds ?? FILE_URL_TTL_SECONDS);
  // Every GET of a document signs a fresh link: written as a string rather than through two URL objects, and keyed
  // with a key object made once per secret, a link costs about 2 µs instead of 8.
  const signature = fileSignature(ctx.secrets.fileUrlSecret, documentId, expires);
  return `${originOf(ctx.config.liveBaseUrl)}${FILES_PATH}/${encodeURIComponent(documentId)}?expires=${expires}&signature=${signature}`;
}

/** Why a file link is refused, or 'ok'. */
export type FileLinkCheck = 'ok' | 'expired' | 'bad_signature';

/** Checks a file link's signature (constant time) and expiry. `expires` is unix seconds as sent in the query. */
export function checkFileLink(
  secret: string,
  documentId: string,
  expires: number,
  signature: string,
  now: Date = new Date(),
): FileLinkCheck {
  if (!safeEqual(fileSignature(secret, documentId, expires), signature.toLowerCase())) return 'bad_signature';
  return expires * 1000 <= now.getTime() ? 'expired' : 'ok';
}

function fileSignature(secret: string, documentId: string, expires: number): string {
  return createHmac('sha256', keyOf(secret)).update(`${documentId}.${expires}`).digest('hex');
}

// One entry per configured base URL and secret (a process has one of each; tests a few).
const origins = new Map<string, string>();
const keys = new Map<string, KeyObject>();

function originOf(baseUrl: string): string {
  let origin = origins.get(baseUrl);
  if (origin === undefined) {
    origin = new URL(baseUrl).origin;
    origins.set(baseUrl, origin);
  }
  return origin;
}

function keyOf(secret: string): KeyObject {
  let key = keys.get(secret);
  if (!key) {
    key = createSecretKey(Buffer.from(secret, 'utf8'));
    keys.set(secret, key);
  }
  return key;
}

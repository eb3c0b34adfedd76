import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext, Environment, Tenant } from '../../context.js';
import { AppError } from '../../lib/errors.js';
import { sha256 } from '../../lib/secrets.js';
import { authFailureThrottle } from '../rate-limits/rate-limits.js';
import type { ApiKeyCache } from './api-key-cache.js';
import { keyShapeOf } from './api-key-format.js';
import { recordApiKeyUse } from './api-keys.repo.js';

/** A key's use is written at most this often (seconds), by each process and in the database (PORTAL-12). */
const KEY_USE_EVERY_SECONDS = 300;
/** When this process last wrote each key's use (ms since the epoch); emptied when it holds this many keys. */
const KEY_USES_KEPT = 10_000;
const usesWritten = new Map<string, number>();

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the API-key hook on every /v1 and /test/v1 route. */
    tenant: Tenant;
    /** The id of the API key that authenticated the request (key_…): the per-key rate limit counts by it. */
    apiKeyId: string;
  }
}

/**
 * onRequest hook for the integrator API mounted for `environment` (AUTH-1, AUTH-2, AUTH-14). Missing, unknown or
 * revoked key: 401. A key of the other environment: 401 naming the right base address. Every 401 counts a failure of
 * the client address; an address beyond RATE_LIMIT_AUTH_FAILURES gets 429 before its key is looked at. A key without
 * a valid checksum is looked up only when it was issued before checksums existed (AUTH-3), so a made-up key costs no
 * database read; the others are resolved through `keys`, the process's key cache (AUTH-12).
 * @throws AppError unauthorized (401); wrong_environment (401) for a key of the other environment; rate_limited (429).
 */
export function apiKeyAuth(ctx: AppContext, environment: Environment, keys: ApiKeyCache) {
  const baseUrlOf = (env: Environment) => (env === 'live' ? ctx.config.liveBaseUrl : ctx.config.testBaseUrl);
  const failures = authFailureThrottle(ctx.config.rateLimits);
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    failures.check(request, reply);
    const refused = (code: 'unauthorized' | 'wrong_environment', message: string) => {
      failures.failed(request);
      return new AppError(code, message);
    };
    const header = request.headers['x-api-key'];
    const key = Array.isArray(header) ? header[0] : header;
    if (!key) throw refused('unauthorized', 'Missing API key: send it in the x-api-key header');
    const shape = keyShapeOf(key);
    if (!shape)
      throw refused(
        'unauthorized',
        'Invalid API key: it is not a key as this service issues them (sk_live_ or sk_test_ and the rest, copied whole)',
      );
    const keyHash = sha256(key);
    const row = shape.checksummed || (await keys.isUncheckedKey(keyHash)) ? await keys.find(keyHash) : null;
    // A cached entry may outlive the end a roll gave its key (PORTAL-12): nothing announces an end when it comes.
    if (!row || (row.expires_at && row.expires_at.getTime() <= Date.now()))
      throw refused('unauthorized', 'Invalid API key: it is unknown or has been revoked');
    if (row.environment !== environment) {
      throw refused(
        'wrong_environment',
        `This is a ${row.environment} API key; ${row.environment} requests go to ${baseUrlOf(row.environment)}`,
      );
    }
    request.tenant = { organizationId: row.organization_id, environment };
    request.apiKeyId = row.id;
    await noteKeyUse(ctx, request, row.id);
  };
}

// PORTAL-12: the portal shows when a key was last used, to within KEY_USE_EVERY_SECONDS; most requests write nothing.
// A failed write is logged and the request goes on.
async function noteKeyUse(ctx: AppContext, request: FastifyRequest, keyId: string): Promise<void> {
  const now = Date.now();
  const last = usesWritten.get(keyId);
  if (last !== undefined && now - last < KEY_USE_EVERY_SECONDS * 1000) return;
  if (usesWritten.size >= KEY_USES_KEPT) usesWritten.clear();
  usesWritten.set(keyId, now);
  try {
    await recordApiKeyUse(ctx.pool, keyId, KEY_USE_EVERY_SECONDS);
  } catch (err) {
    request.log.warn({ err }, 'could not note the API key use');
  }
}

import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext, Environment, Tenant } from '../../context.js';
import { AppError } from '../../lib/errors.js';
import { sha256 } from '../../lib/secrets.js';
import { authFailureThrottle } from '../rate-limits/rate-limits.js';
import type { ApiKeyCache } from './api-key-cache.js';
import { keyShapeOf } from './api-key-format.js';

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
    if (!shape) throw refused('unauthorized', 'Invalid API key: keys start with sk_live_ or sk_test_');
    const keyHash = sha256(key);
    const row = shape.checksummed || (await keys.isUncheckedKey(keyHash)) ? await keys.find(keyHash) : null;
    if (!row) throw refused('unauthorized', 'Invalid API key: it is unknown or has been revoked');
    if (row.environment !== environment) {
      throw refused(
        'wrong_environment',
        `This is a ${row.environment} API key; ${row.environment} requests go to ${baseUrlOf(row.environment)}`,
      );
    }
    request.tenant = { organizationId: row.organization_id, environment };
    request.apiKeyId = row.id;
  };
}

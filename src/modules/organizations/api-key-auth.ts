import type { FastifyRequest } from 'fastify';
import type { AppContext, Environment, Tenant } from '../../context.js';
import { AppError } from '../../lib/errors.js';
import { sha256 } from '../../lib/secrets.js';
import type { ApiKeyCache } from './api-key-cache.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the API-key hook on every /v1 and /test/v1 route. */
    tenant: Tenant;
    /** The id of the API key that authenticated the request (key_…): the per-key rate limit counts by it. */
    apiKeyId: string;
  }
}

const KEY_SHAPE = /^sk_(live|test)_[A-Za-z0-9_-]{32,}$/;

/**
 * onRequest hook for the integrator API mounted for `environment`. Missing, unknown or revoked key: 401.
 * A key of the other environment: 401 naming the right base address. Keys are resolved through `keys`, the
 * process's key cache (AUTH-12): no database round trip in the steady state.
 * @throws AppError unauthorized (401); wrong_environment (401) for a key of the other environment.
 */
export function apiKeyAuth(ctx: AppContext, environment: Environment, keys: ApiKeyCache) {
  const baseUrlOf = (env: Environment) => (env === 'live' ? ctx.config.liveBaseUrl : ctx.config.testBaseUrl);
  return async (request: FastifyRequest): Promise<void> => {
    const header = request.headers['x-api-key'];
    const key = Array.isArray(header) ? header[0] : header;
    if (!key) throw new AppError('unauthorized', 'Missing API key: send it in the x-api-key header');
    const shape = KEY_SHAPE.exec(key);
    if (!shape) throw new AppError('unauthorized', 'Invalid API key: keys start with sk_live_ or sk_test_');
    const row = await keys.find(sha256(key));
    if (!row) throw new AppError('unauthorized', 'Invalid API key: it is unknown or has been revoked');
    if (row.environment !== environment) {
      throw new AppError(
        'wrong_environment',
        `This is a ${row.environment} API key; ${row.environment} requests go to ${baseUrlOf(row.environment)}`,
      );
    }
    request.tenant = { organizationId: row.organization_id, environment };
    request.apiKeyId = row.id;
  };
}

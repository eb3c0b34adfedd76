import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { AppError } from '../../lib/errors.js';
import { safeEqual } from '../../lib/secrets.js';
import { adminAuthThrottle } from '../rate-limits/rate-limits.js';

/**
 * onRequest hook for /admin/v1 and /metrics: `Authorization: Bearer <OPERATOR_TOKEN>`, anything else 401. A client
 * address that failed RATE_LIMIT_ADMIN_AUTH_FAILURES times in the current window gets 429 without a check, so
 * guessing costs the guesser time and the service nothing (the count is shared by every process).
 * @throws AppError unauthorized (401) for a missing or wrong token; rate_limited (429) while throttled.
 */
export function operatorAuth(ctx: AppContext) {
  const throttle = adminAuthThrottle(ctx.config.rateLimits);
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    throttle.check(request, reply);
    const header = request.headers.authorization ?? '';
    const match = /^Bearer (.+)$/.exec(header);
    if (match && safeEqual(match[1], ctx.secrets.operatorToken)) return;
    throttle.failed(request);
    if (!match)
      throw new AppError('unauthorized', 'Missing operator token: send Authorization: Bearer <OPERATOR_TOKEN>');
    throw new AppError('unauthorized', 'Invalid operator token');
  };
}

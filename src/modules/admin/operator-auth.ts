import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { AppError } from '../../lib/errors.js';
import { safeEqual } from '../../lib/secrets.js';

/**
 * onRequest hook for /admin/v1: `Authorization: Bearer <OPERATOR_TOKEN>`, anything else 401 (issue 2 item 4).
 * @throws AppError unauthorized (401) for a missing or wrong token.
 */
export function operatorAuth(ctx: AppContext) {
  return async (request: FastifyRequest): Promise<void> => {
    const header = request.headers.authorization ?? '';
    const match = /^Bearer (.+)$/.exec(header);
    if (!match) throw new AppError('unauthorized', 'Missing operator token: send Authorization: Bearer <OPERATOR_TOKEN>');
    if (!safeEqual(match[1], ctx.secrets.operatorToken)) throw new AppError('unauthorized', 'Invalid operator token');
  };
}

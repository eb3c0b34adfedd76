import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.js';
import { listRequestLog, REQUEST_LOG_DAYS } from '../request-log/request-log.service.js';
import { LOG_PAGE_SIZE, LogQuery, portalTenant } from './log-filters.js';
import { render } from './portal.web.js';

/**
 * The request log (PORTAL-24): the session's tenant's failed integrator API requests of the last week, filtered by
 * status, path (its start) and request id (exact), newest first in keyset pages. Every role may read; the key is shown
 * by its id and redacted form only.
 */
export async function portalRequestLogRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  app.get('/request-log', { schema: { hide: true } }, async (request, reply) => {
    const tenant = portalTenant(request, 'logs.read');
    const q = new LogQuery(request.query);
    const statusText = q.text('status', 3);
    const status = statusText ? Number(statusText) : undefined;
    if (status !== undefined && !(Number.isInteger(status) && status >= 400 && status <= 599))
      q.errors.status = 'must be a status from 400 to 599';
    const path = q.text('path', 2048);
    if (path && !path.startsWith('/')) q.errors.path = 'must start with /';
    const requestId = q.text('requestId', 64);
    const before = q.id('before', 'freq');
    const page = q.failed
      ? { items: [], hasMore: false }
      : await listRequestLog(ctx, tenant, {
          status,
          pathPrefix: path || undefined,
          requestId: requestId || undefined,
          before,
          limit: LOG_PAGE_SIZE,
        });
    return render(ctx, request, reply.status(q.failed ? 400 : 200), 'request-log', {
      title: 'Failed API requests',
      section: 'request-log',
      q,
      page,
      days: REQUEST_LOG_DAYS,
    });
  });
}

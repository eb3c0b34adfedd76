import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.js';
import { sendCsv } from '../../lib/csv.js';
import type { Query } from '../../lib/list-filters.js';
import { auditCsvLines, auditPageView } from '../audit/audit.service.js';
import { render, requireRole } from './portal.web.js';

/**
 * The organization's audit log (AUDIT-6, AUDIT-8), for owners and admins only (audit.read): every change made to the
 * organization shown, both environments, newest first, filtered by action, actor and days, with its CSV export. Only
 * the organization shown: the page never reads another's entries.
 */
export async function portalAuditRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  app.get<{ Querystring: Query }>('/audit-log', { schema: { hide: true } }, async (request, reply) => {
    const org = requireRole(request, 'audit.read');
    const view = await auditPageView(ctx.pool, org.id, request.query);
    return render(ctx, request, reply, 'audit-log', { title: 'Audit log', section: 'audit', ...view });
  });

  app.get<{ Querystring: Query }>('/audit-log.csv', { schema: { hide: true } }, async (request, reply) => {
    const org = requireRole(request, 'audit.read');
    const lines = auditCsvLines(ctx.pool, org.id, request.query);
    return sendCsv(reply, `audit-log-${new Date().toISOString().slice(0, 10)}.csv`, lines);
  });
}

import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.js';
import { sendCsv } from '../../lib/csv.js';
import type { Query } from '../../lib/list-filters.js';
import { auditCsvLines, auditPageView } from '../audit/audit.service.js';
import { listOrganizations } from '../organizations/organizations.service.js';
import { render } from './console.web.js';

/**
 * The audit log of every organization for operators (AUDIT-7, AUDIT-8): newest first, filtered by organization,
 * action, actor and days, with its CSV export.
 */
export async function consoleAuditRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  app.get<{ Querystring: Query }>('/audit-log', { schema: { hide: true } }, async (request, reply) => {
    const [view, organizations] = await Promise.all([
      auditPageView(ctx.pool, null, request.query),
      listOrganizations(ctx.pool),
    ]);
    return render(ctx, request, reply, 'audit-log', { title: 'Audit log', section: 'audit', ...view, organizations });
  });

  app.get<{ Querystring: Query }>('/audit-log.csv', { schema: { hide: true } }, async (request, reply) =>
    sendCsv(
      reply,
      `audit-log-all-${new Date().toISOString().slice(0, 10)}.csv`,
      auditCsvLines(ctx.pool, null, request.query),
    ),
  );
}

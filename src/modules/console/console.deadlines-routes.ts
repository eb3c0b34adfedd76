import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.js';
import { FORMATION_STATES } from '../companies/company-rules.js';
import { render } from './console.web.js';
import { listOrganizations } from '../organizations/organizations.service.js';
import { listTeamDeadlines } from '../compliance/compliance.service.js';
import { presentDeadline } from '../compliance/compliance.views.js';

const STATUSES = ['upcoming', 'open', 'overdue', 'filed'] as const;
/** Rows one page shows at most; the filters narrow it down. */
const PAGE_LIMIT = 300;

/**
 * The console's deadlines view (CAL-17): every tenant's state report deadlines by due date, for the filing team
 * to offer or prepare annual reports. Live by default, like the work queue; by default only what still needs
 * someone (not filed, no order in progress).
 */
export async function consoleComplianceRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  app.get<{ Querystring: Record<string, string | undefined> }>(
    '/deadlines',
    { schema: { hide: true } },
    async (request, reply) => {
      const q = request.query;
      const filter = {
        environment: q.environment === 'test' ? ('test' as const) : ('live' as const),
        state: (FORMATION_STATES as readonly string[]).includes(q.state ?? '') ? q.state! : '',
        status: (STATUSES as readonly string[]).includes(q.status ?? '')
          ? (q.status as (typeof STATUSES)[number])
          : undefined,
        organizationId: q.organizationId || '',
        from: /^\d{4}-\d{2}-\d{2}$/.test(q.from ?? '') ? q.from : undefined,
        to: /^\d{4}-\d{2}-\d{2}$/.test(q.to ?? '') ? q.to : undefined,
        all: q.all === '1',
      };
      const [result, organizations] = await Promise.all([
        listTeamDeadlines(ctx.pool, {
          environment: filter.environment,
          jurisdiction: filter.state || undefined,
          status: filter.status,
          organizationId: filter.organizationId || undefined,
          from: filter.from,
          to: filter.to,
          openOnly: !filter.all,
          limit: PAGE_LIMIT,
        }),
        listOrganizations(ctx.pool),
      ]);
      const names = new Map(organizations.map((o) => [o.id, o.name]));
      return render(ctx, request, reply, 'deadlines', {
        title: 'Deadlines',
        section: 'deadlines',
        filter,
        statuses: STATUSES,
        states: FORMATION_STATES,
        organizations,
        from: result.from,
        to: result.to,
        truncated: result.truncated,
        rows: result.items.map((d) => ({
          ...presentDeadline(d, null),
          legalName: d.legalName,
          organizationId: d.organizationId,
          organizationName: names.get(d.organizationId) ?? d.organizationId,
        })),
      });
    },
  );
}

import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.js';
import type { Query } from '../../lib/list-filters.js';
import { fundingFilterOf, fundingOverview, FUNDING_STATUSES } from '../funding/funding-admin.service.js';
import { listOrganizations } from '../organizations/organizations.service.js';
import { render } from './console.web.js';

/** Rows per list of the funding page. */
const PAGE_SIZE = 50;

/**
 * Funding for operators (FUND-27, FUND-40, FUND-41): every organization's top-ups (failures included, with what
 * disputes and refunds took back of each), automatic recharges (attempts, failures, the top-up that credited each) and
 * every dispute, refund and won dispute of the ledger, filtered by organization, environment, status and days.
 */
export async function consoleFundingRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  app.get<{ Querystring: Query }>('/top-ups', { schema: { hide: true } }, async (request, reply) => {
    const { filter, problems } = fundingFilterOf(request.query);
    const [overview, organizations] = await Promise.all([
      fundingOverview(ctx.pool, filter, PAGE_SIZE, request.query),
      listOrganizations(ctx.pool),
    ]);
    return render(ctx, request, reply, 'top-ups', {
      title: 'Top-ups, recharges and disputes',
      section: 'top-ups',
      filter,
      problems,
      statuses: FUNDING_STATUSES,
      organizations,
      paged: Boolean(request.query.after),
      pageSize: PAGE_SIZE,
      ...overview,
    });
  });
}

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { errorResponses } from '../../lib/schemas.js';
import { setCalendarOverride } from './calendar-overrides.service.js';
import { listRuleChangeViews, listRuleViews, updateRules } from './compliance-rules.service.js';
import * as s from './compliance.schemas.js';

// The admin API authenticates one operator token, so changes are recorded as made by 'operator'.
const ACTOR = 'operator';

/** Operator routes (/admin/v1): the compliance calendar's rules and their change log (CAL-22); overrides (CAL-29). */
export const complianceAdminRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.get('/compliance-rules', { schema: { tags: ['Compliance'] } }, async () => ({
    object: 'list' as const,
    data: await listRuleViews(ctx.pool),
    hasMore: false,
  }));

  app.get(
    '/compliance-rules/changes',
    {
      schema: { tags: ['Compliance'], querystring: s.RuleChangesQuery },
    },
    async (request) => ({
      object: 'list' as const,
      data: await listRuleChangeViews(ctx.pool, request.query.state ?? null, request.query.limit ?? 50),
      hasMore: false,
    }),
  );

  app.put(
    '/compliance-rules/:state',
    {
      schema: {
        tags: ['Compliance'],
        params: s.RuleStateParams,
        body: s.RuleUpdateBody,
        response: errorResponses(404),
      },
    },
    async (request) => updateRules(ctx.pool, request.params.state, request.body, ACTOR),
  );

  // CAL-29, CAL-30, CAL-32: a company's anchor date and estimated tax flag in one state, logged with who and why.
  app.put(
    '/companies/:companyId/calendar-overrides/:state',
    {
      schema: {
        tags: ['Compliance'],
        params: s.OverrideParams,
        body: s.OverrideBody,
        response: errorResponses(404),
      },
    },
    async (request) =>
      setCalendarOverride(ctx.pool, request.params.companyId, request.params.state, request.body, ACTOR),
  );
};

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { ApiPluginOptions } from '../../context.js';
import { operation, operationErrors } from '../../lib/api-operations.js';
import { ValidationError } from '../../lib/errors.js';
import { acceptCursorAliases } from '../../lib/pagination.js';
import { DEADLINE_ID_PREFIX } from './company-deadlines.js';
import { runComplianceReminders } from './compliance-reminders.js';
import * as s from './compliance.schemas.js';
import { getCompanyCalendar, listComplianceDeadlines } from './compliance.service.js';
import { deadlineView } from './compliance.views.js';
import { withFields } from '../../lib/objects.js';

const ABOUT = `Computed from researched state rules (each item carries its confidence and source; dates are not \
adjusted for weekends or holidays). Jurisdictions: the formation state, and every state with a filed foreign \
qualification (registered on its filing date). status: filed when an annual report order for the jurisdiction and \
filingYear was filed; overdue after dueDate; open while the filing window is open; upcoming before. \
estimatedStateFee comes from our state fee schedule (dollars).`;

/** GET /companies/{companyIdOrSlug}/compliance-calendar and GET /compliance-deadlines (CAL-16 .. CAL-19). */
export const complianceRoutes: FastifyPluginAsyncTypebox<ApiPluginOptions> = async (app, { ctx }) => {
  app.get(
    '/companies/:companyIdOrSlug/compliance-calendar',
    {
      schema: {
        ...operation('getComplianceCalendar'),
        summary: "A company's state report deadlines",
        description: `The annual, biennial and initial reports the company owes, with a due date between from and to \
(default: today to 18 months ahead), sorted by dueDate. ${ABOUT} A company without formationDate (or formationState) \
answers 409 naming the field.`,
        params: s.CalendarParams,
        querystring: s.CalendarQuery,
        response: { 200: s.CalendarSchema, ...operationErrors('getComplianceCalendar') },
      },
    },
    async (request) => {
      const calendar = await getCompanyCalendar(
        ctx.pool,
        request.tenant,
        request.params.companyIdOrSlug,
        request.query,
      );
      return withFields(calendar, { items: calendar.items.map(deadlineView) });
    },
  );

  app.get(
    '/compliance-deadlines',
    {
      preValidation: acceptCursorAliases,
      schema: {
        ...operation('listComplianceDeadlines'),
        summary: 'List deadlines across companies',
        description: `Every company's deadlines with a due date between from and to (default: today to 18 months ahead), \
sorted by dueDate (then company, jurisdiction, kind); filter by jurisdiction and status. Companies without a \
formationDate are left out. Page with limit and startingAfter (the last item's id). ${ABOUT}`,
        querystring: s.DeadlinesQuery,
        response: { 200: s.DeadlineList, ...operationErrors('listComplianceDeadlines') },
      },
    },
    async (request) => {
      const { startingAfter } = request.query;
      if (startingAfter !== undefined && !startingAfter.startsWith(DEADLINE_ID_PREFIX)) {
        throw new ValidationError([
          { field: 'startingAfter', message: `must be the id of a deadline (prefix ${DEADLINE_ID_PREFIX})` },
        ]);
      }
      const page = await listComplianceDeadlines(ctx.pool, request.tenant, request.query);
      return withFields(page, { data: page.data.map(deadlineView) });
    },
  );
};

/** POST /test_helpers/compliance-reminders/run (CAL-21): mounted only at the test base address. */
export const complianceTestHelperRoutes: FastifyPluginAsyncTypebox<ApiPluginOptions> = async (
  app,
  { ctx, environment },
) => {
  // Defence in depth: app.ts mounts helpers only for test; a live mount would register nothing (404).
  if (environment !== 'test') return;
  app.post(
    '/compliance-reminders/run',
    {
      schema: {
        ...operation('runTestComplianceReminders'),
        summary: 'Run the daily deadline reminders as of a date (test only)',
        description:
          'Runs the daily reminder job for your test companies only, as if today were asOf, so you see compliance.deadline_approaching (60, 30 and 7 days before a due date) and compliance.deadline_missed (the day after) without waiting. Each report and threshold is sent once: running the same date again emits nothing new. Reports covered by a filed or pending annual report order are skipped. Only at the test base address; the live address answers 404.',
        body: s.RunRemindersBody,
        response: { 200: s.RunRemindersResult, ...operationErrors('runTestComplianceReminders') },
      },
    },
    async (request) => ({
      asOf: request.body.asOf,
      emitted: await runComplianceReminders(ctx.pool, request.body.asOf, request.tenant),
    }),
  );
};

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { ValidationError } from '../../lib/errors.js';
import { FORMATION_STATES } from '../companies/company-rules.js';
import { ANCHOR_REASONS, setCalendarOverride } from '../compliance/calendar-overrides.service.js';
import { teamCompanyCalendar } from '../compliance/compliance.service.js';
import { presentDeadline } from '../compliance/compliance.views.js';
import { actorOf, CONSOLE_PREFIX, field, redirectWith, render } from './console.web.js';

/** The form's label of each field the override service names in an error (CAL-36). */
const FIELD_LABELS: Record<string, string> = {
  state: 'State',
  anchorDate: 'Anchor date',
  anchorReason: 'Event',
  note: 'Reason',
};

/** What the set or clear form sent, kept to fill the form again after an error. */
interface OverrideForm {
  state: string;
  anchorDate: string;
  anchorReason: string;
  reason: string;
  clear: boolean;
}

const companyPath = (companyId: string) => `${CONSOLE_PREFIX}/companies/${encodeURIComponent(companyId)}`;

/**
 * A company's page in the console (CAL-36): its compliance calendar, the anchor overrides of its states, and the form
 * that sets or clears one through the service the admin API and the CLI use (CAL-29), recorded as made by the
 * signed-in operator with the reason the form requires (CAL-30).
 */
export async function consoleCompanyRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  app.get<{ Params: { id: string }; Querystring: Record<string, string | undefined> }>(
    '/companies/:id',
    { schema: { hide: true } },
    async (request, reply) => renderCompany(ctx, request, reply, request.params.id, request.query, null, []),
  );

  app.post<{ Params: { id: string } }>(
    '/companies/:id/calendar-overrides',
    { schema: { hide: true } },
    async (request, reply) => {
      const { id } = request.params;
      // The forms carry the page's range, so the page comes back showing the same dates.
      const range = { from: field(request.body, 'from'), to: field(request.body, 'to') };
      const form: OverrideForm = {
        state: field(request.body, 'state').toUpperCase(),
        anchorDate: field(request.body, 'anchorDate'),
        anchorReason: field(request.body, 'anchorReason'),
        reason: field(request.body, 'reason'),
        clear: field(request.body, 'clear') === '1',
      };
      try {
        await setCalendarOverride(
          ctx.pool,
          id,
          form.state,
          form.clear
            ? { anchorDate: null, note: form.reason }
            : {
                anchorDate: form.anchorDate,
                anchorReason: (form.anchorReason || undefined) as (typeof ANCHOR_REASONS)[number] | undefined,
                note: form.reason,
              },
          actorOf(request),
        );
      } catch (err) {
        if (!(err instanceof ValidationError)) throw err;
        const errors = err.errors.map((e) => `${FIELD_LABELS[e.field] ?? e.field}: ${e.message}`);
        return renderCompany(ctx, request, reply.status(400), id, range, form, errors);
      }
      const text = form.clear
        ? `${form.state} counts from the formation or registration date again.`
        : `${form.state} counts from ${form.anchorDate} (${form.anchorReason.replace(/_/g, ' ')}).`;
      const query = new URLSearchParams(Object.entries(range).filter(([, v]) => v)).toString();
      return redirectWith(ctx, request, reply, `${companyPath(id)}${query ? `?${query}` : ''}`, { kind: 'ok', text });
    },
  );
}

async function renderCompany(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  companyId: string,
  q: { from?: string; to?: string },
  form: OverrideForm | null,
  errors: string[],
) {
  const view = await teamCompanyCalendar(ctx.pool, companyId, { from: q.from || undefined, to: q.to || undefined });
  const { company } = view;
  return render(ctx, request, reply, 'company', {
    title: company.legal_name,
    section: 'deadlines',
    company,
    from: view.from,
    to: view.to,
    rows: view.items.map((d) => presentDeadline(d, null)),
    overrides: view.overrides,
    states: FORMATION_STATES,
    reasons: ANCHOR_REASONS,
    form: form ?? { state: company.formation_state ?? '', anchorDate: '', anchorReason: '', reason: '', clear: false },
    errors,
  });
}

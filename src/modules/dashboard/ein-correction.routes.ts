import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { AppError, ValidationError, type FieldError } from '../../lib/errors.js';
import { awaitsResponsibleParty, correctResponsibleParty, validResponsibleParty } from '../filings/ein-corrections.js';
import { responsiblePartySection } from './checkout.fields.js';
import { bodyFromForm, errorSummary, presentSections, type FormValues } from './checkout.forms.js';
import { findOrderForUser } from './dashboard.repo.js';
import { presentOrder } from './presenters.js';
import { chrome, renderMessage, renderPage, requireCsrf, requireSession } from './web.js';

type Params = { orderId: string };
type Order = NonNullable<Awaited<ReturnType<typeof findOrderForUser>>>;

/** The form's fields: the responsible party at `responsibleParty.*`, with the middle name the IRS may match on. */
const PREFIX = 'responsibleParty';
const SECTION = responsiblePartySection(PREFIX, 'Responsible party', true);

/**
 * The customer's correction of an EIN order the IRS refused (ORD-EIN-8): `/orders/:orderId/responsible-party`, linked
 * from the order on the company page (where the integrator's magic link lands) while the order is in exception 483 or
 * 484. The same validation and the same one transaction as PUT /orders/{orderId}/ein-responsible-party, recorded as
 * `dashboard`. The tax id typed is never shown again, not even when another field is refused (ORD-EIN-6).
 */
export const einCorrectionPages: FastifyPluginAsync<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.get<{ Params: Params }>(
    '/orders/:orderId/responsible-party',
    { preHandler: requireSession(ctx) },
    async (request, reply) => {
      const order = await orderOrRefusal(ctx, request, reply);
      if (!order) return reply;
      return renderForm(request, reply, order, currentParty(order), []);
    },
  );

  app.post<{ Params: Params; Body: FormValues }>(
    '/orders/:orderId/responsible-party',
    { preHandler: [requireSession(ctx), requireCsrf] },
    async (request, reply) => {
      const order = await orderOrRefusal(ctx, request, reply);
      if (!order) return reply;
      const form = request.body ?? {};
      const { taxId: _typed, ...shown } = valuesOf(form);
      let party: ReturnType<typeof validResponsibleParty>;
      try {
        party = validResponsibleParty(bodyFromForm([SECTION], form)[PREFIX] ?? {});
      } catch (err) {
        if (!(err instanceof ValidationError)) throw err;
        return renderForm(request, reply.status(400), order, shown, err.errors.map(onForm));
      }
      try {
        await correctResponsibleParty(ctx, request.signedIn.session.tenant, order.id, party, 'dashboard');
      } catch (err) {
        if (err instanceof AppError && err.code === 'invalid_transition') return nothingToCorrect(request, reply);
        throw err;
      }
      return renderPage(
        reply,
        'message',
        chrome(request.dashboardSite, request.signedIn.organization, request.signedIn),
        {
          title: 'Thank you: the corrected details are on their way',
          message: `We send the EIN application for ${order.company_name} to the IRS again with the corrected responsible party. You will see its progress on the company's page.`,
        },
      );
    },
  );
};

/** The order when the signed-in user administers its company and it waits for a correction; else the page saying why. */
async function orderOrRefusal(
  ctx: AppContext,
  request: FastifyRequest<{ Params: Params }>,
  reply: FastifyReply,
): Promise<Order | null> {
  const { session } = request.signedIn;
  const order = await findOrderForUser(ctx.pool, session.tenant, session.userId, request.params.orderId);
  if (!order) {
    await renderMessage(
      reply,
      request,
      404,
      'Order not found',
      'This order does not exist or belongs to a company you do not administer.',
    );
    return null;
  }
  if (!awaitsResponsibleParty(order)) {
    await nothingToCorrect(request, reply);
    return null;
  }
  return order;
}

function nothingToCorrect(request: FastifyRequest, reply: FastifyReply) {
  return renderMessage(
    reply,
    request,
    409,
    'Nothing to correct',
    'This order does not need new responsible party details: the IRS has not refused them, or they were corrected already.',
  );
}

function renderForm(
  request: FastifyRequest<{ Params: Params }>,
  reply: FastifyReply,
  order: Order,
  values: Record<string, string>,
  errors: FieldError[],
) {
  const { organization } = request.signedIn;
  const named = Object.fromEntries(Object.entries(values).map(([k, v]) => [`${PREFIX}.${k}`, v]));
  return renderPage(
    reply,
    'ein-correction',
    chrome(request.dashboardSite, organization, request.signedIn, 'companies'),
    {
      order: presentOrder(order),
      last4: typeof order.responsible_party?.taxIdLast4 === 'string' ? order.responsible_party.taxIdLast4 : null,
      action: `${request.dashboardSite.basePath}/orders/${encodeURIComponent(order.id)}/responsible-party`,
      section: presentSections([SECTION], named, errors)[0],
      errorList: errorSummary(errors, [SECTION]),
    },
    reply.statusCode,
  );
}

/** The party on file, to start the form from (names, type, title; never a tax id). */
function currentParty(order: Order): Record<string, string> {
  const p = order.responsible_party ?? {};
  const text = (k: string) => (typeof p[k] === 'string' ? (p[k] as string) : '');
  return {
    firstName: text('firstName'),
    middleName: text('middleName'),
    lastName: text('lastName'),
    taxIdType: text('taxIdType'),
    title: text('title'),
  };
}

/** The posted party fields by their names without the prefix. */
function valuesOf(form: FormValues): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(form)) if (k.startsWith(`${PREFIX}.`)) out[k.slice(PREFIX.length + 1)] = v;
  return out;
}

/** A refusal of the party (fields named as in the API body, `taxId`) placed next to its input. */
function onForm(e: FieldError): FieldError {
  return { field: e.field ? `${PREFIX}.${e.field}` : PREFIX, message: e.message };
}

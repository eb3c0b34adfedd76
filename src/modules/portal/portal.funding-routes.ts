import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { AppError, ValidationError } from '../../lib/errors.js';
import { randomToken } from '../../lib/secrets.js';
import { parseDollars } from '../console/console.forms.js';
import { field } from '../console/console.web.js';
import { balanceStatement, statementMonths } from '../funding/statements.service.js';
import { statementCsvLines, statementFileName } from '../funding/statements.views.js';
import { createTopUp } from '../funding/top-ups.service.js';
import { PORTAL_CSP, PORTAL_PREFIX, redirectWith, render, requireTenant } from './portal.web.js';

/** Where a portal top-up's form may send its answer: the portal, and Stripe's Checkout page (FUND-24). */
const TOP_UP_CSP = PORTAL_CSP.replace("form-action 'self'", "form-action 'self' https://checkout.stripe.com");

/**
 * Funding the balance from the partner portal, for owners and admins only: the top-up form (FUND-24: billing.write),
 * and the monthly statements as a list, a printable page and CSV (FUND-23: billing.read), in the session's
 * environment.
 */
export async function portalFundingRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  app.get('/balance/top-up', { schema: { hide: true } }, async (request, reply) => {
    requireTenant(request, 'billing.write');
    return renderTopUp(ctx, request, reply, {});
  });

  // FUND-24: the amount goes through the API's service (TOP_UP_MIN..TOP_UP_MAX before Stripe is called); the form's
  // one-time key is the top-up's Idempotency-Key, so a double submit opens one page or credits test money once.
  app.post('/balance/top-up', { schema: { hide: true } }, async (request, reply) => {
    const tenant = requireTenant(request, 'billing.write');
    const typed = field(request.body, 'amount');
    const formKey = field(request.body, 'formKey');
    try {
      const amount = parseDollars(typed, 'amount');
      const topUp = await createTopUp(ctx, tenant, amount, formKey ? `portal:${formKey.slice(0, 64)}` : undefined);
      if (topUp.status === 'pending' && topUp.checkout_url) {
        reply.header('content-security-policy', TOP_UP_CSP);
        return reply.redirect(topUp.checkout_url, 303);
      }
      if (topUp.status === 'succeeded')
        return redirectWith(ctx, request, reply, `${PORTAL_PREFIX}/balance`, {
          kind: 'ok',
          text: `${topUp.environment === 'test' ? 'Test money' : 'The top-up'} was added to the ${topUp.environment} balance.`,
        });
      return renderTopUp(
        ctx,
        request,
        reply,
        { form: topUp.failure_message ?? 'This top-up is not waiting for payment.' },
        typed,
      );
    } catch (err) {
      if (!(err instanceof AppError) || err.status === 404) throw err;
      reply.status(err.status);
      const message = err instanceof ValidationError ? err.errors[0]!.message : err.message;
      return renderTopUp(
        ctx,
        request,
        reply,
        err instanceof ValidationError ? { amount: message } : { form: message },
        typed,
      );
    }
  });

  app.get('/balance/statements', { schema: { hide: true } }, async (request, reply) => {
    const tenant = requireTenant(request, 'billing.read');
    return render(ctx, request, reply, 'statements', {
      title: 'Statements',
      section: 'balance',
      months: await statementMonths(ctx.pool, tenant),
    });
  });

  // FUND-23: the printable page, or with ?format=csv the same statement as the API's CSV.
  app.get<{ Params: { month: string }; Querystring: { format?: string } }>(
    '/balance/statements/:month',
    { schema: { hide: true } },
    async (request, reply) => {
      const tenant = requireTenant(request, 'billing.read');
      const { format } = request.query;
      // As the API: a format other than the two there are is refused, not answered with the page.
      if (format !== undefined && format !== 'csv')
        throw new ValidationError([{ field: 'format', message: 'must be csv, or left out for the printable page' }]);
      const statement = await balanceStatement(ctx.pool, tenant, request.params.month);
      if (format === 'csv')
        return reply
          .header('content-type', 'text/csv; charset=utf-8')
          .header('content-disposition', `attachment; filename="${statementFileName(statement)}"`)
          .header('cache-control', 'no-store')
          .header('x-content-type-options', 'nosniff')
          .send(statementCsvLines(statement).join(''));
      return render(ctx, request, reply, 'statement', {
        title: `Statement ${statement.month}`,
        section: 'balance',
        statement,
        organizationName: request.portalSession!.organization!.name,
      });
    },
  );
}

function renderTopUp(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  problems: Record<string, string>,
  typed = '',
) {
  reply.header('content-security-policy', TOP_UP_CSP);
  const { minCents, maxCents } = ctx.config.topUps;
  return render(ctx, request, reply, 'top-up', {
    title: 'Add funds',
    section: 'balance',
    minCents,
    maxCents,
    problems,
    typed,
    formKey: randomToken(18),
  });
}

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { AppError, ValidationError } from '../../lib/errors.js';
import type { OrderDetailRow } from '../filings/filings.repo.js';
import { MAX_REVEAL_REASON, revealTaxId } from '../filings/tax-id-reveal.js';
import { actorOf, CONSOLE_PREFIX, field, redirectWith, render } from './console.web.js';
import { loadActionOrder } from './order-actions.service.js';

/**
 * "Reveal tax id" on an EIN order's page (ORD-EIN-7): a form asking why, then — once the reveal is recorded — a page
 * with the number and the SS-4 worksheet for 60 seconds. That page is the POST's own answer, sent `no-store,
 * no-cache`, so the browser keeps no copy of it and going back asks the server again (which would record another
 * reveal); the number vanishes from the screen after 60 s through the stylesheet (console.css `.reveal-timed`), as the
 * console runs no script.
 */
export async function consoleTaxIdRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  app.get<{ Params: { orderId: string } }>(
    '/orders/:orderId/tax-id',
    { schema: { hide: true } },
    async (request, reply) => {
      const order = await loadActionOrder(ctx.pool, request.params.orderId);
      return renderReasonForm(ctx, request, reply, order, '', null);
    },
  );

  app.post<{ Params: { orderId: string } }>(
    '/orders/:orderId/tax-id',
    { schema: { hide: true } },
    async (request, reply) => {
      const { orderId } = request.params;
      const reason = field(request.body, 'reason');
      try {
        const revealed = await revealTaxId(ctx, orderId, {
          actor: actorOf(request),
          reason,
          clientAddress: request.ip,
        });
        reply.header('cache-control', 'no-store, no-cache, must-revalidate, private').header('pragma', 'no-cache');
        return render(ctx, request, reply, 'tax-id', { title: `Tax id of ${orderId}`, section: 'queue', revealed });
      } catch (err) {
        if (err instanceof ValidationError) {
          const order = await loadActionOrder(ctx.pool, orderId);
          return renderReasonForm(ctx, request, reply.status(400), order, reason, err.errors[0]!.message);
        }
        if (err instanceof AppError && err.status < 500 && err.code !== 'not_found')
          return redirectWith(ctx, request, reply, `${CONSOLE_PREFIX}/orders/${encodeURIComponent(orderId)}`, {
            kind: 'error',
            text: err.message,
          });
        throw err;
      }
    },
  );
}

function renderReasonForm(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  order: OrderDetailRow,
  reason: string,
  error: string | null,
) {
  return render(ctx, request, reply, 'tax-id-reason', {
    title: `Reveal the tax id of ${order.id}`,
    section: 'queue',
    order,
    reason,
    error: error ? `Reason: ${error}` : null,
    maxReason: MAX_REVEAL_REASON,
  });
}

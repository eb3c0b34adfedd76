import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.js';
import { loadOrderRecord } from '../filings/order-record.js';
import { render } from './console.web.js';
import { orderPageView } from './order-page.js';
import { queuePageView } from './queue.service.js';

/** The work queue and the order page (CONS-2, CONS-3). */
export async function consoleOrderRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  app.get<{ Querystring: Record<string, string | undefined> }>(
    '/queue',
    { schema: { hide: true } },
    async (request, reply) => {
      return render(ctx, request, reply, 'queue', await queuePageView(ctx, request.query));
    },
  );

  app.get<{ Params: { orderId: string } }>('/orders/:orderId', { schema: { hide: true } }, async (request, reply) => {
    const { orderId } = request.params;
    return render(ctx, request, reply, 'order', orderPageView(ctx, await loadOrderRecord(ctx.pool, orderId)));
  });
}

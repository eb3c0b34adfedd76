import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.js';
import {
  companiesPageView,
  companyPageView,
  orderPageView,
  ordersPageView,
  type Query,
  usersPageView,
} from './business.service.js';
import { render, requireTenant } from './portal.web.js';
import { viewHelpers } from '../console/view-helpers.js';

/**
 * The tenant's records, read only (PORTAL-30 to PORTAL-32, PORTAL-38): orders with their filters and the order page, companies
 * with their compliance calendar, users. Every page reads the session's organization and environment only; another
 * tenant's id answers 404 like an unknown one.
 */
export async function portalRecordsRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  app.get<{ Querystring: Query }>('/orders', { schema: { hide: true } }, async (request, reply) => {
    const tenant = requireTenant(request, 'orders.read');
    const view = await ordersPageView(ctx, tenant, request.query);
    return render(ctx, request, reply, 'orders', { title: 'Orders', section: 'orders', ...view });
  });

  app.get<{ Params: { orderId: string } }>('/orders/:orderId', { schema: { hide: true } }, async (request, reply) => {
    const tenant = requireTenant(request, 'orders.read');
    const view = await orderPageView(ctx, tenant, request.params.orderId);
    return render(ctx, request, reply, 'order', { title: `Order ${view.order.id}`, section: 'orders', ...view });
  });

  app.get<{ Querystring: Query }>('/companies', { schema: { hide: true } }, async (request, reply) => {
    const tenant = requireTenant(request, 'companies.read');
    const view = await companiesPageView(ctx, tenant, request.query);
    return render(ctx, request, reply, 'companies', { title: 'Companies', section: 'companies', ...view });
  });

  app.get<{ Params: { companyId: string } }>(
    '/companies/:companyId',
    { schema: { hide: true } },
    async (request, reply) => {
      const tenant = requireTenant(request, 'companies.read');
      const view = await companyPageView(ctx, tenant, request.params.companyId);
      return render(ctx, request, reply, 'company', {
        title: viewHelpers.name(view.company.legalName),
        section: 'companies',
        ...view,
      });
    },
  );

  app.get<{ Querystring: Query }>('/users', { schema: { hide: true } }, async (request, reply) => {
    const tenant = requireTenant(request, 'users.read');
    const view = await usersPageView(ctx, tenant, request.query);
    return render(ctx, request, reply, 'users', { title: 'Users', section: 'users', ...view });
  });
}

import type { FastifyPluginAsync } from 'fastify';
import type { AppContext, Environment } from './context.js';
import { organizationsAdminRoutes } from './modules/organizations/organizations.admin-routes.js';
import { organizationRoutes } from './modules/organizations/organizations.routes.js';

/** Options every integrator route plugin receives: the context and the environment it is mounted for. */
export interface ApiPluginOptions {
  ctx: AppContext;
  environment: Environment;
}

/**
 * Integrator API route plugins, mounted once under the live prefix (/v1) and once under the test prefix
 * (/test/v1). Each module adds its plugin here.
 */
export const integratorRoutes: Array<FastifyPluginAsync<ApiPluginOptions>> = [
  organizationRoutes as FastifyPluginAsync<ApiPluginOptions>,
];

/** Test-helper plugins: mounted under `<test prefix>/test_helpers` only, so they answer 404 in live. */
export const testHelperRoutes: Array<FastifyPluginAsync<ApiPluginOptions>> = [];

/** Operator admin API plugins, mounted under /admin/v1 behind the operator token. */
export const adminRoutes: Array<FastifyPluginAsync<{ ctx: AppContext }>> = [
  organizationsAdminRoutes as FastifyPluginAsync<{ ctx: AppContext }>,
];

/** Browser-facing plugins (dashboard, console, file downloads) that bring their own authentication. */
export const webRoutes: Array<FastifyPluginAsync<{ ctx: AppContext }>> = [];

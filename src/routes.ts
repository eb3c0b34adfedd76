import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { ApiPluginOptions, AppContext } from './context.js';
import { billingAdminRoutes } from './modules/billing/billing.admin-routes.js';
import { billingRoutes, billingTestHelperRoutes } from './modules/billing/billing.routes.js';
import { organizationsAdminRoutes } from './modules/organizations/organizations.admin-routes.js';
import { organizationRoutes } from './modules/organizations/organizations.routes.js';
import { userRoutes } from './modules/users/users.routes.js';
import { topUpRoutes } from './modules/funding/top-ups.routes.js';
import { statementRoutes } from './modules/funding/statements.routes.js';
import { companyRoutes } from './modules/companies/companies.routes.js';
import { documentsAdminRoutes } from './modules/documents/documents.admin-routes.js';
import { documentRoutes } from './modules/documents/documents.routes.js';
import { documentTestHelperRoutes } from './modules/documents/documents.test-helpers.js';
import { documentWebRoutes } from './modules/documents/documents.web-routes.js';
import { eventStreamRoutes } from './modules/events/event-stream.routes.js';
import { eventRoutes } from './modules/events/events.routes.js';
import { filingsAdminRoutes } from './modules/filings/filings.admin-routes.js';
import { filingTestHelperRoutes } from './modules/filings/filings.test-helpers.js';
import { einCorrectionRoutes } from './modules/filings/ein-corrections.routes.js';
import { webhookRoutes } from './modules/webhooks/webhooks.routes.js';
import { magicLinkRoutes } from './modules/magic-links/magic-links.routes.js';
import { dashboardWeb } from './modules/dashboard/dashboard.plugin.js';
import { consoleWebRoutes } from './modules/console/console.plugin.js';
import { portalAdminRoutes } from './modules/portal/portal.admin-routes.js';
import { portalWebRoutes } from './modules/portal/portal.plugin.js';
import { idempotencyPlugin } from './modules/idempotency/idempotency.plugin.js';
import { orderRoutes } from './modules/orders/orders.routes.js';
import { autoRechargeRoutes } from './modules/funding/auto-recharge.routes.js';
import { stripeWebhookRoutes } from './modules/dashboard/stripe-webhook.routes.js';
import { complianceRoutes, complianceTestHelperRoutes } from './modules/compliance/compliance.routes.js';
import { complianceAdminRoutes } from './modules/compliance/compliance.admin-routes.js';

/**
 * Integrator API route plugins, mounted once under the live prefix (/v1) and once under the test prefix
 * (/test/v1). Each module adds its plugin here.
 */
export const integratorRoutes: Array<FastifyPluginAsyncTypebox<ApiPluginOptions>> = [
  // First: its hooks (Idempotency-Key on every POST and PUT) apply to all routes registered after it, test helpers included.
  idempotencyPlugin,
  organizationRoutes,
  userRoutes,
  companyRoutes,
  billingRoutes,
  topUpRoutes,
  statementRoutes,
  documentRoutes,
  eventStreamRoutes,
  eventRoutes,
  webhookRoutes,
  magicLinkRoutes,
  orderRoutes,
  autoRechargeRoutes,
  einCorrectionRoutes,
  complianceRoutes,
];

/** Test-helper plugins: mounted under `<test prefix>/test_helpers` only, so they answer 404 in live. */
export const testHelperRoutes: Array<FastifyPluginAsyncTypebox<ApiPluginOptions>> = [
  billingTestHelperRoutes,
  filingTestHelperRoutes,
  documentTestHelperRoutes,
  complianceTestHelperRoutes,
];

/** Operator admin API plugins, mounted under /admin/v1 behind the operator token. */
export const adminRoutes: Array<FastifyPluginAsyncTypebox<{ ctx: AppContext }>> = [
  organizationsAdminRoutes,
  billingAdminRoutes,
  filingsAdminRoutes,
  documentsAdminRoutes,
  complianceAdminRoutes,
  portalAdminRoutes,
];

/** Browser-facing plugins (dashboard, console, partner portal, file downloads) and the Stripe webhook, which bring their own authentication. */
export const webRoutes: Array<FastifyPluginAsyncTypebox<{ ctx: AppContext }>> = [
  documentWebRoutes,
  stripeWebhookRoutes,
  dashboardWeb,
  consoleWebRoutes,
  portalWebRoutes,
];

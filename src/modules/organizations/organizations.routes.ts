import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Tenant } from '../../context.js';
import type { ApiPluginOptions } from '../../routes.js';
import { one, type Db } from '../../lib/db.js';
import { centsToDollars } from '../../lib/money.js';
import { operation, operationErrors } from '../../lib/api-operations.js';
import { Nullable, DateTime } from '../../lib/schemas.js';
import { getOrganizationOrThrow } from './organizations.service.js';
import { updateOrganizationSettings } from './organization-settings.js';
import { UpdateOrganizationBody } from './organizations.schemas.js';

/** GET/PATCH /organization answer (issue 3 item 8, issue 5 item 6): settings plus the key environment's `balance` in dollars. */
export const OrganizationSchema = Type.Object({
  id: Type.String({ description: 'prefix org_' }),
  name: Type.String(),
  environment: Type.String({ description: 'live or test: the environment of the key used' }),
  balance: Type.Number({ description: 'Prepaid balance of this environment, in dollars.' }),
  whiteLabelDomain: Nullable(Type.String({ description: 'Host the dashboard and magic links use instead of the default address.' })),
  branding: Type.Object({
    logoUrl: Nullable(Type.String()),
    primaryColor: Nullable(Type.String()),
    accentColor: Nullable(Type.String()),
  }),
  emailNotifications: Type.Boolean({ description: 'Email company admins when documents arrive.' }),
  dashboardBilling: Type.Union([Type.Literal('organization'), Type.Literal('customer')], {
    description: 'Who pays for dashboard orders: organization (prepaid balance, wholesale) or customer (in-app checkout, retail).',
  }),
  contactEmail: Nullable(Type.String({
    description: 'Technical contact emailed when one of your webhook endpoints is disabled after failing (HTTP 410, or every delivery failing for a long time).',
  })),
  createdAt: DateTime,
  updatedAt: DateTime,
}, { title: 'Organization' });

/**
 * GET /organization: settings, branding and the balance of the key's environment (issue 3 item 8).
 * PATCH /organization: settings and branding (issue 5 item 6).
 */
export const organizationRoutes: FastifyPluginAsyncTypebox<ApiPluginOptions> = async (app, { ctx }) => {
  app.get('/organization', {
    schema: {
      ...operation('getOrganization'),
      summary: 'Retrieve your organization',
      description: 'Settings and dashboard branding (shared by the live and test environments) and the prepaid balance of the key\'s environment, in dollars.',
      response: { 200: OrganizationSchema, ...operationErrors('getOrganization') },
    },
  }, async (request) => organizationView(ctx.pool, request.tenant));

  app.patch('/organization', {
    schema: {
      ...operation('updateOrganization'),
      summary: 'Update your organization',
      description: 'Changes settings and dashboard branding; only the fields sent change (branding fields merge). Settings are shared by the live and test '
        + 'environments. whiteLabelDomain must be a host name not used by another organization (409 conflict). contactEmail is the technical contact '
        + 'emailed when a webhook endpoint is disabled (null removes it). Answers 200 with the organization.',
      body: UpdateOrganizationBody,
      response: { 200: OrganizationSchema, ...operationErrors('updateOrganization') },
    },
  }, async (request) => {
    await updateOrganizationSettings(ctx, request.tenant.organizationId, request.body);
    return organizationView(ctx.pool, request.tenant);
  });
};

/**
 * The integrator's view of its organization for one environment (OrganizationSchema; `balance` in dollars).
 * @throws AppError not_found (404) when the organization no longer exists.
 */
export async function organizationView(db: Db, tenant: Tenant) {
  const o = await getOrganizationOrThrow(db, tenant.organizationId);
  const bal = await one<{ balance_cents: number }>(db, 'SELECT balance_cents FROM balances WHERE organization_id = $1 AND environment = $2', [tenant.organizationId, tenant.environment]);
  return {
    id: o.id,
    name: o.name,
    environment: tenant.environment,
    balance: centsToDollars(bal?.balance_cents ?? 0),
    whiteLabelDomain: o.white_label_domain,
    branding: { logoUrl: o.branding.logoUrl ?? null, primaryColor: o.branding.primaryColor ?? null, accentColor: o.branding.accentColor ?? null },
    emailNotifications: o.email_notifications,
    dashboardBilling: o.dashboard_billing,
    contactEmail: o.contact_email,
    createdAt: o.created_at.toISOString(),
    updatedAt: o.updated_at.toISOString(),
  };
}

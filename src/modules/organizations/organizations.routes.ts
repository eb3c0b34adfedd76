import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { ApiPluginOptions } from '../../context.js';
import { operation, operationErrors } from '../../lib/api-operations.js';
import { Nullable, DateTime } from '../../lib/schemas.js';
import { attachedNonBodyErrors, validated } from '../../lib/validation.js';
import { loadTenantOrganization } from './organizations.service.js';
import { organizationView } from './organizations.views.js';
import { assertMayChangeSettings, settingsRuleErrors, updateOrganizationSettings } from './organization-settings.js';
import { verifyWhiteLabelDomain } from './domain-verification.js';
import { UpdateOrganizationBody } from './organizations.schemas.js';

const LIVE_ONLY =
  'Settings are one set per organization, shared by the live and test environments, and they reach live customers ' +
  "(the dashboard's address, branding and billing, the emails sent and to whom). So they change only with a live key: with a test key " +
  'this operation answers 403 (code forbidden) whose message names the live base address, and nothing changes. A test key may still read ' +
  'the organization (GET) and send an empty body.';

/** The DNS record that proves control of the requested white-label domain, and whether it has been found. */
const DomainVerificationSchema = Type.Object(
  {
    status: Type.Union([Type.Literal('pending'), Type.Literal('verified')], {
      description:
        'pending: the dashboard and magic links keep using the default address; verified: whiteLabelDomain is in effect.',
    }),
    recordType: Type.Literal('TXT'),
    recordName: Type.String({
      description: 'DNS name of the TXT record to create, e.g. _fcs-domain-verification.portal.example.com',
    }),
    recordValue: Type.String({ description: 'Exact value of the TXT record, e.g. fcs-domain-verification=…' }),
    verifiedAt: Nullable(DateTime),
  },
  { title: 'DomainVerification' },
);

/** GET/PATCH /organization answer (ORG-2, ORG-3): settings plus the key environment's `balance` in dollars. */
const OrganizationSchema = Type.Object(
  {
    id: Type.String({ description: 'prefix org_' }),
    name: Type.String(),
    environment: Type.String({ description: 'live or test: the environment of the key used' }),
    balance: Type.Number({ description: 'Prepaid balance of this environment, in dollars.' }),
    whiteLabelDomain: Nullable(
      Type.String({
        description:
          'Requested host for the dashboard and magic links. It takes effect only once whiteLabelDomainVerification.status is verified; until then the default dashboard address is used.',
      }),
    ),
    whiteLabelDomainVerification: Nullable(DomainVerificationSchema),
    branding: Type.Object({
      logoUrl: Nullable(Type.String()),
      primaryColor: Nullable(Type.String()),
      accentColor: Nullable(Type.String()),
    }),
    emailNotifications: Type.Boolean({ description: 'Email company admins when documents arrive.' }),
    dashboardBilling: Type.Union([Type.Literal('organization'), Type.Literal('customer')], {
      description:
        'Who pays for dashboard orders: organization (prepaid balance, wholesale) or customer (in-app checkout, retail).',
    }),
    contactEmail: Nullable(
      Type.String({
        description:
          'Technical contact emailed when one of your webhook endpoints is disabled after failing (HTTP 410, or every delivery failing for a long time).',
      }),
    ),
    lowBalanceThreshold: Nullable(
      Type.Number({
        description:
          'Dollars: a debit that takes the balance from at or above it to below it sends balance.low (each environment on its own); null: no alert.',
      }),
    ),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { title: 'Organization' },
);

/**
 * GET /organization: settings, branding and the balance of the key's environment.
 * PATCH /organization: settings and branding, live key only. POST /organization/white-label-domain/verify: the DNS
 * check.
 */
export const organizationRoutes: FastifyPluginAsyncTypebox<ApiPluginOptions> = async (app, { ctx }) => {
  app.get(
    '/organization',
    {
      schema: {
        ...operation('getOrganization'),
        summary: 'Retrieve your organization',
        description:
          "Settings and dashboard branding (shared by the live and test environments) and the prepaid balance of the key's environment, in dollars.",
        response: { 200: OrganizationSchema, ...operationErrors('getOrganization') },
      },
    },
    async (request) => organizationView(await loadTenantOrganization(ctx.pool, request.tenant)),
  );

  app.patch(
    '/organization',
    {
      attachValidation: true,
      schema: {
        ...operation('updateOrganization'),
        summary: 'Update your organization',
        description:
          `Changes settings and dashboard branding; only the fields sent change (branding fields merge). ${LIVE_ONLY} ` +
          'whiteLabelDomain must be a host name no other organization holds (409 conflict); a new domain starts pending: publish the TXT record of ' +
          'whiteLabelDomainVerification, then call POST /organization/white-label-domain/verify. Until then magic links and the dashboard use the default ' +
          'address. contactEmail is the technical contact emailed when a webhook endpoint is disabled (null removes it). lowBalanceThreshold (dollars, null for none) ' +
          'sends balance.low when a debit takes a balance below it. Answers 200 with the organization.',
        body: UpdateOrganizationBody,
        response: { 200: OrganizationSchema, ...operationErrors('updateOrganization') },
      },
    },
    async (request) => {
      // API-7: the schema's errors and the field rules' in one 400.
      const patch = validated(UpdateOrganizationBody, request.body, [settingsRuleErrors(ctx)], {
        prior: attachedNonBodyErrors(request),
      });
      await updateOrganizationSettings(ctx, request.tenant.organizationId, patch, {
        environment: request.tenant.environment,
      });
      return organizationView(await loadTenantOrganization(ctx.pool, request.tenant));
    },
  );

  app.post(
    '/organization/white-label-domain/verify',
    {
      schema: {
        ...operation('verifyWhiteLabelDomain'),
        summary: 'Verify your white-label domain',
        description:
          'Looks up the TXT record named in whiteLabelDomainVerification.recordName; when it holds recordValue, the domain takes effect at once ' +
          '(new magic links point at it and the dashboard answers on it). Answers 200 with the organization (also when already verified); 409 with code ' +
          `domain_not_verified naming the record when it is missing or different (DNS changes can take a while), 409 conflict when no domain is requested or another organization holds it. ${LIVE_ONLY}`,
        response: { 200: OrganizationSchema, ...operationErrors('verifyWhiteLabelDomain') },
      },
    },
    async (request) => {
      assertMayChangeSettings(ctx, { environment: request.tenant.environment }, { whiteLabelDomain: 'verify' });
      await verifyWhiteLabelDomain(ctx, request.tenant.organizationId);
      return organizationView(await loadTenantOrganization(ctx.pool, request.tenant));
    },
  );
};

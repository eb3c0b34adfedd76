import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { errorResponses } from '../../lib/schemas.js';
import { operatorTokenActor } from '../audit/audit.service.js';
import type { OrganizationRow } from './organizations.repo.js';
import * as schemas from './organizations.schemas.js';
import * as service from './organizations.service.js';
import { organizationAdminView } from './organizations.views.js';

/** Operator routes for organizations and their API keys (ORG-1, AUTH-3), mounted under /admin/v1. */
export const organizationsAdminRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  const adminView = async (o: OrganizationRow) =>
    organizationAdminView(await service.loadOrganizationAdmin(ctx.pool, o));

  app.post(
    '/organizations',
    {
      schema: {
        tags: ['Organizations'],
        body: schemas.CreateOrganizationBody,
        response: { 201: schemas.CreatedOrganizationSchema, ...errorResponses() },
      },
    },
    async (request, reply) => {
      const { name, contactEmail } = request.body;
      return reply
        .status(201)
        .send(service.createdOrganizationView(await service.createOrganization(ctx.pool, name, { contactEmail })));
    },
  );

  app.get('/organizations', { schema: { tags: ['Organizations'] } }, async () => {
    const rows = await service.listOrganizations(ctx.pool);
    return { object: 'list', data: await Promise.all(rows.map((o) => adminView(o))), hasMore: false };
  });

  app.get(
    '/organizations/:id',
    {
      schema: {
        tags: ['Organizations'],
        params: schemas.OrgIdParams,
        response: { 200: schemas.AdminOrganizationSchema, ...errorResponses(404) },
      },
    },
    async (request) => adminView(await service.getOrganizationOrThrow(ctx.pool, request.params.id)),
  );

  app.post(
    '/organizations/:id/api-keys',
    {
      schema: {
        tags: ['Organizations'],
        params: schemas.OrgIdParams,
        body: schemas.CreateKeyBody,
        response: { 201: schemas.NewApiKeySchema, ...errorResponses(404) },
      },
    },
    async (request, reply) =>
      reply
        .status(201)
        .send(
          await service.addApiKey(
            ctx.pool,
            request.params.id,
            request.body.environment,
            undefined,
            operatorTokenActor(request),
          ),
        ),
  );

  app.delete(
    '/organizations/:id/api-keys/:keyId',
    {
      schema: {
        tags: ['Organizations'],
        params: schemas.KeyParams,
        response: { 200: schemas.ApiKeySchema, ...errorResponses(404) },
      },
    },
    async (request) =>
      service.serializeApiKey(
        await service.revokeKey(
          ctx.pool,
          request.params.id,
          request.params.keyId,
          undefined,
          operatorTokenActor(request),
        ),
      ),
  );
};

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../context.js';
import { DateTime, errorResponses } from '../../lib/schemas.js';
import { ContactEmail, OrgIdParams } from '../organizations/organizations.schemas.js';
import { operatorTokenActor } from '../audit/audit.service.js';
import { createInvitation } from './invitations.service.js';
import { ROLES } from './roles.js';

const InvitationBody = Type.Object(
  {
    email: ContactEmail,
    role: Type.Union(
      ROLES.map((r) => Type.Literal(r)),
      { description: 'owner, admin, developer or viewer' },
    ),
  },
  { additionalProperties: false },
);

const CreatedInvitationSchema = Type.Object({
  invitationUrl: Type.String({
    description: 'The partner portal link to send to the invitee (PORTAL_BASE_URL); works once. Shown only here.',
  }),
  expiresAt: DateTime,
});

/** Operator route inviting a member into an organization's partner portal (PORTAL-3), under /admin/v1. */
export const portalAdminRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.post(
    '/organizations/:id/invitations',
    {
      schema: {
        tags: ['Organizations'],
        summary: 'Invite a member into the partner portal',
        description:
          'Creates a single-use invitation link, valid for 72 hours, for `email` to join the organization as `role`. Only the sha256 of its token is kept.',
        params: OrgIdParams,
        body: InvitationBody,
        response: { 201: CreatedInvitationSchema, ...errorResponses(404) },
      },
    },
    async (request, reply) => {
      const created = await createInvitation(ctx, {
        organizationId: request.params.id,
        email: request.body.email,
        role: request.body.role,
        invitedBy: 'operator',
        audit: operatorTokenActor(request),
      });
      return reply
        .status(201)
        .send({ invitationUrl: created.invitationUrl, expiresAt: created.expiresAt.toISOString() });
    },
  );
};

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { ApiPluginOptions } from '../../context.js';
import { operation, operationErrors } from '../../lib/api-operations.js';
import { CreateMagicLinkBody, MagicLinkSchema } from './magic-links.schemas.js';
import { mintMagicLink } from './magic-links.service.js';

/** POST /auth/magic-link (ML-1, ML-2). */
export const magicLinkRoutes: FastifyPluginAsyncTypebox<ApiPluginOptions> = async (app, { ctx }) => {
  app.post(
    '/auth/magic-link',
    {
      schema: {
        ...operation('createMagicLink'),
        summary: 'Mint a dashboard magic link',
        description:
          'Returns a fresh single-use link that signs the user into the dashboard (branded as your organization, on your white-label domain when set). ' +
          "The link is valid for 7 days or until first opened. With companyId the link lands on that company's page and the user must be an admin of it: " +
          'a userId or companyId that is not yours answers 404, a user who is not an admin of companyId answers 403. Answers 201.',
        body: CreateMagicLinkBody,
        response: { 201: MagicLinkSchema, ...operationErrors('createMagicLink') },
      },
    },
    async (request, reply) => reply.status(201).send(await mintMagicLink(ctx, request.tenant, request.body)),
  );
};

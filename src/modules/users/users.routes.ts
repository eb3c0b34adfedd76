import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { ApiPluginOptions } from '../../context.js';
import { operation, operationErrors } from '../../lib/api-operations.js';
import { ListOf, PageQuery } from '../../lib/schemas.js';
import { attachedNonBodyErrors, validated } from '../../lib/validation.js';
import { CreateUserBody, UserParams, UserSchema } from './users.schemas.js';
import { createUser, findUserOrThrow, listUsers, serializeUser, userRuleErrors } from './users.service.js';

/** POST /users, GET /users, GET /users/{userIdOrEmail} (USR-1, USR-4). */
export const userRoutes: FastifyPluginAsyncTypebox<ApiPluginOptions> = async (app, { ctx }) => {
  app.post(
    '/users',
    {
      attachValidation: true,
      schema: {
        ...operation('createUser'),
        summary: 'Create a user',
        description:
          'Creates a user of your organization in this environment. Emails are unique per environment, compared without regard to case: a second user with the same email answers 409. phoneNumber is E.164 (leading +) and must be a valid number.',
        body: CreateUserBody,
        response: { 201: UserSchema, ...operationErrors('createUser') },
      },
    },
    async (request, reply) => {
      const body = validated(CreateUserBody, request.body, [userRuleErrors], { prior: attachedNonBodyErrors(request) });
      const row = await createUser(ctx.pool, request.tenant, body);
      return reply.status(201).send(serializeUser(row));
    },
  );

  app.get(
    '/users',
    {
      schema: {
        ...operation('listUsers'),
        summary: 'List users',
        description: 'Users of this environment, newest first.',
        querystring: PageQuery,
        response: { 200: ListOf(UserSchema), ...operationErrors('listUsers') },
      },
    },
    async (request) => listUsers(ctx.pool, request.tenant, request.query),
  );

  app.get(
    '/users/:userIdOrEmail',
    {
      schema: {
        ...operation('getUser'),
        summary: 'Retrieve a user by id or email',
        description: 'Pass a user id (user_…) or an email address (case-insensitive; URL-encode it).',
        params: UserParams,
        response: { 200: UserSchema, ...operationErrors('getUser') },
      },
    },
    async (request) => serializeUser(await findUserOrThrow(ctx.pool, request.tenant, request.params.userIdOrEmail)),
  );
};

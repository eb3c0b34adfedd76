import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { ApiPluginOptions } from '../../context.js';
import { acceptCursorAliases } from '../../lib/pagination.js';
import { operation, operationErrors } from '../../lib/api-operations.js';
import { ListOf, PageQuery } from '../../lib/schemas.js';
import { perTenantActionLimit } from '../rate-limits/rate-limits.js';
import * as deliveries from './deliveries.service.js';
import * as endpoints from './webhooks.service.js';
import {
  CreateEndpointBody,
  DeletedSchema,
  DeliveryIdParams,
  DeliveryListQuery,
  DeliveryWithAttemptsSchema,
  EndpointIdParams,
  EndpointWithSecretSchema,
  UpdateEndpointBody,
  WebhookDeliverySchema,
  WebhookEndpointSchema,
} from './webhooks.schemas.js';

/** Largest body POST /webhook-endpoints/{id}/test reads (and ignores), in bytes (WH-20). */
const TEST_EVENT_BODY_LIMIT = 16 * 1024;

/** Webhook endpoints and deliveries (WH-1, WH-3, WH-8 to WH-12; caps SEC-4). */
export const webhookRoutes: FastifyPluginAsyncTypebox<ApiPluginOptions> = async (app, { ctx }) => {
  app.post(
    '/webhook-endpoints',
    {
      schema: {
        ...operation('createWebhookEndpoint'),
        summary: 'Create a webhook endpoint',
        body: CreateEndpointBody,
        description:
          'Returns the whsec_ signing secret once; later reads never show it. A retry with the same Idempotency-Key within 24 hours gets this same answer again, secret included (kept encrypted meanwhile), so a lost answer never strands an endpoint. Unknown event types answer 400 naming the field.',
        response: { 201: EndpointWithSecretSchema, ...operationErrors('createWebhookEndpoint') },
      },
    },
    async (request, reply) => reply.status(201).send(await endpoints.createEndpoint(ctx, request.tenant, request.body)),
  );

  app.get(
    '/webhook-endpoints',
    {
      preValidation: acceptCursorAliases,
      schema: {
        ...operation('listWebhookEndpoints'),
        summary: 'List webhook endpoints',
        querystring: PageQuery,
        description:
          'Endpoints of this environment, newest first, without their secrets; deleted endpoints are not listed.',
        response: { 200: ListOf(WebhookEndpointSchema), ...operationErrors('listWebhookEndpoints') },
      },
    },
    async (request) => endpoints.listEndpoints(ctx, request.tenant, request.query),
  );

  app.get(
    '/webhook-endpoints/:id',
    {
      schema: {
        ...operation('getWebhookEndpoint'),
        summary: 'Retrieve a webhook endpoint',
        params: EndpointIdParams,
        description:
          'One endpoint without its secret (it is shown only when created or rotated), with disabledReason and failingSince when it fails.',
        response: { 200: WebhookEndpointSchema, ...operationErrors('getWebhookEndpoint') },
      },
    },
    async (request) => endpoints.getEndpoint(ctx, request.tenant, request.params.id),
  );

  app.patch(
    '/webhook-endpoints/:id',
    {
      schema: {
        ...operation('updateWebhookEndpoint'),
        summary: 'Update a webhook endpoint',
        params: EndpointIdParams,
        body: UpdateEndpointBody,
        description:
          'Change url, eventTypes, description, or disabled. Re-enabling (disabled: false) clears disabledReason and failingSince.',
        response: { 200: WebhookEndpointSchema, ...operationErrors('updateWebhookEndpoint') },
      },
    },
    async (request) => endpoints.updateEndpoint(ctx, request.tenant, request.params.id, request.body),
  );

  app.delete(
    '/webhook-endpoints/:id',
    {
      schema: {
        ...operation('deleteWebhookEndpoint'),
        summary: 'Delete a webhook endpoint',
        params: EndpointIdParams,
        description:
          'The endpoint stops receiving events at once; deliveries still pending end as failed. Its delivery history stays readable.',
        response: { 200: DeletedSchema, ...operationErrors('deleteWebhookEndpoint') },
      },
    },
    async (request) => endpoints.deleteEndpoint(ctx, request.tenant, request.params.id),
  );

  app.post(
    '/webhook-endpoints/:id/rotate-secret',
    {
      schema: {
        ...operation('rotateWebhookEndpointSecret'),
        summary: 'Rotate the signing secret',
        params: EndpointIdParams,
        description:
          'Returns the new secret once. For 24 hours the old secret keeps signing beside it: Service-Signature then carries two v1= entries, the new one first. Rotating again within those hours retires the older of the two at once, so at most two secrets are ever valid.',
        response: { 200: EndpointWithSecretSchema, ...operationErrors('rotateWebhookEndpointSecret') },
      },
    },
    async (request) => endpoints.rotateSecret(ctx, request.tenant, request.params.id),
  );

  // WH-20: the test route takes no body, so whatever is sent (nothing, `{}`, or an empty body under any content type,
  // application/json included) is read and ignored in this scope only; other routes keep the JSON parser.
  const testEventScope: FastifyPluginAsyncTypebox = async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: TEST_EVENT_BODY_LIMIT }, (_request, _body, done) =>
      done(null, undefined),
    );
    scope.post(
      '/webhook-endpoints/:id/test',
      {
        preHandler: perTenantActionLimit('webhook-test', ctx.config.rateLimits.webhookTestsPerMinute, 'test events'),
        schema: {
          ...operation('sendTestWebhookEvent'),
          summary: 'Send a test event',
          params: EndpointIdParams,
          description:
            "Sends a webhook.test event ({endpointId, message}) to this endpoint only, once, without retries. It is stored as an event (so it also appears in GET /events) but cannot be subscribed to and never reaches other endpoints; it does not count toward the endpoint's failure clock (a 410 answer still disables). The delivery is returned and can be inspected and resent like any other. A disabled endpoint answers 409. The request takes no body: none, an empty one under any content type (application/json included) or any other body is accepted and ignored.",
          response: { 202: WebhookDeliverySchema, ...operationErrors('sendTestWebhookEvent') },
        },
      },
      async (request, reply) =>
        reply.status(202).send(await endpoints.sendTestEvent(ctx, request.tenant, request.params.id)),
    );
  };
  await app.register(testEventScope);

  app.get(
    '/webhook-deliveries',
    {
      preValidation: acceptCursorAliases,
      schema: {
        ...operation('listWebhookDeliveries'),
        summary: 'List webhook deliveries',
        querystring: DeliveryListQuery,
        description:
          'Deliveries of this environment, newest first, optionally of one endpoint, one event or one status (pending, succeeded, failed).',
        response: { 200: ListOf(WebhookDeliverySchema), ...operationErrors('listWebhookDeliveries') },
      },
    },
    async (request) => deliveries.listDeliveries(ctx, request.tenant, request.query),
  );

  app.get(
    '/webhook-deliveries/:id',
    {
      schema: {
        ...operation('getWebhookDelivery'),
        summary: 'Retrieve a webhook delivery with its attempts',
        params: DeliveryIdParams,
        description:
          'One delivery with every attempt: when, the status code or the network error, the duration and the first 4 KB of the response (from a public address only).',
        response: { 200: DeliveryWithAttemptsSchema, ...operationErrors('getWebhookDelivery') },
      },
    },
    async (request) => deliveries.getDelivery(ctx, request.tenant, request.params.id),
  );

  app.post(
    '/webhook-deliveries/:id/resend',
    {
      preHandler: perTenantActionLimit('webhook-resend', ctx.config.rateLimits.webhookResendsPerMinute, 'resends'),
      schema: {
        ...operation('resendWebhookDelivery'),
        summary: 'Resend a webhook delivery',
        params: DeliveryIdParams,
        description:
          'Queues one new attempt now, signed afresh. A failed or succeeded delivery turns pending for that one attempt (no automatic retries follow a failed resend); ' +
          'a pending delivery waiting for its next retry gets that retry now (the schedule goes on if it fails). ' +
          'A delivery whose first attempt is still under way, or whose endpoint is disabled or deleted, answers 409.',
        response: { 202: WebhookDeliverySchema, ...operationErrors('resendWebhookDelivery') },
      },
    },
    async (request, reply) =>
      reply.status(202).send(await deliveries.resendDelivery(ctx, request.tenant, request.params.id)),
  );
};

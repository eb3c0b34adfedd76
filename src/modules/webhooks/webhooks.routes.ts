import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { ApiPluginOptions } from '../../routes.js';
import { acceptCursorAliases } from '../../lib/pagination.js';
import { errorResponses, ListOf, PageQuery } from '../../lib/schemas.js';
import * as deliveries from './deliveries.service.js';
import * as endpoints from './webhooks.service.js';
import {
  CreateEndpointBody, DeletedSchema, DeliveryIdParams, DeliveryListQuery, DeliveryWithAttemptsSchema, EndpointIdParams,
  EndpointWithSecretSchema, UpdateEndpointBody, WebhookDeliverySchema, WebhookEndpointSchema,
} from './webhooks.schemas.js';

const E = 'Webhook Endpoints';
const D = 'Webhook Deliveries';

/** Webhook endpoints and deliveries (spec "POST /webhook-endpoints", "Other endpoints"; issue 4 items 6-7). */
export const webhookRoutes: FastifyPluginAsyncTypebox<ApiPluginOptions> = async (app, { ctx }) => {
  app.post('/webhook-endpoints', {
    schema: {
      tags: [E], summary: 'Create a webhook endpoint', body: CreateEndpointBody,
      description: 'Returns the whsec_ signing secret once; later reads never show it. Unknown event types answer 400 naming the field.',
      response: { 201: EndpointWithSecretSchema, ...errorResponses() },
    },
  }, async (request, reply) => reply.status(201).send(await endpoints.createEndpoint(ctx, request.tenant, request.body)));

  app.get('/webhook-endpoints', {
    preValidation: acceptCursorAliases,
    schema: { tags: [E], summary: 'List webhook endpoints', querystring: PageQuery, response: { 200: ListOf(WebhookEndpointSchema), ...errorResponses() } },
  }, async (request) => endpoints.listEndpoints(ctx, request.tenant, request.query));

  app.get('/webhook-endpoints/:id', {
    schema: { tags: [E], summary: 'Retrieve a webhook endpoint', params: EndpointIdParams, response: { 200: WebhookEndpointSchema, ...errorResponses(404) } },
  }, async (request) => endpoints.getEndpoint(ctx, request.tenant, request.params.id));

  app.patch('/webhook-endpoints/:id', {
    schema: {
      tags: [E], summary: 'Update a webhook endpoint', params: EndpointIdParams, body: UpdateEndpointBody,
      description: 'Change url, eventTypes, description, or disabled. Re-enabling (disabled: false) clears disabledReason and failingSince.',
      response: { 200: WebhookEndpointSchema, ...errorResponses(404) },
    },
  }, async (request) => endpoints.updateEndpoint(ctx, request.tenant, request.params.id, request.body));

  app.delete('/webhook-endpoints/:id', {
    schema: {
      tags: [E], summary: 'Delete a webhook endpoint', params: EndpointIdParams,
      description: 'The endpoint stops receiving events at once; deliveries still pending end as failed. Its delivery history stays readable.',
      response: { 200: DeletedSchema, ...errorResponses(404) },
    },
  }, async (request) => endpoints.deleteEndpoint(ctx, request.tenant, request.params.id));

  app.post('/webhook-endpoints/:id/rotate-secret', {
    schema: {
      tags: [E], summary: 'Rotate the signing secret', params: EndpointIdParams,
      description: 'Returns the new secret once. For 24 hours the old secret keeps signing beside it: Service-Signature then carries two v1= entries, the new one first.',
      response: { 200: EndpointWithSecretSchema, ...errorResponses(404) },
    },
  }, async (request) => endpoints.rotateSecret(ctx, request.tenant, request.params.id));

  app.post('/webhook-endpoints/:id/test', {
    schema: {
      tags: [E], summary: 'Send a test event', params: EndpointIdParams,
      description: 'Sends a webhook.test event ({endpointId, message}) to this endpoint only, once, without retries. It is stored as an event (so it also appears in GET /events) but cannot be subscribed to and never reaches other endpoints; it does not count toward the endpoint\'s failure clock (a 410 answer still disables). The delivery is returned and can be inspected and resent like any other. A disabled endpoint answers 409.',
      response: { 202: WebhookDeliverySchema, ...errorResponses(404, 409) },
    },
  }, async (request, reply) => reply.status(202).send(await endpoints.sendTestEvent(ctx, request.tenant, request.params.id)));

  app.get('/webhook-deliveries', {
    preValidation: acceptCursorAliases,
    schema: { tags: [D], summary: 'List webhook deliveries', querystring: DeliveryListQuery, response: { 200: ListOf(WebhookDeliverySchema), ...errorResponses() } },
  }, async (request) => deliveries.listDeliveries(ctx, request.tenant, request.query as deliveries.DeliveryListParams));

  app.get('/webhook-deliveries/:id', {
    schema: {
      tags: [D], summary: 'Retrieve a webhook delivery with its attempts', params: DeliveryIdParams,
      response: { 200: DeliveryWithAttemptsSchema, ...errorResponses(404) },
    },
  }, async (request) => deliveries.getDelivery(ctx, request.tenant, request.params.id));

  app.post('/webhook-deliveries/:id/resend', {
    schema: {
      tags: [D], summary: 'Resend a webhook delivery', params: DeliveryIdParams,
      description: 'Queues one new attempt now, signed afresh. A failed or succeeded delivery turns pending for that one attempt (no automatic retries follow a failed resend); ' +
        'a pending delivery waiting for its next retry gets that retry now (the schedule goes on if it fails). ' +
        'A delivery whose first attempt is still under way, or whose endpoint is disabled or deleted, answers 409.',
      response: { 202: WebhookDeliverySchema, ...errorResponses(404, 409) },
    },
  }, async (request, reply) => reply.status(202).send(await deliveries.resendDelivery(ctx, request.tenant, request.params.id)));
};

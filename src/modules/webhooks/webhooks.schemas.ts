import { Type } from '@sinclair/typebox';
import { DateTime, Nullable, PageQuery } from '../../lib/schemas.js';
import { EVENT_TYPES } from '../events/events.service.js';

/** One subscribable event type (EVT-2); anything else is a 400 naming `eventTypes.<n>`. */
const EventTypeSchema = Type.String({ enum: [...EVENT_TYPES] });

const Url = Type.String({
  minLength: 1,
  maxLength: 2048,
  description:
    'Where events are POSTed. Must be https and must resolve only to public addresses: an address in the URL is checked now, ' +
    'a host name before every attempt (one with no address, or with any private one, is not called); ' +
    'WEBHOOK_ALLOW_PRIVATE_NETWORKS=true on the service lifts both rules for local development.',
});
const EventTypes = Type.Array(EventTypeSchema, {
  minItems: 1,
  uniqueItems: true,
  description: `Event types to receive: ${EVENT_TYPES.join(', ')}.`,
});
const Description = Type.String({ maxLength: 500, description: 'Your label for the endpoint.' });

/**
 * Body of POST /webhook-endpoints: `{url, eventTypes, description?}` (WH-1, WH-13).
 */
export const CreateEndpointBody = Type.Object(
  { url: Url, eventTypes: EventTypes, description: Type.Optional(Description) },
  { additionalProperties: false, title: 'CreateWebhookEndpointRequest' },
);

/**
 * Body of PATCH /webhook-endpoints/{id}: url, eventTypes, description, disabled; only the fields sent change (WH-8).
 */
export const UpdateEndpointBody = Type.Object(
  {
    url: Type.Optional(Url),
    eventTypes: Type.Optional(EventTypes),
    description: Type.Optional(Nullable(Description)),
    disabled: Type.Optional(
      Type.Boolean({
        description:
          'true stops deliveries; false re-enables the endpoint and resets its failure clock (failingSince).',
      }),
    ),
  },
  { additionalProperties: false, title: 'UpdateWebhookEndpointRequest' },
);

/** Path `{id}` of /webhook-endpoints/{id} routes. */
export const EndpointIdParams = Type.Object({ id: Type.String({ description: 'Webhook endpoint id, prefix we_' }) });

/** Path `{id}` of /webhook-deliveries/{id} routes. */
export const DeliveryIdParams = Type.Object({ id: Type.String({ description: 'Webhook delivery id, prefix wd_' }) });

/** A webhook endpoint as the API shows it, never with its secret (EndpointView). */
export const WebhookEndpointSchema = Type.Object(
  {
    id: Type.String({ description: 'prefix we_' }),
    url: Type.String(),
    description: Nullable(Type.String()),
    eventTypes: Type.Array(Type.String()),
    disabled: Type.Boolean({ description: 'Disabled endpoints receive nothing; pending deliveries to them fail.' }),
    disabledReason: Nullable(
      Type.String({
        description:
          'Why the endpoint was disabled: by you, an HTTP 410 answer, or failing for WEBHOOK_DISABLE_AFTER_HOURS.',
      }),
    ),
    failingSince: Nullable(DateTime),
    previousSecretExpiresAt: Nullable(DateTime),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  {
    title: 'WebhookEndpoint',
    description: 'A webhook endpoint. The signing secret is never shown again after creation or rotation.',
  },
);

/** Answer of create and rotate-secret: the endpoint plus its whsec_ secret, shown only then. */
export const EndpointWithSecretSchema = Type.Composite(
  [
    WebhookEndpointSchema,
    Type.Object({
      secret: Type.String({ description: 'The whsec_ signing secret. Shown only in this response: store it now.' }),
    }),
  ],
  {
    title: 'WebhookEndpointWithSecret',
    description: 'A webhook endpoint with its signing secret, returned only on creation and rotation.',
  },
);

/** Answer of DELETE /webhook-endpoints/{id}: `{id, deleted: true}`. */
export const DeletedSchema = Type.Object(
  { id: Type.String(), deleted: Type.Literal(true) },
  { title: 'DeletedWebhookEndpoint' },
);

/** A delivery status filter: pending, succeeded or failed (DeliveryStatus). */
const DeliveryStatusSchema = Type.String({ enum: ['pending', 'succeeded', 'failed'] });

/** A webhook delivery (WH-12; the public API leaves its fields open): one per endpoint and event. */
export const WebhookDeliverySchema = Type.Object(
  {
    id: Type.String({ description: 'prefix wd_' }),
    endpointId: Type.String(),
    eventId: Type.String(),
    eventType: Type.String(),
    status: Type.String({
      description: 'pending (an attempt is scheduled or running), succeeded (a 2xx arrived) or failed',
    }),
    attemptCount: Type.Integer(),
    nextAttemptAt: Nullable(DateTime),
    lastAttemptAt: Nullable(DateTime),
    failureReason: Nullable(Type.String()),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { title: 'WebhookDelivery' },
);

/** One HTTP try of a delivery: status code, duration in ms, the first 4 KB of the response, or the error. */
const WebhookAttemptSchema = Type.Object(
  {
    id: Type.String({ description: 'prefix wa_' }),
    attemptNumber: Type.Integer({ description: '1 for the first try' }),
    url: Type.String({ description: 'The URL called on this try.' }),
    statusCode: Nullable(Type.Integer({ description: 'null when no response arrived' })),
    durationMs: Type.Integer({ description: 'milliseconds' }),
    responseBody: Nullable(
      Type.String({
        description:
          'First 4 KB of the response body; null when none was kept: an answer from a private or loopback address (allowed only where the operator enabled them) is never stored, so an endpoint cannot read an internal service back.',
      }),
    ),
    error: Nullable(
      Type.String({ description: 'Timeout, connection error or refused address; null when a response arrived.' }),
    ),
    createdAt: DateTime,
  },
  { title: 'WebhookAttempt' },
);

/** GET /webhook-deliveries/{id} answer: the delivery with every attempt, first to last. */
export const DeliveryWithAttemptsSchema = Type.Composite(
  [WebhookDeliverySchema, Type.Object({ attempts: Type.Array(WebhookAttemptSchema) })],
  { title: 'WebhookDeliveryWithAttempts' },
);

/** Query of GET /webhook-deliveries: cursor pagination plus endpointId, eventId and status filters. */
export const DeliveryListQuery = Type.Composite(
  [
    PageQuery,
    Type.Object({
      endpointId: Type.Optional(Type.String()),
      eventId: Type.Optional(Type.String()),
      status: Type.Optional(DeliveryStatusSchema),
    }),
  ],
  { additionalProperties: false },
);

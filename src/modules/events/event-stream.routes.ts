import fastifySse from '@fastify/sse';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { ApiPluginOptions } from '../../context.js';
import { operation, operationErrors } from '../../lib/api-operations.js';
import { sha256 } from '../../lib/secrets.js';
import {
  EventStreamSession,
  parseStreamTypes,
  POSITION_MESSAGE,
  positionCursor,
  startPosition,
  streamsOf,
} from './event-stream.service.js';
import { LISTED_EVENT_TYPES } from './events.service.js';

const StreamQuery = Type.Object(
  {
    types: Type.Optional(
      Type.String({
        minLength: 1,
        description: `Only these event types, separated by commas (${LISTED_EVENT_TYPES.join(', ')}). Default: every event.`,
      }),
    ),
  },
  { additionalProperties: false },
);

const StreamHeaders = Type.Object({
  'last-event-id': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 64,
      description:
        'The last message id received: an event id (evt_…), and the stream resumes right after that event; or the start position (pos_…) a stream sent first, and it resumes from there. Nothing committed meanwhile is missed. EventSource clients send it by themselves when they reconnect.',
    }),
  ),
});

const STREAM_DESCRIPTION = `Server-Sent Events (text/event-stream): every event of this environment as it is committed, the \
same envelope webhooks deliver. Each message has \`id\` (the event id), \`event\` (its type) and \`data\` (the envelope as \
JSON, byte for byte the body a webhook POST would carry). Comment lines (\`: heartbeat\`) keep idle connections open. \
Without Last-Event-ID the stream starts at the moment of connecting (events committed just before may be included) \
and its first message is \`event: position\` with \`id\` the start position (\`pos_…\`) and \`data\` \`{"position": "pos_…"}\`: \
not an event (EventSource clients only keep its id). With Last-Event-ID the stream resumes right after that event, or \
from that start position, in commit order, so reconnecting with the last id received loses nothing, even when no \
event had arrived before the connection dropped (deduplicate on the event id all the same). One API key may hold a limited number of streams at once (429 rate_limited beyond). \
A stream lives as long as its API key: once the key is revoked (or otherwise stops authenticating) the server ends \
the stream within seconds, and reconnecting with that key gets 401 unauthorized. \
\`filing-compliance listen\` (the SDK's command line) forwards this stream to a local URL, signed like webhooks.`;

/** GET /events/stream: the tenant's events as Server-Sent Events, resumable with Last-Event-ID. */
export const eventStreamRoutes: FastifyPluginAsyncTypebox<ApiPluginOptions> = async (app, { ctx }) => {
  const streams = streamsOf(ctx);
  const heartbeatMs = ctx.config.eventStreamHeartbeatSeconds * 1000;
  await app.register(fastifySse, { heartbeatInterval: heartbeatMs });
  // Open streams never end by themselves: close them first, or the server would wait for them on shutdown.
  app.addHook('preClose', async () => streams.closeAll());

  app.get(
    '/events/stream',
    {
      // 'manual': no Accept negotiation, so a client sending Accept: application/json still gets the stream, not a 406.
      sse: 'manual',
      schema: {
        ...operation('streamEvents'),
        summary: 'Stream events',
        description: STREAM_DESCRIPTION,
        querystring: StreamQuery,
        headers: StreamHeaders,
        response: {
          200: Type.Unsafe({
            description: 'The event stream; it stays open until the client or the server closes it.',
            content: {
              'text/event-stream': {
                schema: Type.String({
                  description:
                    'Server-Sent Events, one per event: id, event (type), data (the Event envelope as JSON).',
                }),
              },
            },
          }),
          ...operationErrors('streamEvents'),
        },
      },
    },
    async (request, reply) => {
      const tenant = request.tenant;
      const types = parseStreamTypes(request.query.types);
      const start = await startPosition(ctx.pool, tenant, request.headers['last-event-id']);
      const keyHash = sha256(String(request.headers['x-api-key']));

      let session: EventStreamSession | null = null;
      let unsubscribe: (() => void) | null = null;
      let safetyNet: NodeJS.Timeout | null = null;
      const release = streams.open(keyHash, tenant, () => reply.sse.close());
      const cleanup = () => {
        session?.close();
        unsubscribe?.();
        if (safetyNet) clearInterval(safetyNet);
        release();
      };
      reply.sse.onClose(cleanup);
      reply.sse.keepAlive();
      reply.header('x-request-id', request.id);

      session = new EventStreamSession(
        ctx.pool,
        tenant,
        start,
        types,
        async (event) => {
          await reply.sse.send({ id: event.id, event: event.type, data: event });
        },
        (err) => {
          request.log.error({ err }, 'event stream failed; closing it (the client resumes with Last-Event-ID)');
          reply.sse.close();
        },
      );
      // Subscribed before the first read: an event committed after that read always wakes the session again.
      unsubscribe = await streams.hub.subscribe(tenant, () => session!.wake());
      if (!reply.sse.isConnected) {
        // The client left, or the server began shutting down, while we subscribed: nothing was sent; drop the
        // connection.
        cleanup();
        reply.hijack();
        reply.raw.destroy();
        return;
      }
      // Node sends the status line with the first byte of the body; flushed now, the client knows it is connected.
      reply.sse.sendHeaders(200);
      reply.raw.flushHeaders();
      // EVT-9: the key is looked up once more now that its changes are heard: a revocation committed after this
      // request was authenticated, and announced before the stream was kept by its key, still ends it.
      streams.keys.recheck(keyHash);
      // EVT-8: a client that has no id yet gets the start position as one, so a drop before the first event loses
      // nothing.
      if (!request.headers['last-event-id']) {
        const position = positionCursor(start);
        // A client gone meanwhile is cleaned up by onClose; there is then nothing more to do.
        await reply.sse.send({ id: position, event: POSITION_MESSAGE, data: { position } }).catch(() => undefined);
        if (!reply.sse.isConnected) return;
      }
      safetyNet = setInterval(() => session!.wake(), heartbeatMs);
      safetyNet.unref();
      session.wake();
    },
  );
};

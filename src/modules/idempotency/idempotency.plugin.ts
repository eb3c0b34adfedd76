import { createHmac } from 'node:crypto';
import { Type, type TObject } from '@sinclair/typebox';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import { AppError } from '../../lib/errors.js';
import type { ApiPluginOptions } from '../../context.js';
import * as repo from './idempotency.repo.js';
import { openResponse, sealResponse } from './sealed-response.js';

/*
 * Idempotency-Key for every integrator POST and PUT (IDEM-1 to IDEM-6; modelled on Stripe's idempotency keys, kept in
 * PostgreSQL): the first request with a key claims it (status running), runs, and its response
 * is stored; a retry with the same key and body within 24 h gets that response again (status and body, header
 * `Idempotent-Replayed: true`); the same key with another body answers 422 idempotency_key_reused; a retry while
 * the first still runs answers 409 idempotency_key_in_use. 5xx and 402 responses are not stored, so a retry runs
 * again (IDEM-3).
 * Requests refused by their schema before the handler runs are not stored either (nothing started). Stored
 * responses are encrypted (sealed-response.ts): some carry a credential shown only once (a magic link, a whsec_
 * secret).
 *
 * The key is claimed and completed outside the request's own transaction. If the process dies between the
 * request's commit and storing its response, the key stays `running`; after 5 minutes a retry with the same body
 * takes it over and runs again. Handlers whose effects must happen once record the key in their own transaction
 * and return the earlier result on a re-run: POST /orders stores it on the order group (`request.idempotencyKey`).
 */

/** The `Idempotency-Key` request header (IDEM-1), lower-case as Node exposes header names. */
const IDEMPOTENCY_HEADER = 'idempotency-key';

/** The shared OpenAPI/validation schema of the header, added to every integrator POST and PUT route. */
const IdempotencyKeyHeader = Type.String({
  minLength: 1,
  maxLength: 255,
  description:
    'Optional. A unique value (e.g. a UUID v4) per operation. Retrying with the same key and the same body within 24 hours replays the first response (header Idempotent-Replayed: true, and Original-Request naming the first request when its body carries a requestId) instead of running the request again; the same key with another body answers 422 idempotency_key_reused; a retry while the first request is still running answers 409 idempotency_key_in_use. Responses with status 5xx, 402 insufficient_balance and 400 validation_error (nothing was written) are not remembered: a retry with the same key runs again, so after adding funds, or correcting the request, you can retry with the same key. Keys are scoped to your organization and environment.',
});

declare module 'fastify' {
  interface FastifyRequest {
    /** Set when this request claimed an Idempotency-Key; its response will be stored. */
    idempotencyKey?: string;
  }
}

/** The hooks of idempotencyPlugin: document the header on POST and PUT routes, claim and replay keys, store responses. */
const idempotency: FastifyPluginAsync<ApiPluginOptions> = async (app, { ctx }) => {
  app.addHook('onRoute', documentHeader);

  app.addHook('preHandler', async (request: FastifyRequest, reply: FastifyReply) => {
    const key = headerKey(request);
    if (key === null || !request.tenant) return;
    const hash = requestHash(ctx.secrets.fileUrlSecret, request);
    // Two rounds: a key released (5xx) between our failed claim and the read is simply claimed again.
    for (let round = 0; round < 2; round++) {
      if (await repo.claimKey(ctx.pool, request.tenant, key, hash)) {
        request.idempotencyKey = key;
        return;
      }
      const row = await repo.findKey(ctx.pool, request.tenant, key);
      if (!row) continue;
      if (row.request_hash !== hash) {
        throw new AppError(
          'idempotency_key_reused',
          `Idempotency-Key '${key}' was already used with a different request (another body or endpoint) in the last 24 hours; use a new key for a new request`,
        );
      }
      if (row.status === 'running') {
        throw new AppError(
          'idempotency_key_in_use',
          `A request with Idempotency-Key '${key}' is still being processed; retry after it completes`,
        );
      }
      const stored = openResponse(ctx.secrets.fileUrlSecret, request.tenant, key, row.response_body);
      if (!stored.ok) {
        throw new AppError(
          'conflict',
          `The first response to Idempotency-Key '${key}' can no longer be read; use a new key for a new request`,
        );
      }
      // API-9, IDEM-2: the body is the first answer, with its requestId; Original-Request names that request beside
      // this one's x-request-id, as Stripe's replays do.
      const original = (stored.body as { requestId?: unknown } | null)?.requestId;
      if (typeof original === 'string') reply.header('original-request', original);
      return reply
        .status(row.response_status ?? 200)
        .header('idempotent-replayed', 'true')
        .type('application/json; charset=utf-8')
        .send(JSON.stringify(stored.body));
    }
    throw new AppError(
      'idempotency_key_in_use',
      `A request with Idempotency-Key '${key}' is still being processed; retry after it completes`,
    );
  });

  app.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const key = request.idempotencyKey;
    if (!key) return payload;
    request.idempotencyKey = undefined;
    const body = parseJson(payload);
    if (!remembered(reply.statusCode, body)) await repo.releaseKey(ctx.pool, request.tenant, key);
    // Sealed: a stored response may carry a credential shown only once (magic link, whsec_ secret).
    else
      await repo.completeKey(
        ctx.pool,
        request.tenant,
        key,
        reply.statusCode,
        sealResponse(ctx.secrets.fileUrlSecret, request.tenant, key, body),
      );
    return payload;
  });
};

/**
 * Whether an answer with `status` and JSON `body` is stored for replay (IDEM-3): every answer below 500 except 402 and
 * a validation refusal. A 402 insufficient_balance wrote nothing and tells the caller to add funds and retry; replaying
 * it for 24 hours would refuse that retry with a balance that is no longer true. A 400 validation_error (the schema's
 * or the field rules' refusal, whichever ran it) wrote nothing either: the corrected request runs under the same key,
 * as Stripe does with a request that failed validation.
 */
function remembered(status: number, body: unknown): boolean {
  if (body === undefined || status >= 500 || status === 402) return false;
  return !(status === 400 && (body as { code?: unknown } | null)?.code === 'validation_error');
}

/**
 * Integrator-scope plugin (register it FIRST in `integratorRoutes`): it is not encapsulated (fastify-plugin),
 * so its hooks apply to every route registered after it under /v1 and /test/v1, test helpers included.
 */
export const idempotencyPlugin = fp(idempotency, { name: 'idempotency' });

/**
 * Adds the header to the schema (validation and OpenAPI) of every POST and PUT route, and documents the 409 and 422
 * answers it can cause on routes that declare responses.
 */
function documentHeader(route: RouteOptions): void {
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  if (!methods.some(isKeyedMethod)) return;
  const schema = (route.schema ?? {}) as Record<string, unknown>;
  const headers = schema.headers as TObject | undefined;
  const properties = { ...(headers?.properties ?? {}), [IDEMPOTENCY_HEADER]: Type.Optional(IdempotencyKeyHeader) };
  const response = schema.response as Record<string, unknown> | undefined;
  route.schema = {
    ...schema,
    headers: Type.Object(properties, { additionalProperties: true }),
    ...(response ? { response: { ...IDEMPOTENCY_ERRORS, ...response } } : {}),
  };
}

const IDEMPOTENCY_ERRORS = {
  409: Type.Ref('Error', {
    description:
      'The request conflicts with the current state of the resource, or a request with the same Idempotency-Key is still running (idempotency_key_in_use).',
  }),
  422: Type.Ref('Error', {
    description: 'The Idempotency-Key was already used with a different request body (idempotency_key_reused).',
  }),
};

/**
 * IDEM-1: the methods that take an Idempotency-Key. A PUT can refuse its own retry (the correction of an EIN
 * responsible party answers 409 once the order has moved on), so it needs a replay as much as a POST does.
 */
function isKeyedMethod(method: string): boolean {
  return method === 'POST' || method === 'PUT';
}

function headerKey(request: FastifyRequest): string | null {
  if (!isKeyedMethod(request.method)) return null;
  const raw = request.headers[IDEMPOTENCY_HEADER];
  const key = Array.isArray(raw) ? raw[0] : raw;
  if (key === undefined) return null;
  if (key.length < 1 || key.length > 255)
    throw new AppError('validation_error', 'Idempotency-Key must be 1 to 255 characters', {
      errors: [{ field: 'headers.idempotency-key', message: 'must be 1 to 255 characters' }],
    });
  return key;
}

/**
 * The request's identity: route, path parameters and the body in canonical form (key order ignored), as an HMAC under
 * a key derived from the instance secret. Keyed because request bodies carry values stored nowhere else in full (the
 * EIN responsible party's SSN is kept as its last four digits): a plain hash next to the stored request would confirm
 * a guessed SSN in 10^5 tries.
 */
function requestHash(instanceSecret: string, request: FastifyRequest): string {
  const key = createHmac('sha256', instanceSecret).update('idempotency-request:v1').digest();
  return createHmac('sha256', key).update(requestIdentity(request)).digest('hex');
}

function requestIdentity(request: FastifyRequest): string {
  return canonicalJson({ route: request.routeOptions.url, params: request.params ?? null, body: request.body ?? null });
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function parseJson(payload: unknown): unknown {
  if (typeof payload !== 'string') return payload === null || payload === undefined ? null : undefined;
  if (!payload) return null;
  try {
    return JSON.parse(payload);
  } catch {
    return undefined;
  }
}

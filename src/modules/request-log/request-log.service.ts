import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppContext, Tenant } from '../../context.js';
import { idAt, newId } from '../../lib/ids.js';
import { scrubSecrets } from '../../lib/logger.js';
import * as repo from './request-log.repo.js';

/** Days a failed request stays in the log (PORTAL-24); the daily purge deletes older rows. */
export const REQUEST_LOG_DAYS = 7;
/** Bytes of an error body kept at most (PORTAL-24). */
const ERROR_BODY_LIMIT = 8192;
const PATH_LIMIT = 2048;

/** The error bodies of failed requests, held from onSend to onResponse (the body is gone by then). */
const errorBodies = new WeakMap<FastifyRequest, string>();

/**
 * Records every answer of status 400 or more of the integrator API scope `api` (PORTAL-24): onSend keeps the error
 * body of a failed answer, onResponse (after the client has its answer) writes one row. Only requests whose API key
 * authenticated are recorded, under that key's tenant: a request without a valid key belongs to no organization.
 * Successful answers cost nothing but the status check. A failed write is logged, never answered.
 */
export function recordFailedRequests(api: FastifyInstance, ctx: AppContext): void {
  // Callback hooks, not async ones: a successful answer passes both without a promise made for it.
  api.addHook('onSend', (request, reply, payload, done) => {
    if (reply.statusCode >= 400 && request.apiKeyId && typeof payload === 'string') errorBodies.set(request, payload);
    done(null, payload);
  });
  api.addHook('onResponse', (request, reply, done) => {
    if (reply.statusCode < 400 || !request.apiKeyId || !request.tenant) return done();
    const body = errorBodies.get(request);
    repo
      .insertFailedRequest(ctx.pool, request.tenant, {
        id: newId('failedApiRequest'),
        apiKeyId: request.apiKeyId,
        method: request.method.slice(0, 16),
        // The path without its query, a credential typed into it removed as the logs remove it (AUTH-11).
        path: scrubSecrets(request.url.split('?')[0]!).slice(0, PATH_LIMIT),
        status: reply.statusCode,
        requestId: request.id,
        errorBody: body === undefined ? null : boundedBytes(scrubSecrets(body), ERROR_BODY_LIMIT),
      })
      .catch((err: unknown) => request.log.warn({ err }, 'the failed request could not be recorded in the request log'))
      .finally(() => done());
  });
}

// The longest start of `text` of at most `limit` UTF-8 bytes that ends on a whole character.
function boundedBytes(text: string, limit: number): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= limit) return text;
  let end = limit;
  // Back off over continuation bytes (10xxxxxx) so no character is cut in two.
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString('utf8');
}

/** A request-log entry as the portal shows it. */
export interface FailedRequestView {
  id: string;
  method: string;
  path: string;
  status: number;
  requestId: string;
  apiKeyId: string;
  /** The key as listed everywhere else (`sk_test_…abcd`), never the key itself; null for a key since deleted. */
  apiKey: string | null;
  errorBody: string | null;
  createdAt: Date;
}

/** Filters of the request log as typed (status a number, path a prefix, request id exact). */
export type RequestLogQuery = repo.FailedRequestFilters & { before?: string; limit: number };

/**
 * The tenant's failed requests of the last REQUEST_LOG_DAYS days, newest first, filtered (PORTAL-24). Rows the daily
 * purge has not reached yet are not shown either. @returns the page and whether another follows.
 */
export async function listRequestLog(
  ctx: AppContext,
  tenant: Tenant,
  q: RequestLogQuery,
): Promise<{ items: FailedRequestView[]; hasMore: boolean }> {
  const notBefore = idAt('failedApiRequest', new Date(Date.now() - REQUEST_LOG_DAYS * 86_400_000));
  const rows = await repo.listFailedRequests(ctx.pool, tenant, q, { limit: q.limit, before: q.before, notBefore });
  return {
    hasMore: rows.length > q.limit,
    items: rows.slice(0, q.limit).map((r) => ({
      id: r.id,
      method: r.method,
      path: r.path,
      status: r.status,
      requestId: r.request_id,
      apiKeyId: r.api_key_id,
      apiKey: r.api_key_redacted,
      errorBody: r.error_body,
      createdAt: r.created_at,
    })),
  };
}

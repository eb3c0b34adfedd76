import fastifyRateLimit, {
  type FastifyRateLimitStore,
  type RateLimitOptions,
  type RateLimitPluginOptions,
} from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Counter } from 'prom-client';
import type { RateLimitConfig } from '../../config-types.js';
import type { Tenant } from '../../context.js';
import { AppError } from '../../lib/errors.js';
import { registry } from '../../lib/metrics.js';
import type { SharedCounters } from './shared-counters.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The process's shared rate-limit counters (tests call `sync()` to share them with other processes at once). */
    rateLimitCounters: SharedCounters;
  }
}

/**
 * Requests refused with 429, by limit (api, admin, admin-auth, auth, sign-in, sign-in-failures, magic-link, dashboard,
 * webhook-…).
 */
export const rateLimitedRequests = new Counter({
  name: 'fcs_rate_limited_requests_total',
  help: 'Requests refused with 429 by a rate limit',
  labelNames: ['limit'] as const,
  registers: [registry],
});

/**
 * The limits this service applies; each names its counter bucket prefix and whom it counts (`sign-in-failures`, the
 * growing delays after failed sign-ins, counts in `login_attempts` instead: sign-in-limits.ts).
 */
export type LimitName =
  | 'api'
  | 'admin'
  | 'admin-auth'
  | 'auth'
  | 'sign-in'
  | 'sign-in-failures'
  | 'magic-link'
  | 'dashboard'
  | 'webhook-test'
  | 'webhook-resend';

/**
 * The @fastify/rate-limit store over SharedCounters: `incr` answers from process memory (no round trip), the
 * counters reach PostgreSQL in the background. Buckets are `<limit>:<key>`.
 */
function storeOver(counters: SharedCounters) {
  return class SharedStore implements FastifyRateLimitStore {
    incr(
      key: string,
      callback: (error: Error | null, result?: { current: number; ttl: number }) => void,
      timeWindow: number,
    ): void {
      const { current, ttlMs } = counters.hit(key, timeWindow);
      callback(null, { current, ttl: ttlMs });
    }

    child(): FastifyRateLimitStore {
      return this;
    }
  };
}

/** The client address a per-address limit counts: the socket's, or the proxy's X-Forwarded-For when TRUST_PROXY is on. */
const clientAddress = (request: FastifyRequest) => request.ip;

/**
 * Registers @fastify/rate-limit on `app` (the whole app, global off: routes opt in with `config.rateLimit` from
 * {@link perAddressLimit}), answering 429 with our error body. Headers follow the IETF draft (RateLimit-Limit,
 * RateLimit-Remaining, RateLimit-Reset in seconds; Retry-After in seconds on 429). Starts the counters' sync when
 * the app is ready and stops it (sending what is left) when it closes.
 */
export async function installRateLimits(app: FastifyInstance, counters: SharedCounters): Promise<void> {
  app.decorate('rateLimitCounters', counters);
  app.addHook('onReady', async () => counters.start());
  app.addHook('onClose', async () => counters.stop());
  await app.register(fastifyRateLimit, baseOptions(counters, { global: false, keyGenerator: clientAddress }));
}

/**
 * Route options of a per-client-address limit (magic-link opening): at most `max` requests per
 * window from one address, counted in the bucket `<name>:<address>`.
 */
export function perAddressLimit(limits: RateLimitConfig, name: LimitName, max: number): RateLimitOptions {
  return {
    ...limitOptions(limits, name, max, 'from this client address'),
    keyGenerator: (request) => `${name}:${clientAddress(request)}`,
  };
}

/**
 * Limits every route of the scope `api` (the integrator API of one environment) per API key: registered in
 * that scope, after its key check, so only valid keys are counted. The bucket holds the key's id, never the key.
 */
export async function limitPerApiKey(api: FastifyInstance, limits: RateLimitConfig): Promise<void> {
  await api.register(fastifyRateLimit, {
    ...baseOptions(api.rateLimitCounters, { global: true }),
    ...limitOptions(limits, 'api', limits.apiRequests, 'for this API key'),
    keyGenerator: (request) => `api:${request.apiKeyId}`,
  });
}

/** Limits every route of the scope `admin` (the operator admin API) per client address. */
export async function limitAdminPerAddress(admin: FastifyInstance, limits: RateLimitConfig): Promise<void> {
  await admin.register(fastifyRateLimit, {
    ...baseOptions(admin.rateLimitCounters, { global: true }),
    ...perAddressLimit(limits, 'admin', limits.adminRequests),
  });
}

/** A failed-authentication throttle: `check` before any credential is looked at, `failed` after each refusal. */
export interface FailureThrottle {
  /** @throws AppError rate_limited (429; Retry-After and RateLimit-* set on `reply`) when the address used up its failures. */
  check(request: FastifyRequest, reply: FastifyReply): void;
  /** Counts one failure of the request's client address. */
  failed(request: FastifyRequest): void;
}

/**
 * Throttles failed authentications per client address, counted in the shared counters (bucket `<name>:<address>`):
 * once the address has failed `max` times in the window, `check` answers 429 without the credential being looked at,
 * so guessing costs the guesser time and the service nothing. `what` names the failures in the message.
 */
function failureThrottle(limits: RateLimitConfig, name: LimitName, max: number, what: string): FailureThrottle {
  const windowMs = limits.windowSeconds * 1000;
  const bucket = (request: FastifyRequest) => `${name}:${clientAddress(request)}`;
  return {
    check(request, reply) {
      const { current, ttlMs } = request.server.rateLimitCounters.peek(bucket(request), windowMs);
      if (current < max) return;
      const seconds = Math.max(1, Math.ceil(ttlMs / 1000));
      rateLimitedRequests.inc({ limit: name });
      reply
        .header('retry-after', seconds)
        .header('ratelimit-limit', max)
        .header('ratelimit-remaining', 0)
        .header('ratelimit-reset', seconds);
      throw new AppError(
        'rate_limited',
        `Too many ${what} from this client address (at most ${max}); retry in ${seconds} seconds`,
      );
    },
    failed(request) {
      request.server.rateLimitCounters.hit(bucket(request), windowMs);
    },
  };
}

/**
 * Throttles failed operator-token checks per client address (admin API and /metrics; AUTH-4): beyond
 * `limits.adminAuthFailures` failures in the window, 429 without checking the token.
 */
export function adminAuthThrottle(limits: RateLimitConfig): FailureThrottle {
  return failureThrottle(limits, 'admin-auth', limits.adminAuthFailures, 'failed operator-token attempts');
}

/**
 * Throttles failed authentications per client address on the integrator API (API keys) and the dashboard and
 * console (session cookies) together (AUTH-14): beyond `limits.authFailures` in the window, 429 before any look-up.
 */
export function authFailureThrottle(limits: RateLimitConfig): FailureThrottle {
  return failureThrottle(limits, 'auth', limits.authFailures, 'failed authentications');
}

/**
 * Counts one request on `bucket` and refuses it beyond `max` in the window of `windowMs`, setting RateLimit-* (and
 * Retry-After when refused) on `reply`. `refusal(seconds)` words the 429's message.
 * @throws AppError rate_limited (429) beyond `max`.
 */
export function countAgainstLimit(
  request: FastifyRequest,
  reply: FastifyReply,
  limit: { name: LimitName; bucket: string; max: number; windowMs: number; refusal: (seconds: number) => string },
): void {
  const { current, ttlMs } = request.server.rateLimitCounters.hit(`${limit.name}:${limit.bucket}`, limit.windowMs);
  const seconds = Math.max(1, Math.ceil(ttlMs / 1000));
  reply
    .header('ratelimit-limit', limit.max)
    .header('ratelimit-remaining', Math.max(0, limit.max - current))
    .header('ratelimit-reset', seconds);
  if (current <= limit.max) return;
  rateLimitedRequests.inc({ limit: limit.name });
  reply.header('retry-after', seconds);
  throw new AppError('rate_limited', limit.refusal(seconds));
}

/**
 * A per-tenant limit on one costly action (SEC-4: webhook test sends, resends): at most `max` per minute per
 * organization and environment, counted in the shared counters (bucket `<name>:<org>:<env>`). Returns a preHandler
 * for routes behind the API-key check.
 * @throws AppError rate_limited (429, with Retry-After and RateLimit-* headers) beyond `max`; `what` names the action.
 */
export function perTenantActionLimit(name: LimitName, max: number, what: string) {
  const count = tenantActionLimit(name, max, what);
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => count(request, reply, request.tenant);
}

/**
 * The limit of {@link perTenantActionLimit} for a request that names its tenant itself (the partner portal's
 * session, PORTAL-13): the same buckets, so the API and the portal share one allowance.
 * @throws AppError rate_limited (429) beyond `max`.
 */
export function tenantActionLimit(name: LimitName, max: number, what: string) {
  return (request: FastifyRequest, reply: FastifyReply, tenant: Tenant): void =>
    countAgainstLimit(request, reply, {
      name,
      bucket: `${tenant.organizationId}:${tenant.environment}`,
      max,
      windowMs: 60_000,
      refusal: (seconds) =>
        `Too many ${what} for this environment: at most ${max} per minute; retry in ${seconds} seconds (Retry-After)`,
    });
}

function baseOptions(counters: SharedCounters, options: Partial<RateLimitPluginOptions>): RateLimitPluginOptions {
  return { store: storeOver(counters), enableDraftSpec: true, ...options };
}

function limitOptions(limits: RateLimitConfig, name: LimitName, max: number, whom: string): RateLimitOptions {
  const window = limits.windowSeconds === 60 ? 'minute' : `${limits.windowSeconds} seconds`;
  return {
    max,
    timeWindow: limits.windowSeconds * 1000,
    onExceeded: () => rateLimitedRequests.inc({ limit: name }),
    errorResponseBuilder: (_request, context) =>
      new AppError(
        'rate_limited',
        `Too many requests ${whom}: at most ${context.max} per ${window}; retry in ${Math.max(1, Math.ceil(context.ttl / 1000))} seconds (Retry-After)`,
      ),
  };
}

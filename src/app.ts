import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { recordFailedRequests } from './modules/request-log/request-log.service.js';
import { randomUUID } from 'node:crypto';
import type { Duplex } from 'node:stream';
import type { Config } from './config-types.js';
import { pathPrefix } from './config.js';
import type { AppContext, Environment } from './context.js';
import { bodyIdleTimeout } from './lib/body-idle-timeout.js';
import { installErrorHandlers } from './lib/error-handler.js';
import { rejectUnstorableText } from './lib/text-guard.js';
import { proxyTrustFunction } from './lib/proxy-trust.js';
import { installSiteConstraint, onlyOnSite, SITE_CONSTRAINT, SiteHosts } from './lib/site-hosts.js';
import { loggerOptions } from './lib/logger.js';
import { httpRequestDuration, registry } from './lib/metrics.js';
import { latestMigrationVersion } from './lib/migrate.js';
import { readinessCheck } from './lib/readiness.js';
import { boundRequestSchemas } from './lib/request-bounds.js';
import { buildOpenApiOptions, publishedDocument } from './lib/openapi.js';
import { ErrorSchema } from './lib/schemas.js';
import { validatorCompiler } from './lib/validation.js';
import { operatorAuth } from './modules/admin/operator-auth.js';
import { apiKeyAuth } from './modules/organizations/api-key-auth.js';
import { ApiKeyCache } from './modules/organizations/api-key-cache.js';
import { WhiteLabelDomains } from './modules/organizations/white-label-domains.js';
import { PriceCache } from './modules/billing/price-cache.js';
import { installRateLimits, limitAdminPerAddress, limitPerApiKey } from './modules/rate-limits/rate-limits.js';
import { SharedCounters } from './modules/rate-limits/shared-counters.js';
import { adminRoutes, integratorRoutes, testHelperRoutes, webRoutes } from './routes.js';
import { acceptEmptyJsonBodies } from './lib/empty-json-bodies.js';

/** Options for building the HTTP app; `logger: false` silences request logs (tests may pass a stream). */
export interface BuildOptions {
  logger?: boolean | { stream: NodeJS.WritableStream };
}

/**
 * Builds the Fastify app from plugins (fastify/demo style): the integrator API at the live and test
 * prefixes, test helpers, the admin API, browser routes, OpenAPI at `<prefix>/openapi.json` and `/docs`.
 * Does not listen; `server.ts` does.
 */
export async function buildApp(ctx: AppContext, options: BuildOptions = {}): Promise<FastifyInstance> {
  // BILL-19: this app's routes price orders from memory; the cache lives and dies with the app. Set on the context
  // itself, not a copy: tests replace other parts of it (the DNS resolver) after the app is built.
  const prices = new PriceCache(ctx.pool, ctx.log);
  ctx.prices = prices;
  const logger =
    options.logger === false
      ? false
      : {
          ...loggerOptions(ctx.config.logLevel),
          ...(typeof options.logger === 'object' ? { stream: options.logger.stream } : {}),
        };
  const app = Fastify({
    logger,
    // Always ours: a client's X-Request-Id could collide with or impersonate another request's id in the logs, so it
    // is only logged beside ours (clientRequestId, src/lib/logger.ts).
    genReqId: newRequestId,
    requestIdHeader: false,
    clientErrorHandler,
    bodyLimit: 1024 * 1024,
    ajv: { customOptions: { allErrors: true } },
    // SEC-8: only the configured proxies' word counts (client address, https, host).
    trustProxy: proxyTrustFunction(ctx.config.trustProxy),
    ...httpTimeouts(ctx.config),
    // Errors the router raises before any route runs get the one error body too, and never echo the path (it may
    // hold a credential typed into the wrong place). A path parameter longer than any id names no resource: 404.
    frameworkErrors: (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
      const tooLong = error.code === 'FST_ERR_MAX_PARAM_LENGTH';
      const body: Record<string, string> = tooLong
        ? {
            message: 'No such resource: a path parameter is longer than any id',
            code: 'not_found',
            requestId: request.id,
          }
        : {
            message: 'The URL is not valid: a path segment is not valid percent-encoded UTF-8',
            code: 'bad_request',
            requestId: request.id,
          };
      // API-9: these answers skip the hooks that set it on every other answer.
      return reply
        .status(tooLong ? 404 : 400)
        .header('x-request-id', request.id)
        .type('application/json')
        .send(body);
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  // SEC-7: which host answers what; before any route, so every route registered below may be put on a site.
  const hosts = new SiteHosts(ctx.config);
  installSiteConstraint(app, hosts);
  // LIM-2: every string and integer a request carries has an upper bound, whatever its route's schema says.
  app.addHook('onRoute', (route) => boundRequestSchemas(route.schema as Record<string, unknown> | undefined));
  // The API takes JSON only; browser plugins register form parsers in their own scope.
  app.removeContentTypeParser('text/plain');
  acceptEmptyJsonBodies(app);
  app.addSchema(ErrorSchema);
  installErrorHandlers(app);
  // OPS-7: a body that stops arriving is answered as a request too slow to arrive, long before HTTP_REQUEST_TIMEOUT_MS.
  app.addHook(
    'onRequest',
    bodyIdleTimeout(ctx.config.httpBodyIdleTimeoutMs, (request) => {
      const idle = Object.assign(new Error('the request body stopped arriving'), {
        code: BODY_IDLE,
        requestId: request.id,
      });
      clientErrorHandler.call(app, idle, request.raw.socket);
    }),
  );
  const hsts = hstsFor(ctx, hosts);
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
    if (hsts(request)) reply.header('strict-transport-security', HSTS_VALUE);
  });
  await installRateLimits(
    app,
    new SharedCounters(ctx.pool, ctx.config.rateLimits.syncMs, (err) =>
      ctx.log.warn({ err }, 'rate-limit counters could not be shared; retrying'),
    ),
  );
  app.addHook('preValidation', rejectUnstorableText);
  app.addHook('onResponse', async (request, reply) => {
    // The route pattern, not the URL: ids in paths would make one time series per resource.
    const route = request.routeOptions.url ?? 'unmatched';
    httpRequestDuration.observe(
      { method: request.method, route, status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
  });

  // AUTH-12: each app instance (each process) keeps the keys it has seen and hears their changes; ORG-6: and the
  // verified white-label domains, which the dashboard's host routing reads.
  const apiKeys = new ApiKeyCache(ctx.pool, ctx.config.apiKeyCacheSeconds * 1000, ctx.log);
  const domains = new WhiteLabelDomains(ctx.pool, ctx.log);
  app.decorate('whiteLabelDomains', domains);
  app.addHook('onReady', async () => {
    await Promise.all([apiKeys.start(), prices.start(), domains.start()]);
  });
  app.addHook('onClose', async () => {
    await Promise.all([apiKeys.stop(), prices.stop(), domains.stop()]);
  });

  const livePrefix = pathPrefix(ctx.config.liveBaseUrl);
  const testPrefix = pathPrefix(ctx.config.testBaseUrl);
  await app.register(fastifySwagger, buildOpenApiOptions(ctx, livePrefix, testPrefix));

  for (const [environment, prefix] of [
    ['live', livePrefix],
    ['test', testPrefix],
  ] as Array<[Environment, string]>) {
    await app.register(
      async (api) => {
        api.addHook('onRequest', apiKeyAuth(ctx, environment, apiKeys));
        // PORTAL-24: the integrator's failed requests, for the partner portal's request log.
        recordFailedRequests(api, ctx);
        await limitPerApiKey(api, ctx.config.rateLimits);
        for (const plugin of integratorRoutes) await api.register(plugin, { ctx, environment });
        if (environment === 'test') {
          for (const plugin of testHelperRoutes)
            await api.register(plugin, { ctx, environment, prefix: '/test_helpers' });
        }
      },
      { prefix },
    );
  }

  await app.register(
    async (admin) => {
      onlyOnSite(admin, 'api');
      admin.addHook('onRequest', operatorAuth(ctx));
      await limitAdminPerAddress(admin, ctx.config.rateLimits);
      for (const plugin of adminRoutes) await admin.register(plugin, { ctx });
    },
    { prefix: '/admin/v1' },
  );

  for (const plugin of webRoutes) await app.register(plugin, { ctx });

  // Each base address serves its own environment's document (publishedDocument), no key needed, on its own host
  // (SEC-7); /docs shows both, on the API's hosts.
  for (const [environment, prefix] of [
    ['live', livePrefix],
    ['test', testPrefix],
  ] as Array<[Environment, string]>) {
    app.get(
      `${prefix}/openapi.json`,
      { schema: { hide: true }, constraints: { [SITE_CONSTRAINT]: `${environment}-api` } },
      async () => publishedDocument(app.swagger(), ctx, environment),
    );
  }
  await app.register(async (docs) => {
    onlyOnSite(docs, 'api');
    await docs.register(fastifySwaggerUi, {
      routePrefix: '/docs',
      uiConfig: { docExpansion: 'list', deepLinking: true },
    });
  });
  app.get(
    '/metrics',
    { schema: { hide: true }, onRequest: operatorAuth(ctx), constraints: { [SITE_CONSTRAINT]: 'api' } },
    async (_request, reply) => reply.type(registry.contentType).send(await registry.metrics()),
  );
  registerProbes(app, ctx);
  return app;
}

/**
 * Liveness and readiness for load balancers and orchestrators, without authentication. `/healthz` answers from
 * the process alone (a database outage must not get every process restarted); `/readyz` says whether this
 * process can serve: the database answers and carries this build's migrations (one cached query, see
 * readinessCheck). While the server is closing Fastify answers both with 503, so traffic drains away.
 */
function registerProbes(app: FastifyInstance, ctx: AppContext): void {
  const readiness = readinessCheck(ctx.pool, latestMigrationVersion());
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { hide: true } }, async (request, reply) => {
    const r = await readiness();
    if (r.ready) return { status: 'ready', migration: r.migration, expectedMigration: r.expectedMigration };
    return reply
      .status(503)
      .send({ message: `Not ready: ${r.reason}`, code: 'service_unavailable', requestId: request.id });
  });
}

// Node's defaults let a client hold a request open for 5 minutes; bounded here (Config docs give the reasons).
// Timeouts are checked every second rather than Node's 30 s, so they hold to about a second.
function httpTimeouts(config: Config) {
  return {
    requestTimeout: config.httpRequestTimeoutMs,
    keepAliveTimeout: config.httpKeepAliveTimeoutMs,
    http: {
      requestTimeout: config.httpRequestTimeoutMs,
      headersTimeout: config.httpHeadersTimeoutMs,
      connectionsCheckingInterval: 1000,
    },
  };
}

/** A request id of ours (API-9): `req_` and 32 hex digits. */
function newRequestId(): string {
  return `req_${randomUUID().replace(/-/g, '')}`;
}

/** The code of the error {@link clientErrorHandler} is handed for a request body that stopped arriving (OPS-7). */
const BODY_IDLE = 'FCS_HTTP_BODY_IDLE';

/**
 * Answers requests Node's HTTP parser refuses before any route runs with the one error body (API-1): request line
 * and headers above Node's 16 KB (a huge query string) or bytes that are not HTTP get `400 bad_request`, like a
 * malformed body, instead of Fastify's own body (and 431 for the size, a status outside the closed list of API-2).
 * A request too slow to arrive (HTTP_HEADERS_TIMEOUT_MS, HTTP_REQUEST_TIMEOUT_MS, or a body silent for
 * HTTP_BODY_IDLE_TIMEOUT_MS: OPS-7) is left to Fastify's default answer (408): it never became a request of the API.
 * The connection is closed either way.
 */
function clientErrorHandler(
  this: FastifyInstance,
  err: NodeJS.ErrnoException & { requestId?: string },
  socket: Duplex,
): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const timeout = err.code === 'ERR_HTTP_REQUEST_TIMEOUT' || err.code === BODY_IDLE;
  // A body that stopped arriving belongs to a request that has its id already.
  const requestId = err.requestId ?? newRequestId();
  const json = timeout
    ? '{"error":"Request Timeout","message":"Client Timeout","statusCode":408}'
    : JSON.stringify({
        message:
          err.code === 'HPE_HEADER_OVERFLOW'
            ? 'The request line and headers are larger than 16 KB: shorten the URL or the headers'
            : 'The request is not valid HTTP',
        code: 'bad_request',
        requestId,
      });
  this.log.info(
    { code: err.code, requestId },
    timeout ? 'request too slow to arrive' : 'request refused by the HTTP parser',
  );
  if (socket.writable) {
    const status = timeout ? '408 Request Timeout' : '400 Bad Request';
    socket.write(
      `HTTP/1.1 ${status}\r\nContent-Length: ${Buffer.byteLength(json)}\r\nContent-Type: application/json\r\nX-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${json}`,
    );
  }
  socket.destroy(err);
}

/** One year, the usual HSTS lifetime; subdomains are left out (customers' white-label hosts are not ours to pin). */
const HSTS_VALUE = 'max-age=31536000';

/**
 * Whether a response carries Strict-Transport-Security (SEC-5): when it came over https (as seen through
 * TRUST_PROXY), when it is for a host whose configured public address is https (a TLS proxy in front without
 * TRUST_PROXY), and on white-label hosts (always served over https; their dashboard site decides that it is one).
 */
function hstsFor(ctx: AppContext, hosts: SiteHosts): (request: FastifyRequest) => boolean {
  const { liveBaseUrl, testBaseUrl, dashboardBaseUrl, consoleBaseUrl, portalBaseUrl } = ctx.config;
  const httpsHosts = new Set(
    [liveBaseUrl, testBaseUrl, dashboardBaseUrl, consoleBaseUrl, portalBaseUrl]
      .map((u) => new URL(u))
      .filter((u) => u.protocol === 'https:')
      .map((u) => u.hostname),
  );
  return (request) =>
    request.protocol === 'https' ||
    httpsHosts.has(hosts.hostnameOf(request.raw)) ||
    Boolean(request.dashboardSite?.hostOrganization);
}

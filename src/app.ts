import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance } from 'fastify';
import { randomUUID } from 'node:crypto';
import { pathPrefix, type Config } from './config.js';
import type { AppContext, Environment } from './context.js';
import { installErrorHandlers } from './lib/error-handler.js';
import { loggerOptions } from './lib/logger.js';
import { httpRequestDuration, registry } from './lib/metrics.js';
import { latestMigrationVersion } from './lib/migrate.js';
import { readinessCheck } from './lib/readiness.js';
import { buildOpenApiOptions, publishedDocument } from './lib/openapi.js';
import { ErrorSchema } from './lib/schemas.js';
import { validatorCompiler } from './lib/validation.js';
import { operatorAuth } from './modules/admin/operator-auth.js';
import { apiKeyAuth } from './modules/organizations/api-key-auth.js';
import { adminRoutes, integratorRoutes, testHelperRoutes, webRoutes } from './routes.js';

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
  const logger = options.logger === false ? false : { ...loggerOptions(ctx.config.logLevel), ...(typeof options.logger === 'object' ? { stream: options.logger.stream } : {}) };
  const app = Fastify({
    logger,
    genReqId: (req) => (req.headers['x-request-id'] as string | undefined)?.slice(0, 64) || `req_${randomUUID().replace(/-/g, '')}`,
    requestIdHeader: false,
    bodyLimit: 1024 * 1024,
    ajv: { customOptions: { allErrors: true } },
    trustProxy: ctx.config.trustProxy,
    ...httpTimeouts(ctx.config),
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  // The API takes JSON only; browser plugins register form parsers in their own scope.
  app.removeContentTypeParser('text/plain');
  app.addSchema(ErrorSchema);
  installErrorHandlers(app);
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  app.addHook('onResponse', async (request, reply) => {
    // The route pattern, not the URL: ids in paths would make one time series per resource.
    const route = request.routeOptions.url ?? 'unmatched';
    httpRequestDuration.observe({ method: request.method, route, status: String(reply.statusCode) }, reply.elapsedTime / 1000);
  });

  const livePrefix = pathPrefix(ctx.config.liveBaseUrl);
  const testPrefix = pathPrefix(ctx.config.testBaseUrl);
  await app.register(fastifySwagger, buildOpenApiOptions(ctx, livePrefix, testPrefix));

  for (const [environment, prefix] of [['live', livePrefix], ['test', testPrefix]] as Array<[Environment, string]>) {
    await app.register(async (api) => {
      api.addHook('onRequest', apiKeyAuth(ctx, environment));
      for (const plugin of integratorRoutes) await api.register(plugin, { ctx, environment });
      if (environment === 'test') {
        for (const plugin of testHelperRoutes) await api.register(plugin, { ctx, environment, prefix: '/test_helpers' });
      }
    }, { prefix });
  }

  await app.register(async (admin) => {
    admin.addHook('onRequest', operatorAuth(ctx));
    for (const plugin of adminRoutes) await admin.register(plugin, { ctx });
  }, { prefix: '/admin/v1' });

  for (const plugin of webRoutes) await app.register(plugin, { ctx });

  // Each base address serves its own environment's document (publishedDocument), no key needed; /docs shows both.
  for (const [environment, prefix] of [['live', livePrefix], ['test', testPrefix]] as Array<[Environment, string]>) {
    app.get(`${prefix}/openapi.json`, { schema: { hide: true } }, async () => publishedDocument(app.swagger(), ctx, environment));
  }
  await app.register(fastifySwaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list', deepLinking: true } });
  app.get('/metrics', { schema: { hide: true }, onRequest: operatorAuth(ctx) }, async (_request, reply) => {
    return reply.type(registry.contentType).send(await registry.metrics());
  });
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
    return reply.status(503).send({ message: `Not ready: ${r.reason}`, code: 'service_unavailable', requestId: request.id });
  });
}

// Node's defaults let a client hold a request open for 5 minutes; bounded here (Config docs give the reasons).
// Timeouts are checked every second rather than Node's 30 s, so they hold to about a second.
function httpTimeouts(config: Config) {
  return {
    requestTimeout: config.httpRequestTimeoutMs,
    keepAliveTimeout: config.httpKeepAliveTimeoutMs,
    http: { requestTimeout: config.httpRequestTimeoutMs, headersTimeout: config.httpHeadersTimeoutMs, connectionsCheckingInterval: 1000 },
  };
}

import fastifyCookie from '@fastify/cookie';
import fastifyFormbody from '@fastify/formbody';
import fastifyMultipart from '@fastify/multipart';
import fastifyView from '@fastify/view';
import { Eta } from 'eta';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AppContext } from '../../context.js';
import { sendNotFound, toErrorResponse } from '../../lib/error-handler.js';
import { onlyOnSite } from '../../lib/site-hosts.js';
import { consoleAuditRoutes } from './console.audit-routes.js';
import { consoleFundingRoutes } from './console.funding-routes.js';
import { consoleAuthRoutes } from './console.auth-routes.js';
import { consoleBusinessRoutes } from './console.business-routes.js';
import { consoleOrderActionRoutes } from './console.actions-routes.js';
import { consoleOrderRoutes } from './console.orders-routes.js';
import { consoleTaxIdRoutes } from './console.tax-id-routes.js';
import { consolePricingRoutes } from './console.pricing-routes.js';
import { consoleComplianceRoutes } from './console.deadlines-routes.js';
import { consoleCompanyRoutes } from './console.company-routes.js';
import { authFailureThrottle } from '../rate-limits/rate-limits.js';
import { CONSOLE_PREFIX, COOKIES, checkSessionCsrf, cookieOptions, render } from './console.web.js';
import { findSession, sessionIdOf } from './sessions.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const CSS = fs.readFileSync(path.join(HERE, 'assets', 'console.css'));

/** Paths reachable without a session: the sign-in form and the stylesheet. */
const PUBLIC_PATHS = new Set([`${CONSOLE_PREFIX}/login`, `${CONSOLE_PREFIX}/assets/console.css`]);

/**
 * The filing team's console under /console on the host of CONSOLE_BASE_URL only (CONS-1 to CONS-7; AUTH-7, AUTH-10,
 * SEC-7): server-rendered eta pages, operator sessions in PostgreSQL, a CSRF synchronizer token checked on every POST, form and multipart parsers in this scope
 * only.
 */
export async function consoleWebRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  await app.register(
    async (web) => {
      // SEC-7: the console's routes exist only on the host of CONSOLE_BASE_URL. Its not-found handler (and the hooks
      // of this scope with it) would still answer unknown /console paths on any host: there, the app's plain 404.
      onlyOnSite(web, 'console');
      web.addHook('onRequest', async (request, reply) => {
        const { siteHosts } = request.server;
        if (request.is404 && !siteHosts.serves(siteHosts.hostnameOf(request.raw), 'console'))
          return sendNotFound(request, reply);
      });
      await web.register(fastifyCookie);
      await web.register(fastifyFormbody, { bodyLimit: 256 * 1024 });
      // Multipart forms are read by their route as they arrive (readDocumentForm: a file is streamed, never held whole
      // in memory, DOC-8, DOC-10), which checks their text and CSRF token before the file is stored.
      await web.register(fastifyMultipart);
      await web.register(fastifyView, {
        engine: { eta: new Eta({ views: path.join(HERE, 'views'), cache: true }) },
        templates: path.join(HERE, 'views'),
        production: true,
      });
      web.decorateRequest('consoleSession', null);
      web.addHook('onRequest', authenticate(ctx));
      web.addHook('preHandler', async (request) => {
        if (request.method !== 'POST' || request.url.split('?')[0] === `${CONSOLE_PREFIX}/login`) return;
        if (request.isMultipart() && request.routeOptions.config.checksCsrfWhileReading) return;
        checkSessionCsrf(request);
      });
      web.setErrorHandler((err, request, reply) => renderError(ctx, err, request, reply));
      web.setNotFoundHandler((request, reply) =>
        renderError(ctx, Object.assign(new Error('Page not found'), { statusCode: 404 }), request, reply),
      );

      web.get('/assets/console.css', { schema: { hide: true } }, async (_request, reply) =>
        reply.type('text/css; charset=utf-8').header('cache-control', 'public, max-age=3600').send(CSS),
      );
      web.get('/', { schema: { hide: true } }, async (_request, reply) => reply.redirect(`${CONSOLE_PREFIX}/queue`));
      await web.register(consoleAuthRoutes, { ctx });
      await web.register(consoleOrderRoutes, { ctx });
      await web.register(consoleOrderActionRoutes, { ctx });
      await web.register(consoleTaxIdRoutes, { ctx });
      await web.register(consoleBusinessRoutes, { ctx });
      await web.register(consolePricingRoutes, { ctx });
      await web.register(consoleComplianceRoutes, { ctx });
      await web.register(consoleCompanyRoutes, { ctx });
      await web.register(consoleAuditRoutes, { ctx });
      await web.register(consoleFundingRoutes, { ctx });
    },
    { prefix: CONSOLE_PREFIX },
  );
}

// Every page but the public ones needs a live session; without one, GETs go to the sign-in page and come
// back afterwards, anything else is sent to sign in too (its form would be stale anyway). AUTH-14: a cookie that
// fails counts a failed authentication of the client address (beyond RATE_LIMIT_AUTH_FAILURES: a 429 page before any
// look-up), and one whose MAC does not hold is refused without a look-up.
function authenticate(ctx: AppContext) {
  const failures = authFailureThrottle(ctx.config.rateLimits);
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const pathname = request.url.split('?')[0];
    if (PUBLIC_PATHS.has(pathname)) return;
    const cookie = request.cookies[COOKIES.session];
    if (cookie) {
      failures.check(request, reply);
      const sessionId = sessionIdOf(ctx.secrets.fileUrlSecret, cookie);
      request.consoleSession = sessionId ? await findSession(ctx.pool, sessionId) : null;
      if (request.consoleSession) return;
      failures.failed(request);
      reply.clearCookie(COOKIES.session, cookieOptions(ctx, request));
    }
    const next = request.method === 'GET' ? `?next=${encodeURIComponent(request.url)}` : '';
    return reply.redirect(`${CONSOLE_PREFIX}/login${next}`, 303);
  };
}

function renderError(ctx: AppContext, err: unknown, request: FastifyRequest, reply: FastifyReply) {
  const { status, body } = toErrorResponse(err, request);
  if (status >= 500) request.log.error({ err }, 'console request failed');
  const title =
    status === 404
      ? 'Not found'
      : status === 403
        ? 'Form expired'
        : status === 429
          ? 'Too many attempts'
          : status >= 500
            ? 'Something went wrong'
            : 'Request refused';
  reply.status(status);
  return render(ctx, request, reply, 'error', {
    title,
    status,
    message: body.message,
    requestId: request.id,
    errors: body.errors ?? [],
  });
}

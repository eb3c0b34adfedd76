import fastifyCookie from '@fastify/cookie';
import fastifyFormbody from '@fastify/formbody';
import fastifyView from '@fastify/view';
import { Eta } from 'eta';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AppContext } from '../../context.js';
import { sendNotFound, toErrorResponse } from '../../lib/error-handler.js';
import { onlyOnSite } from '../../lib/site-hosts.js';
import { authFailureThrottle } from '../rate-limits/rate-limits.js';
import { listMemberships } from './members.repo.js';
import { portalAccountRoutes } from './portal.account-routes.js';
import { portalAuditRoutes } from './portal.audit-routes.js';
import { portalAuthRoutes } from './portal.auth-routes.js';
import { portalBillingRoutes } from './portal.billing-routes.js';
import { portalFundingRoutes } from './portal.funding-routes.js';
import { portalDeliveriesRoutes } from './portal.deliveries-routes.js';
import { portalEventsRoutes } from './portal.events-routes.js';
import { portalHomeRoutes } from './portal.home-routes.js';
import { portalRequestLogRoutes } from './portal.request-log-routes.js';
import { portalInvitationRoutes } from './portal.invitation-routes.js';
import { portalRecordsRoutes } from './portal.records-routes.js';
import { portalSettingsRoutes } from './portal.settings-routes.js';
import { portalKeysRoutes } from './portal.keys-routes.js';
import { portalWebhooksRoutes } from './portal.webhooks-routes.js';
import { portalAutoRechargeRoutes } from './portal.auto-recharge-routes.js';
import { checkFormCsrf, checkSessionCsrf, COOKIES, cookieOptions, PORTAL_PREFIX, render } from './portal.web.js';
import { needsSecondFactor } from './roles.js';
import { findLiveSession, portalSessionOf, sessionIdOf } from './sessions.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const CSS = fs.readFileSync(path.join(HERE, 'assets', 'portal.css'));

/** Pages without a session: their POSTs carry the pre-session form token. */
const PUBLIC_FORMS = new Set(
  ['/sign-in', '/invitation', '/password-reset', '/password-reset/new'].map((p) => PORTAL_PREFIX + p),
);
const PUBLIC_PATHS = new Set([...PUBLIC_FORMS, `${PORTAL_PREFIX}/assets/portal.css`]);
/** What a session still waiting for its second factor may open (PORTAL-5). */
const PENDING_PATHS = new Set([`${PORTAL_PREFIX}/second-factor`, `${PORTAL_PREFIX}/sign-out`]);
/** What an owner or admin without a second factor may open: enrolling one, and their sessions (PORTAL-5). */
const ENROL_PATHS = new Set(
  ['/account/two-factor', '/account/two-factor/start', '/account/two-factor/confirm', '/sign-out'].map(
    (p) => PORTAL_PREFIX + p,
  ),
);

/**
 * The partner portal under /portal on the host of PORTAL_BASE_URL only (PORTAL-1 to PORTAL-9, SEC-7):
 * server-rendered eta pages, member sessions in PostgreSQL under cookies of its own, a CSRF token on every POST.
 */
export async function portalWebRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  await app.register(
    async (web) => {
      onlyOnSite(web, 'portal');
      web.addHook('onRequest', async (request, reply) => {
        const { siteHosts } = request.server;
        if (request.is404 && !siteHosts.serves(siteHosts.hostnameOf(request.raw), 'portal'))
          return sendNotFound(request, reply);
      });
      await web.register(fastifyCookie);
      await web.register(fastifyFormbody, { bodyLimit: 64 * 1024 });
      await web.register(fastifyView, {
        engine: { eta: new Eta({ views: path.join(HERE, 'views'), cache: true }) },
        templates: path.join(HERE, 'views'),
        production: true,
      });
      web.decorateRequest('portalSession', null);
      web.addHook('onRequest', authenticate(ctx));
      web.addHook('preHandler', async (request) => {
        if (request.method !== 'POST') return;
        const pathname = request.url.split('?')[0]!;
        // A signed-in member accepts an invitation with the session's token; newcomers with the form token.
        const signedIn = request.portalSession && !request.portalSession.pending;
        if (PUBLIC_FORMS.has(pathname) && !(signedIn && pathname === `${PORTAL_PREFIX}/invitation`))
          checkFormCsrf(ctx, request);
        else checkSessionCsrf(request);
      });
      web.setErrorHandler((err, request, reply) => renderError(ctx, err, request, reply));
      web.setNotFoundHandler((request, reply) =>
        renderError(ctx, Object.assign(new Error('Page not found'), { statusCode: 404 }), request, reply),
      );
      web.get('/assets/portal.css', { schema: { hide: true } }, async (_request, reply) =>
        reply.type('text/css; charset=utf-8').header('cache-control', 'public, max-age=3600').send(CSS),
      );
      await web.register(portalAuthRoutes, { ctx });
      await web.register(portalInvitationRoutes, { ctx });
      await web.register(portalAccountRoutes, { ctx });
      await web.register(portalHomeRoutes, { ctx });
      await web.register(portalRecordsRoutes, { ctx });
      await web.register(portalBillingRoutes, { ctx });
      await web.register(portalFundingRoutes, { ctx });
      await web.register(portalSettingsRoutes, { ctx });
      await web.register(portalKeysRoutes, { ctx });
      await web.register(portalWebhooksRoutes, { ctx });
      await web.register(portalDeliveriesRoutes, { ctx });
      await web.register(portalEventsRoutes, { ctx });
      await web.register(portalRequestLogRoutes, { ctx });
      await web.register(portalAuditRoutes, { ctx });
      await web.register(portalAutoRechargeRoutes, { ctx });
    },
    { prefix: PORTAL_PREFIX },
  );
}

// Every page but the public ones needs a live session (PORTAL-6); a session waiting for its second factor opens only
// that page, and an owner or admin without a second factor only its enrolment (PORTAL-5). A cookie that fails counts
// a failed authentication of the client address (AUTH-14): beyond RATE_LIMIT_AUTH_FAILURES a 429 before any look-up.
function authenticate(ctx: AppContext) {
  const failures = authFailureThrottle(ctx.config.rateLimits);
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const pathname = request.url.split('?')[0]!;
    if (pathname === `${PORTAL_PREFIX}/assets/portal.css`) return;
    const cookie = request.cookies[COOKIES.session];
    if (cookie) {
      failures.check(request, reply);
      const sessionId = sessionIdOf(ctx.secrets.fileUrlSecret, cookie);
      const row = sessionId ? await findLiveSession(ctx.pool, sessionId) : null;
      if (row) request.portalSession = portalSessionOf(row, await listMemberships(ctx.pool, row.member_id));
      else {
        failures.failed(request);
        reply.clearCookie(COOKIES.session, cookieOptions(ctx, request));
      }
    }
    const session = request.portalSession;
    if (PUBLIC_PATHS.has(pathname)) return;
    if (!session) return reply.redirect(`${PORTAL_PREFIX}/sign-in`, 303);
    if (session.pending) {
      if (!PENDING_PATHS.has(pathname)) return reply.redirect(`${PORTAL_PREFIX}/second-factor`, 303);
      return;
    }
    const mustEnrol = !session.member.totpEnabled && session.memberships.some((m) => needsSecondFactor(m.role));
    if (mustEnrol && !ENROL_PATHS.has(pathname) && !pathname.startsWith(`${PORTAL_PREFIX}/sessions`))
      return reply.redirect(`${PORTAL_PREFIX}/account/two-factor`, 303);
  };
}

const TITLES: Record<number, string> = {
  403: 'Not allowed',
  404: 'Not found',
  409: 'Not possible',
  429: 'Too many attempts',
  503: 'Busy',
};

function renderError(ctx: AppContext, err: unknown, request: FastifyRequest, reply: FastifyReply) {
  const { status, body } = toErrorResponse(err, request);
  if (status >= 500 && status !== 503) request.log.error({ err }, 'portal request failed');
  reply.status(status);
  return render(ctx, request, reply, 'error', {
    title: TITLES[status] ?? (status >= 500 ? 'Something went wrong' : 'Request refused'),
    status,
    message: body.message,
    requestId: request.id,
    errors: body.errors ?? [],
  });
}

import fastifyCookie from '@fastify/cookie';
import fastifyFormbody from '@fastify/formbody';
import fastifyView from '@fastify/view';
import { Eta } from 'eta';
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pathPrefix } from '../../config.js';
import type { AppContext } from '../../context.js';
import { AppError } from '../../lib/errors.js';
import { findOrganizationByDomain } from '../organizations/organizations.repo.js';
import { checkoutRoutes } from './checkout.routes.js';
import { dashboardPages } from './dashboard.routes.js';
import { einCorrectionPages } from './ein-correction.routes.js';
import { renderMessage } from './web.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const VIEWS_DIR = path.join(HERE, 'views');
const ASSETS: Record<string, { type: string; body: Buffer }> = {
  'dashboard.css': {
    type: 'text/css; charset=utf-8',
    body: fs.readFileSync(path.join(HERE, 'assets', 'dashboard.css')),
  },
  'dashboard.js': {
    type: 'text/javascript; charset=utf-8',
    body: fs.readFileSync(path.join(HERE, 'assets', 'dashboard.js')),
  },
};
const HOST_CONSTRAINT = 'dashboardHost';

interface SiteOptions {
  ctx: AppContext;
  whiteLabel: boolean;
  basePath: string;
}

/**
 * The customer dashboard (DASH-1 to DASH-11): mounted at the path of DASHBOARD_BASE_URL (default /dashboard)
 * on the service's own host, and at the root of every organization's white-label domain (routing by Host).
 * Cookies, form bodies and templates are registered inside this scope only, so the JSON API keeps refusing
 * form bodies with 415.
 */
export const dashboardWeb: FastifyPluginAsync<{ ctx: AppContext }> = async (app, { ctx }) => {
  addHostConstraint(app, ctx);
  const basePath = pathPrefix(ctx.config.dashboardBaseUrl);
  await app.register(dashboardSite, { ctx, whiteLabel: false, basePath, prefix: basePath });
  await app.register(dashboardSite, { ctx, whiteLabel: true, basePath: '' });
};

/** The route handler a constraint strategy's storage keeps, as Fastify's router declares it. */
type ConstrainedHandler = Parameters<
  ReturnType<Parameters<FastifyInstance['addConstraintStrategy']>[0]['storage']>['set']
>[1];

// Routes of the white-label mount carry a Host constraint so they never shadow other root routes on the
// service's own hosts. The constraint is a cheap filter; the organization is looked up per request.
function addHostConstraint(app: FastifyInstance, ctx: AppContext): void {
  const ownHosts = new Set([
    'localhost',
    '127.0.0.1',
    '[::1]',
    ...[ctx.config.liveBaseUrl, ctx.config.testBaseUrl, ctx.config.dashboardBaseUrl, ctx.config.consoleBaseUrl].map(
      (u) => new URL(u).hostname,
    ),
  ]);
  app.addConstraintStrategy({
    name: HOST_CONSTRAINT,
    storage() {
      const map = new Map<unknown, ConstrainedHandler>();
      return {
        get: (k: unknown) => map.get(k) ?? null,
        set: (k: unknown, v: ConstrainedHandler) => void map.set(k, v),
      };
    },
    deriveConstraint(req: { headers: Record<string, string | string[] | undefined> }) {
      const host = hostnameOf(req.headers, ctx.config.trustProxy);
      return host && !ownHosts.has(host) ? 'white-label' : undefined;
    },
    mustMatchWhenDerived: false,
  });
}

/** Lower-case host name of a request without the port (X-Forwarded-Host first when TRUST_PROXY is on). */
function hostnameOf(headers: Record<string, string | string[] | undefined>, trustProxy: boolean): string | null {
  const forwarded = trustProxy ? headers['x-forwarded-host'] : undefined;
  const raw = String(forwarded ?? headers.host ?? '')
    .split(',')[0]
    .trim()
    .toLowerCase();
  if (!raw) return null;
  return raw.startsWith('[') ? raw.slice(0, raw.indexOf(']') + 1) : raw.replace(/:\d+$/, '');
}

const dashboardSite: FastifyPluginAsync<SiteOptions> = async (site, { ctx, whiteLabel, basePath }) => {
  if (whiteLabel) {
    site.addHook('onRoute', (route) => {
      route.constraints = { ...route.constraints, [HOST_CONSTRAINT]: 'white-label' };
    });
  }
  await site.register(fastifyCookie);
  await site.register(fastifyFormbody, { bodyLimit: 64 * 1024 });
  await site.register(fastifyView, {
    engine: { eta: new Eta({ views: VIEWS_DIR, cache: true }) },
    root: VIEWS_DIR,
    production: true,
  });

  site.decorateRequest('dashboardSite', null as never);
  site.decorateRequest('signedIn', null as never);
  site.addHook('onRequest', async (request, reply) => {
    const host = hostnameOf(request.headers, ctx.config.trustProxy) ?? '';
    const hostOrganization = whiteLabel ? await findOrganizationByDomain(ctx.pool, host) : null;
    if (whiteLabel && !hostOrganization) return reply.callNotFound();
    request.dashboardSite = { basePath, hostOrganization, host };
    // form-action also covers where a form's response redirects: checkout goes on to Stripe's payment page (PAY-2).
    reply
      .header('x-frame-options', 'DENY')
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'same-origin')
      .header(
        'content-security-policy',
        "default-src 'self'; img-src 'self' https: data:; style-src 'self' 'unsafe-inline'; script-src 'self'; form-action 'self' https://checkout.stripe.com; frame-ancestors 'none'; base-uri 'none'",
      );
  });
  site.setErrorHandler((err, request, reply) => renderError(err, request, reply));

  site.get<{ Params: { file: string } }>('/assets/:file', { schema: { hide: true } }, async (request, reply) => {
    const asset = ASSETS[request.params.file];
    if (!asset) return reply.callNotFound();
    return reply.type(asset.type).header('cache-control', 'public, max-age=300').send(asset.body);
  });
  await site.register(dashboardPages, { ctx });
  await site.register(checkoutRoutes, { ctx });
  await site.register(einCorrectionPages, { ctx });
};

// Errors on dashboard pages are pages, not JSON: a 4xx explains itself, a 5xx never shows internals.
function renderError(err: unknown, request: FastifyRequest, reply: Parameters<typeof renderMessage>[0]) {
  const status = err instanceof AppError ? err.status : ((err as { statusCode?: number }).statusCode ?? 500);
  if (status >= 500) {
    request.log.error({ err }, 'dashboard request failed');
    return renderMessage(
      reply,
      request,
      500,
      'Something went wrong',
      `Please try again in a moment. If it keeps happening, quote reference ${request.id}.`,
    );
  }
  request.log.info({ status }, 'dashboard request refused');
  const message =
    err instanceof AppError
      ? err.message
      : status === 415
        ? 'This form could not be read.'
        : 'The request could not be processed.';
  return renderMessage(reply, request, status, 'We could not do that', message);
}

import fastifyCookie from '@fastify/cookie';
import fastifyFormbody from '@fastify/formbody';
import fastifyView from '@fastify/view';
import { Eta } from 'eta';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pathPrefix } from '../../config.js';
import type { AppContext } from '../../context.js';
import { sendNotFound } from '../../lib/error-handler.js';
import { AppError } from '../../lib/errors.js';
import { onlyOnSite } from '../../lib/site-hosts.js';
import { findOrganization } from '../organizations/organizations.repo.js';
import { checkoutRoutes } from './checkout.routes.js';
import { dashboardPages } from './dashboard.routes.js';
import { einCorrectionPages } from './ein-correction.routes.js';
import { parseDashboardForm, renderMessage } from './web.js';

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
interface SiteOptions {
  ctx: AppContext;
  whiteLabel: boolean;
  basePath: string;
}

/**
 * The customer dashboard (DASH-1 to DASH-11): mounted at the path of DASHBOARD_BASE_URL (default /dashboard) on
 * that address's host only, and at the root of every verified white-label domain (routing by host, SEC-7).
 * Cookies, form bodies and templates are registered inside this scope only, so the JSON API keeps refusing
 * form bodies with 415.
 */
export const dashboardWeb: FastifyPluginAsync<{ ctx: AppContext }> = async (app, { ctx }) => {
  const basePath = pathPrefix(ctx.config.dashboardBaseUrl);
  await app.register(dashboardSite, { ctx, whiteLabel: false, basePath, prefix: basePath });
  await app.register(dashboardSite, { ctx, whiteLabel: true, basePath: '' });
};

/**
 * The organization a white-label request is for (DASH-1): the verified domain's owner, from the list in memory
 * (ORG-6), so a host that is no verified domain costs no database round trip; null for such a host.
 */
async function hostOrganizationOf(ctx: AppContext, request: FastifyRequest, host: string) {
  const organizationId = await request.server.whiteLabelDomains.organizationOf(host);
  return organizationId ? findOrganization(ctx.pool, organizationId) : null;
}

const dashboardSite: FastifyPluginAsync<SiteOptions> = async (site, { ctx, whiteLabel, basePath }) => {
  // SEC-7: the white-label routes exist only on hosts that are none of ours, so they never shadow other root routes;
  // whether the host is a verified domain is asked per request.
  onlyOnSite(site, whiteLabel ? 'white-label' : 'dashboard');
  await site.register(fastifyCookie);
  await site.register(fastifyFormbody, { bodyLimit: 64 * 1024, parser: parseDashboardForm });
  await site.register(fastifyView, {
    engine: { eta: new Eta({ views: VIEWS_DIR, cache: true }) },
    root: VIEWS_DIR,
    production: true,
  });

  site.decorateRequest('dashboardSite', null as never);
  site.decorateRequest('signedIn', null as never);
  site.addHook('onRequest', async (request, reply) => {
    const host = request.server.siteHosts.hostnameOf(request.raw);
    const hostOrganization = whiteLabel ? await hostOrganizationOf(ctx, request, host) : null;
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
  // DASH-11: an unknown page under the dashboard's own path is a page too. White-label hosts serve the dashboard at
  // their root, whose not-found answer is the service's one.
  if (!whiteLabel && basePath)
    site.setNotFoundHandler((request, reply) => {
      const { siteHosts } = request.server;
      if (!siteHosts.serves(siteHosts.hostnameOf(request.raw), 'dashboard')) return sendNotFound(request, reply);
      return renderMessage(
        reply,
        request,
        404,
        'Page not found',
        'There is no such page. Open the link you were sent again.',
      );
    });

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
  return renderMessage(reply, request, status, status === 429 ? 'Too many requests' : 'We could not do that', message);
}

import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { defaultDashboardHost } from '../magic-links/magic-links.service.js';
import { perAddressLimit } from '../rate-limits/rate-limits.js';
import { enabledTiers } from './checkout.service.js';
import * as service from './dashboard.service.js';
import { signedFileUrl } from '../documents/file-urls.js';
import { presentDocument } from '../branding/wording.js';
import { presentCompany, presentOrder } from './presenters.js';
import {
  revokeSession,
  SESSION_COOKIE,
  SESSION_MAX_SECONDS,
  sessionCookieValue,
  startSessionFromLink,
} from './sessions.js';
import { chrome, renderMessage, renderPage, requireCsrf, requireSession } from './web.js';

/** Lifetime of the signed file URL a download click redirects to, in seconds. */
const DOWNLOAD_URL_TTL_SECONDS = 300;

/** Sign-in by magic link, sign-out, and the read-only pages: companies, company, order history, downloads. */
export const dashboardPages: FastifyPluginAsync<{ ctx: AppContext }> = async (app, { ctx }) => {
  const signedIn = { preHandler: requireSession(ctx) };

  // Link checkers and mail scanners probe with HEAD: that is no browser frame signing in, so it spends nothing
  // (ML-3) and tells nothing about the token either.
  app.head('/auth/:token', async (_request, reply) =>
    reply
      .status(200)
      .header('cache-control', 'no-store')
      .header('referrer-policy', 'no-referrer')
      .type('text/html; charset=utf-8')
      .send(),
  );

  app.get<{ Params: { token: string } }>(
    '/auth/:token',
    {
      exposeHeadRoute: false,
      config: { rateLimit: perAddressLimit(ctx.config.rateLimits, 'magic-link', ctx.config.rateLimits.magicLinkOpens) },
    },
    async (request, reply) => {
      // The token must not leak through the Referer of anything this answer loads (logos are remote).
      reply.header('referrer-policy', 'no-referrer');
      const { basePath, hostOrganization, host } = request.dashboardSite;
      const { token } = request.params;
      const started = await startSessionFromLink(ctx.pool, token, {
        organizationId: hostOrganization?.id ?? null,
        host,
        defaultHost: defaultDashboardHost(ctx),
      });
      if (!started) return refuseLink(ctx, request, reply, token);
      // White-label domains are always served over https (magic links name them so), and the default site is when its
      // public address is https even behind a TLS proxy without TRUST_PROXY: the cookie must never travel over plain http.
      const https =
        Boolean(hostOrganization) || request.protocol === 'https' || ctx.config.dashboardBaseUrl.startsWith('https:');
      reply.setCookie(SESSION_COOKIE, sessionCookieValue(ctx.secrets.fileUrlSecret, started.sessionId), {
        path: basePath || '/',
        httpOnly: true,
        sameSite: 'lax',
        secure: https,
        maxAge: SESSION_MAX_SECONDS,
      });
      return reply.redirect(
        started.companyId ? `${basePath}/companies/${encodeURIComponent(started.companyId)}` : `${basePath}/`,
        303,
      );
    },
  );

  app.get('/', signedIn, async (request, reply) => {
    const { session, organization } = request.signedIn;
    const after = service.cursorOf(request.query, 'after');
    const { companies, prices } = await service.companiesPage(ctx.pool, session, after);
    return renderPage(reply, 'companies', chrome(request.dashboardSite, organization, request.signedIn, 'companies'), {
      canForm: enabledTiers(prices).length > 0,
      companies: companies.rows.map((c) => ({
        ...presentCompany(c),
        openOrders: c.open_orders,
        exceptions: c.exceptions,
      })),
      next: companies.next,
      paged: Boolean(after),
    });
  });

  app.get<{ Params: { companyId: string }; Querystring: { placed?: string } }>(
    '/companies/:companyId',
    signedIn,
    async (request, reply) => {
      const { session, organization } = request.signedIn;
      const company = await service.findCompanyForUser(ctx.pool, session, request.params.companyId);
      if (!company)
        return renderMessage(
          reply,
          request,
          404,
          'Company not found',
          'This company does not exist or you are not one of its admins.',
        );
      const { orders, documents, placed, deadlines } = await service.companyPage(
        ctx.pool,
        session,
        company.id,
        request.query,
        `${request.dashboardSite.basePath}/companies/${encodeURIComponent(company.id)}/checkout`,
      );
      return renderPage(reply, 'company', chrome(request.dashboardSite, organization, request.signedIn, 'companies'), {
        company: presentCompany(company),
        orders: orders.rows.map(presentOrder),
        documents: documents.rows.map(presentDocument),
        ordersNext: orders.next,
        documentsNext: documents.next,
        placed: placed.map(presentOrder),
        deadlines,
      });
    },
  );

  app.get('/orders', signedIn, async (request, reply) => {
    const { session, organization } = request.signedIn;
    const after = service.cursorOf(request.query, 'after');
    const orders = await service.ordersPage(ctx.pool, session, after);
    return renderPage(reply, 'orders', chrome(request.dashboardSite, organization, request.signedIn, 'orders'), {
      orders: orders.rows.map(presentOrder),
      next: orders.next,
      paged: Boolean(after),
    });
  });

  app.get<{ Params: { documentId: string } }>('/documents/:documentId/download', signedIn, async (request, reply) => {
    const { session } = request.signedIn;
    const doc = await service.findDocumentForUser(ctx.pool, session, request.params.documentId);
    if (!doc)
      return renderMessage(
        reply,
        request,
        404,
        'Document not found',
        'This document does not exist or belongs to a company you do not administer.',
      );
    // A short-lived signed URL made at click time, so no lasting file URL sits in the page.
    return reply
      .header('cache-control', 'no-store')
      .redirect(signedFileUrl(ctx, doc.id, { ttlSeconds: DOWNLOAD_URL_TTL_SECONDS }), 302);
  });

  app.post('/sign-out', { preHandler: [requireSession(ctx), requireCsrf] }, async (request, reply) => {
    const { session, organization } = request.signedIn;
    await revokeSession(ctx.pool, session.idHash);
    reply.clearCookie(SESSION_COOKIE, { path: request.dashboardSite.basePath || '/' });
    return renderPage(reply, 'message', chrome(request.dashboardSite, organization, null), {
      title: 'You are signed out',
      message: 'To come back, open a new sign-in link.',
    });
  });
};

// Why a link signed no one in, as a page branded for the organization that minted it when the token is known: a
// live link opened on another host than the one it was issued for is refused without being spent (403, naming
// where it works); anything else is used, expired or unknown (410).
async function refuseLink(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, token: string) {
  const { hostOrganization, host } = request.dashboardSite;
  const { link, organization } = await service.refusedLink(ctx, token, hostOrganization);
  const issuedFor = link ? (link.host ?? defaultDashboardHost(ctx)) : null;
  if (
    link &&
    !link.used_at &&
    link.expires_at > new Date() &&
    issuedFor !== host &&
    (!hostOrganization || hostOrganization.id === link.organization_id)
  ) {
    request.log.info({ issuedFor, host }, 'magic link opened on another host');
    return renderMessage(
      reply,
      request,
      403,
      'This link works only at another address',
      `For your security this sign-in link opens only at ${issuedFor}. Open it from the message you received, without changing the address.`,
      organization,
    );
  }
  return renderMessage(
    reply,
    request,
    410,
    'This link was used or has expired',
    `Sign-in links work once and for 7 days. Get a new link from ${organization?.name ?? 'the service that sent you this one'} to open your dashboard.`,
    organization,
  );
}

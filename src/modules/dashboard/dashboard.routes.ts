import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { sha256 } from '../../lib/secrets.js';
import { findMagicLinkByHash } from '../magic-links/magic-links.repo.js';
import { defaultDashboardHost } from '../magic-links/magic-links.service.js';
import { findOrganization } from '../organizations/organizations.repo.js';
import { perAddressLimit } from '../rate-limits/rate-limits.js';
import { enabledTiers, loadPrices } from './checkout.service.js';
import * as repo from './dashboard.repo.js';
import { signedFileUrl } from '../documents/file-urls.js';
import { presentCompany, presentDocument, presentOrder } from './presenters.js';
import { dashboardDeadlines } from '../compliance/compliance.views.js';
import { revokeSession, SESSION_COOKIE, SESSION_MAX_SECONDS, startSessionFromLink } from './sessions.js';
import { chrome, renderMessage, renderPage, requireCsrf, requireSession } from './web.js';

/** Rows per page of the dashboard's lists (companies, orders, documents). */
const PAGE_SIZE = 25;
const CURSOR_SHAPE = /^[a-z]+_[A-Za-z0-9]{1,64}$/;

/** The keyset cursor of a list from the query string: an id of the previous page's last row, or null (first page). */
function cursorOf(query: unknown, name: string): string | null {
  const value = (query as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' && CURSOR_SHAPE.test(value) ? value : null;
}

/** Splits `limit + 1` fetched rows into the page and the cursor of the next page (null on the last). */
function paged<R extends { id: string }>(rows: R[]): { rows: R[]; next: string | null } {
  return rows.length > PAGE_SIZE ? { rows: rows.slice(0, PAGE_SIZE), next: rows[PAGE_SIZE - 1]!.id } : { rows, next: null };
}
/** Lifetime of the signed file URL a download click redirects to, in seconds. */
const DOWNLOAD_URL_TTL_SECONDS = 300;

/** Sign-in by magic link, sign-out, and the read-only pages: companies, company, order history, downloads. */
export const dashboardPages: FastifyPluginAsync<{ ctx: AppContext }> = async (app, { ctx }) => {
  const signedIn = { preHandler: requireSession(ctx) };

  // Link checkers and mail scanners probe with HEAD: that is no browser frame signing in, so it spends nothing
  // (spec "POST /auth/magic-link" rule 2) and tells nothing about the token either.
  app.head('/auth/:token', async (_request, reply) => reply.status(200).header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').type('text/html; charset=utf-8').send());

  app.get<{ Params: { token: string } }>('/auth/:token', { exposeHeadRoute: false, config: { rateLimit: perAddressLimit(ctx.config.rateLimits, 'magic-link', ctx.config.rateLimits.magicLinkOpens) } }, async (request, reply) => {
    // The token must not leak through the Referer of anything this answer loads (logos are remote).
    reply.header('referrer-policy', 'no-referrer');
    const { basePath, hostOrganization, host } = request.dashboardSite;
    const { token } = request.params;
    const started = await startSessionFromLink(ctx.pool, token, { organizationId: hostOrganization?.id ?? null, host, defaultHost: defaultDashboardHost(ctx) });
    if (!started) return refuseLink(ctx, request, reply, token);
    // White-label domains are always served over https (magic links name them so), and the default site is when its
    // public address is https even behind a TLS proxy without TRUST_PROXY: the cookie must never travel over plain http.
    const https = Boolean(hostOrganization) || request.protocol === 'https' || ctx.config.dashboardBaseUrl.startsWith('https:');
    reply.setCookie(SESSION_COOKIE, started.sessionId, {
      path: basePath || '/', httpOnly: true, sameSite: 'lax', secure: https, maxAge: SESSION_MAX_SECONDS,
    });
    return reply.redirect(started.companyId ? `${basePath}/companies/${encodeURIComponent(started.companyId)}` : `${basePath}/`, 303);
  });

  app.get('/', signedIn, async (request, reply) => {
    const { session, organization } = request.signedIn;
    const after = cursorOf(request.query, 'after');
    const [rows, prices] = await Promise.all([repo.listCompaniesForUser(ctx.pool, session.tenant, session.userId, { limit: PAGE_SIZE, after }), loadPrices(ctx.pool, session.tenant)]);
    const companies = paged(rows);
    return renderPage(reply, 'companies', chrome(request.dashboardSite, organization, request.signedIn, 'companies'), {
      canForm: enabledTiers(prices).length > 0,
      companies: companies.rows.map((c) => ({ ...presentCompany(c), openOrders: c.open_orders, exceptions: c.exceptions })),
      next: companies.next, paged: Boolean(after),
    });
  });

  app.get<{ Params: { companyId: string }; Querystring: { placed?: string } }>('/companies/:companyId', signedIn, async (request, reply) => {
    const { session, organization } = request.signedIn;
    const company = await repo.findCompanyForUser(ctx.pool, session.tenant, session.userId, request.params.companyId);
    if (!company) return renderMessage(reply, request, 404, 'Company not found', 'This company does not exist or you are not one of its admins.');
    const [orderRows, documentRows, placed, deadlines] = await Promise.all([
      repo.listOrdersForCompany(ctx.pool, session.tenant, company.id, { limit: PAGE_SIZE, after: cursorOf(request.query, 'ordersAfter') }),
      repo.listDocumentsForCompany(ctx.pool, session.tenant, company.id, { limit: PAGE_SIZE, after: cursorOf(request.query, 'documentsAfter') }),
      cursorOf(request.query, 'placed') ? repo.listOrdersOfGroup(ctx.pool, session.tenant, company.id, String(request.query.placed)) : Promise.resolve([]),
      dashboardDeadlines(ctx.pool, session.tenant, company.id, `${request.dashboardSite.basePath}/companies/${encodeURIComponent(company.id)}/checkout`),
    ]);
    const [orders, documents] = [paged(orderRows), paged(documentRows)];
    return renderPage(reply, 'company', chrome(request.dashboardSite, organization, request.signedIn, 'companies'), {
      company: presentCompany(company),
      orders: orders.rows.map(presentOrder),
      documents: documents.rows.map(presentDocument),
      ordersNext: orders.next, documentsNext: documents.next,
      placed: placed.map(presentOrder),
      deadlines,
    });
  });

  app.get('/orders', signedIn, async (request, reply) => {
    const { session, organization } = request.signedIn;
    const after = cursorOf(request.query, 'after');
    const orders = paged(await repo.listOrdersForUser(ctx.pool, session.tenant, session.userId, { limit: PAGE_SIZE, after }));
    return renderPage(reply, 'orders', chrome(request.dashboardSite, organization, request.signedIn, 'orders'), { orders: orders.rows.map(presentOrder), next: orders.next, paged: Boolean(after) });
  });

  app.get<{ Params: { documentId: string } }>('/documents/:documentId/download', signedIn, async (request, reply) => {
    const { session } = request.signedIn;
    const doc = await repo.findDocumentForUser(ctx.pool, session.tenant, session.userId, request.params.documentId);
    if (!doc) return renderMessage(reply, request, 404, 'Document not found', 'This document does not exist or belongs to a company you do not administer.');
    // A short-lived signed URL made at click time, so no lasting file URL sits in the page.
    return reply.header('cache-control', 'no-store').redirect(signedFileUrl(ctx, doc.id, { ttlSeconds: DOWNLOAD_URL_TTL_SECONDS }), 302);
  });

  app.post('/sign-out', { preHandler: [requireSession(ctx), requireCsrf] }, async (request, reply) => {
    const { session, organization } = request.signedIn;
    await revokeSession(ctx.pool, session.idHash);
    reply.clearCookie(SESSION_COOKIE, { path: request.dashboardSite.basePath || '/' });
    return renderPage(reply, 'message', chrome(request.dashboardSite, organization, null), {
      title: 'You are signed out', message: 'To come back, open a new sign-in link.',
    });
  });
};

// Why a link signed no one in, as a page branded for the organization that minted it when the token is known: a
// live link opened on another host than the one it was issued for is refused without being spent (403, naming
// where it works); anything else is used, expired or unknown (410).
async function refuseLink(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, token: string) {
  const { hostOrganization, host } = request.dashboardSite;
  const link = /^[A-Za-z0-9_-]{32,128}$/.test(token) ? await findMagicLinkByHash(ctx.pool, sha256(token)) : null;
  const organization = hostOrganization ?? (link ? await findOrganization(ctx.pool, link.organization_id) : null);
  const issuedFor = link ? link.host ?? defaultDashboardHost(ctx) : null;
  if (link && !link.used_at && link.expires_at > new Date() && issuedFor !== host && (!hostOrganization || hostOrganization.id === link.organization_id)) {
    request.log.info({ issuedFor, host }, 'magic link opened on another host');
    return renderMessage(reply, request, 403, 'This link works only at another address',
      `For your security this sign-in link opens only at ${issuedFor}. Open it from the message you received, without changing the address.`, organization);
  }
  return renderMessage(reply, request, 410, 'This link was used or has expired',
    `Sign-in links work once and for 7 days. Get a new link from ${organization?.name ?? 'the service that sent you this one'} to open your dashboard.`, organization);
}

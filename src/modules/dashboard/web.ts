import type { FastifyReply, FastifyRequest } from 'fastify';
import querystring from 'node:querystring';
import { AppError } from '../../lib/errors.js';
import type { AppContext } from '../../context.js';
import { safeEqual, sha256 } from '../../lib/secrets.js';
import { bodyField } from '../../lib/validation.js';
import type { OrganizationRow } from '../organizations/organizations.repo.js';
import { findOrganization } from '../organizations/organizations.repo.js';
import { findUser } from './dashboard.repo.js';
import { authFailureThrottle, countAgainstLimit } from '../rate-limits/rate-limits.js';
import { findSession, SESSION_COOKIE, sessionIdOf, type DashboardSession } from './sessions.js';
import { brandTheme, type Theme } from '../branding/theme.js';

/** Where a dashboard request arrived: the path prefix links use, and the organization owning the host (white-label only). */
export interface DashboardSite {
  /** '' on a white-label host (dashboard at the root), else the path of DASHBOARD_BASE_URL, e.g. '/dashboard'. */
  basePath: string;
  hostOrganization: OrganizationRow | null;
  /** Lower-case host name the request arrived on, without the port (X-Forwarded-Host first when TRUST_PROXY is on). */
  host: string;
}

/** A signed-in request: the session, its organization (branding) and user. */
export interface SignedIn {
  session: DashboardSession;
  organization: OrganizationRow;
  user: { id: string; full_name: string; email: string };
}

declare module 'fastify' {
  interface FastifyRequest {
    dashboardSite: DashboardSite;
    signedIn: SignedIn;
  }
}

/** What every page template gets as `it.page` (layout: branding, navigation, CSRF token). */
export interface PageChrome {
  base: string;
  orgName: string;
  logoUrl: string | null;
  theme: Theme;
  testMode: boolean;
  userName: string | null;
  csrfToken: string | null;
  nav: string | null;
}

/** Page chrome for an organization (or neutral chrome when none is known). */
export function chrome(
  site: DashboardSite | null,
  organization: OrganizationRow | null,
  signedIn: SignedIn | null,
  nav: string | null = null,
): PageChrome {
  const org = organization ?? site?.hostOrganization ?? null;
  return {
    base: site?.basePath ?? '',
    orgName: org?.name ?? 'Customer dashboard',
    logoUrl: org?.branding.logoUrl ?? null,
    theme: brandTheme(org?.branding ?? {}),
    testMode: signedIn?.session.tenant.environment === 'test',
    userName: signedIn?.user.full_name ?? null,
    csrfToken: signedIn?.session.csrfToken ?? null,
    nav,
  };
}

/** Renders a page inside the layout. Dashboard pages are private: never cached. */
export function renderPage(
  reply: FastifyReply,
  view: string,
  page: PageChrome,
  data: Record<string, unknown> = {},
  status = 200,
) {
  return reply
    .status(status)
    .header('cache-control', 'no-store')
    .type('text/html; charset=utf-8')
    .view(view, { page, ...data });
}

/**
 * The dashboard's parser of url-encoded forms (DASH-11): every field of its forms is sent once, so a field sent twice
 * (a hand-made post) is refused before any handler reads it, instead of reaching code that expects one value.
 * @returns the fields by name. @throws AppError bad_request (400, rendered as a page) naming the repeated field.
 */
export function parseDashboardForm(body: string): Record<string, string> {
  const fields = querystring.parse(body);
  for (const [name, value] of Object.entries(fields)) {
    if (Array.isArray(value))
      throw new AppError(
        'bad_request',
        `This form sent the field "${name.slice(0, 60)}" more than once. Please reload the page and try again.`,
      );
  }
  return fields as Record<string, string>;
}

/** A friendly full-page message (link spent, session ended, not found) with a 4xx status. */
export function renderMessage(
  reply: FastifyReply,
  request: FastifyRequest,
  status: number,
  title: string,
  message: string,
  organization: OrganizationRow | null = null,
) {
  const signedIn = request.signedIn ?? null;
  return renderPage(
    reply,
    'message',
    chrome(request.dashboardSite, organization ?? signedIn?.organization ?? null, signedIn),
    { title, message },
    status,
  );
}

/**
 * preHandler for signed-in pages (AUTH-6, AUTH-14): resolves the session cookie, touches its idle timer, and on a
 * white-label host accepts only sessions of that host's organization. Otherwise answers a 401 page, clears the cookie
 * and counts a failed authentication of the client address; beyond RATE_LIMIT_AUTH_FAILURES a request with a cookie
 * gets a 429 page before any look-up. A cookie whose MAC does not hold is refused without a look-up; a genuine one
 * counts against its session's RATE_LIMIT_DASHBOARD_REQUESTS before it is looked up.
 * @throws AppError rate_limited (429, rendered as a page with Retry-After).
 */
export function requireSession(ctx: AppContext) {
  const failures = authFailureThrottle(ctx.config.rateLimits);
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const cookie = request.cookies[SESSION_COOKIE];
    if (!cookie) return signInAgain(request, reply);
    failures.check(request, reply);
    const sessionId = sessionIdOf(ctx.secrets.fileUrlSecret, cookie);
    if (sessionId) limitSession(ctx, request, reply, sessionId);
    const session = sessionId ? await findSession(ctx.pool, sessionId) : null;
    const host = request.dashboardSite.hostOrganization;
    if (!session || (host && host.id !== session.tenant.organizationId)) {
      failures.failed(request);
      reply.clearCookie(SESSION_COOKIE, { path: request.dashboardSite.basePath || '/' });
      return signInAgain(request, reply);
    }
    const [organization, user] = await Promise.all([
      findOrganization(ctx.pool, session.tenant.organizationId),
      findUser(ctx.pool, session.tenant, session.userId),
    ]);
    if (!organization || !user)
      return renderMessage(reply, request, 401, 'Please sign in again', 'Your session is no longer valid.');
    request.signedIn = { session, organization, user };
  };
}

function signInAgain(request: FastifyRequest, reply: FastifyReply) {
  return renderMessage(
    reply,
    request,
    401,
    'Please sign in again',
    'Your session has ended. Open the newest sign-in link you received, or ask for a new one.',
  );
}

// AUTH-6: at most RATE_LIMIT_DASHBOARD_REQUESTS per window per session; counted by a hash of the id, never the id.
function limitSession(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, sessionId: string): void {
  const { dashboardRequests: max, windowSeconds } = ctx.config.rateLimits;
  countAgainstLimit(request, reply, {
    name: 'dashboard',
    bucket: sha256(sessionId).slice(0, 32),
    max,
    windowMs: windowSeconds * 1000,
    refusal: (seconds) =>
      `Too many pages opened in a short time (at most ${max} in ${windowSeconds} seconds). Please wait ${seconds} seconds and try again.`,
  });
}

/**
 * preHandler for state-changing forms: the `_csrf` field must equal the session's synchronizer token
 * (AUTH-10). Runs after requireSession.
 */
export async function requireCsrf(request: FastifyRequest, reply: FastifyReply) {
  const sent = bodyField(request.body, '_csrf');
  if (typeof sent !== 'string' || !safeEqual(sent, request.signedIn.session.csrfToken)) {
    return renderMessage(
      reply,
      request,
      403,
      'This form has expired',
      'For your security the form could not be accepted. Go back, reload the page and try again.',
    );
  }
}

import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { carriesToken, decodeFlash, encodeFlash, type Flash, nonceToken } from '../../lib/browser-forms.js';
import { AppError, ValidationError } from '../../lib/errors.js';
import { randomToken } from '../../lib/secrets.js';
import type { AuditActor } from '../audit/audit.service.js';
import type { Tenant } from '../../lib/tenant.js';
import { viewHelpers } from '../console/view-helpers.js';
import { can, type PortalAction } from './roles.js';
import type { PortalSession } from './sessions.js';

/** Path prefix of every portal page (PORTAL-1). */
export const PORTAL_PREFIX = '/portal';

/** The portal's cookies, all on the /portal path and named apart from the console's and the dashboard's (PORTAL-6). */
export const COOKIES = { session: 'fcs_portal', form: 'fcs_portal_form', flash: 'fcs_portal_flash' } as const;

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in member of a /portal request; null on the public pages without a session. */
    portalSession: PortalSession | null;
  }
}

/** HttpOnly, SameSite=Lax, path /portal; Secure over https or when PORTAL_BASE_URL is https (PORTAL-6). */
export function cookieOptions(ctx: AppContext, request: FastifyRequest, maxAgeSeconds?: number) {
  return {
    path: PORTAL_PREFIX,
    httpOnly: true,
    sameSite: 'lax' as const,
    secure: request.protocol === 'https' || ctx.config.portalBaseUrl.startsWith('https:'),
    ...(maxAgeSeconds !== undefined ? { maxAge: maxAgeSeconds } : {}),
  };
}

/** Redirects after a POST (303), optionally with a flash message (a 60-second cookie read by the next page). */
export function redirectWith(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  to: string,
  flash?: Flash,
): FastifyReply {
  if (flash) reply.setCookie(COOKIES.flash, encodeFlash(flash), cookieOptions(ctx, request, 60));
  return reply.redirect(to, 303);
}

function takeFlash(ctx: AppContext, request: FastifyRequest, reply: FastifyReply): Flash | null {
  const raw = request.cookies[COOKIES.flash];
  if (!raw) return null;
  reply.clearCookie(COOKIES.flash, cookieOptions(ctx, request));
  return decodeFlash(raw);
}

/** The portal's content security policy: nothing but its own styles and forms posting to itself. */
export const PORTAL_CSP =
  "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/**
 * Renders a portal page in the layout with what every page needs: the session (member, organizations, environment),
 * the CSRF token, the flash message, the `can` policy for showing only what the role may do, and the helpers. No
 * inline script or style anywhere, so the content security policy is strict; no page is cached or framed.
 */
export function render(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  page: string,
  data: Record<string, unknown>,
): FastifyReply {
  const session = request.portalSession;
  // A page may have set a policy of its own first (the top-up form, whose answer goes on to Stripe: FUND-24).
  if (!reply.hasHeader('content-security-policy')) reply.header('content-security-policy', PORTAL_CSP);
  reply
    .header('cache-control', 'no-store')
    .header('x-frame-options', 'DENY')
    .header('referrer-policy', 'no-referrer')
    .header('x-content-type-options', 'nosniff');
  const role = session?.organization?.role ?? null;
  return reply.view(page, {
    session: session && !session.pending ? session : null,
    csrf: session?.csrfToken ?? '',
    flash: takeFlash(ctx, request, reply),
    section: '',
    can: (action: PortalAction) => can(role, action),
    h: viewHelpers,
    ...data,
  });
}

/**
 * Synchronizer-token check for every POST made with a session (PORTAL-6): the body's `_csrf` must equal the token
 * kept with the session. @throws AppError forbidden (the "form expired" page).
 */
export function checkSessionCsrf(request: FastifyRequest): void {
  if (!carriesToken(request.body, request.portalSession?.csrfToken)) {
    throw new AppError(
      'forbidden',
      'This form has expired or did not come from the portal. Reload the page and try again.',
    );
  }
}

/**
 * CSRF token of the forms shown before any session (sign-in, invitation, password reset): a random nonce in an
 * HttpOnly cookie and, in the form, its HMAC under the server secret with a purpose of the portal's own.
 */
export function issueFormCsrf(ctx: AppContext, request: FastifyRequest, reply: FastifyReply): string {
  let nonce = request.cookies[COOKIES.form];
  if (!nonce || nonce.length < 20) {
    nonce = randomToken(24);
    reply.setCookie(COOKIES.form, nonce, cookieOptions(ctx, request, 60 * 60));
  }
  return formToken(ctx, nonce);
}

/** @throws AppError forbidden when a pre-session form's token does not match its cookie. */
export function checkFormCsrf(ctx: AppContext, request: FastifyRequest): void {
  const nonce = request.cookies[COOKIES.form];
  if (!nonce || !carriesToken(request.body, formToken(ctx, nonce))) {
    throw new AppError('forbidden', 'This form has expired. Reload the page and try again.');
  }
}

function formToken(ctx: AppContext, nonce: string): string {
  return nonceToken(ctx.secrets.fileUrlSecret, 'portal-form-csrf', nonce);
}

/**
 * Refuses a request whose member's role in the organization shown may not do `action` (PORTAL-2), whatever the page
 * showed. @throws AppError forbidden naming what the role may not do.
 */
export function requireRole(request: FastifyRequest, action: PortalAction): NonNullable<PortalSession['organization']> {
  const org = request.portalSession?.organization ?? null;
  if (!org || !can(org.role, action)) {
    throw new AppError('forbidden', `Your role${org ? ` (${org.role})` : ''} may not do this in this organization.`);
  }
  return org;
}

/**
 * The tenant a portal page reads and writes (PORTAL-38): the organization shown and the session's environment, once
 * the member's role there may do `action` (PORTAL-2). @throws AppError forbidden as {@link requireRole}.
 */
export function requireTenant(request: FastifyRequest, action: PortalAction): Tenant {
  const org = requireRole(request, action);
  return { organizationId: org.id, environment: request.portalSession!.environment };
}

/**
 * The messages of a ValidationError by the top field they name (`eventTypes.1` → `eventTypes`), the first per field,
 * for a form to show each next to its field. @throws `err` itself when it is anything else.
 */
export function fieldErrorsOf(err: unknown): Record<string, string> {
  if (!(err instanceof ValidationError)) throw err;
  const byField: Record<string, string> = {};
  for (const e of err.errors) byField[e.field.split('.')[0] || 'form'] ??= e.message;
  return byField;
}

/** The request's client description for the session list: its user agent, shortened. */
export function userAgentOf(request: FastifyRequest): string {
  return String(request.headers['user-agent'] ?? '').slice(0, 300);
}

/** The signed-in member as the audit log records them (AUDIT-1): id, e-mail address and the client address. */
export function auditActorOf(request: FastifyRequest): AuditActor {
  const { member } = request.portalSession!;
  return { kind: 'member', id: member.id, label: member.email, address: request.ip };
}

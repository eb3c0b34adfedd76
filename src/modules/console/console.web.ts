import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { carriesToken, decodeFlash, encodeFlash, type Flash, nonceToken } from '../../lib/browser-forms.js';
import { AppError } from '../../lib/errors.js';
import { randomToken } from '../../lib/secrets.js';
import type { AuditActor } from '../audit/audit.service.js';
import type { ConsoleSession } from './sessions.js';
import { viewHelpers } from './view-helpers.js';

/** Cookie names of the console; all scoped to the /console path. */
export const COOKIES = { session: 'fcs_console', login: 'fcs_console_login', flash: 'fcs_console_flash' } as const;

/** Path prefix of every console page (AUTH-7). */
export const CONSOLE_PREFIX = '/console';

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in operator of a /console request; null only on the public pages (login, assets). */
    consoleSession: ConsoleSession | null;
  }
  interface FastifyContextConfig {
    /**
     * A /console route that reads its multipart form itself and checks the CSRF token as it does, before the form's
     * file is stored (DOC-10); the scope's hook checks every other POST, and any multipart POST elsewhere fails it.
     */
    checksCsrfWhileReading?: boolean;
  }
}

/** HttpOnly, SameSite=Lax, path /console; Secure when the console is reached over https (AUTH-7). */
export function cookieOptions(ctx: AppContext, request: FastifyRequest, maxAgeSeconds?: number) {
  const secure = request.protocol === 'https' || ctx.config.consoleBaseUrl.startsWith('https:');
  return {
    path: CONSOLE_PREFIX,
    httpOnly: true,
    sameSite: 'lax' as const,
    secure,
    ...(maxAgeSeconds !== undefined ? { maxAge: maxAgeSeconds } : {}),
  };
}

/** Sets the message shown on the next rendered page (60-second cookie). */
function setFlash(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, flash: Flash): void {
  reply.setCookie(COOKIES.flash, encodeFlash(flash), cookieOptions(ctx, request, 60));
}

function takeFlash(ctx: AppContext, request: FastifyRequest, reply: FastifyReply): Flash | null {
  const raw = request.cookies[COOKIES.flash];
  if (!raw) return null;
  reply.clearCookie(COOKIES.flash, cookieOptions(ctx, request));
  return decodeFlash(raw);
}

/** Redirects after a POST (303 so the browser follows with GET), optionally with a flash message. */
export function redirectWith(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  to: string,
  flash?: Flash,
): FastifyReply {
  if (flash) setFlash(ctx, request, reply, flash);
  return reply.redirect(to, 303);
}

/**
 * Renders a console page inside the layout with what every page needs: the operator, the CSRF token for
 * its forms, the flash message, the current section for the navigation, and the formatting helpers.
 */
export function render(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  page: string,
  data: Record<string, unknown>,
): FastifyReply {
  const session = request.consoleSession;
  // A page may ask for more than no-store (a revealed tax id also sends no-cache, ORD-EIN-7), never for less.
  if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
  // No inline script or style anywhere in the console, so the policy can be strict.
  reply.header(
    'content-security-policy',
    "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  );
  reply.header('x-frame-options', 'DENY');
  reply.header('referrer-policy', 'same-origin');
  reply.header('x-content-type-options', 'nosniff');
  return reply.view(page, {
    operator: session?.operator ?? null,
    csrf: session?.csrfToken ?? '',
    flash: takeFlash(ctx, request, reply),
    section: '',
    path: request.url,
    h: viewHelpers,
    ...data,
  });
}

/**
 * Synchronizer-token check for every POST of a signed-in operator: the body's `_csrf` (or that of `body`, the fields
 * of a multipart form read so far) must equal the token stored with the session in PostgreSQL.
 * @throws AppError forbidden (rendered as the "form expired" page).
 */
export function checkSessionCsrf(request: FastifyRequest, body: unknown = request.body): void {
  if (!carriesToken(body, request.consoleSession?.csrfToken)) {
    throw new AppError(
      'forbidden',
      'This form has expired or did not come from the console. Go back, reload the page and try again.',
    );
  }
}

/**
 * Login-form CSRF (no session exists yet): a random nonce in an HttpOnly cookie and, in the form, its
 * HMAC under a server secret. A cross-site page can neither read the cookie nor compute the HMAC.
 */
export function issueLoginCsrf(ctx: AppContext, request: FastifyRequest, reply: FastifyReply): string {
  let nonce = request.cookies[COOKIES.login];
  if (!nonce || nonce.length < 20) {
    nonce = randomToken(24);
    reply.setCookie(COOKIES.login, nonce, cookieOptions(ctx, request, 60 * 60));
  }
  return loginToken(ctx, nonce);
}

/** @throws AppError forbidden when the login form's token does not match its cookie. */
export function checkLoginCsrf(ctx: AppContext, request: FastifyRequest): void {
  const nonce = request.cookies[COOKIES.login];
  if (!nonce || !carriesToken(request.body, loginToken(ctx, nonce))) {
    throw new AppError('forbidden', 'The sign-in form has expired. Reload the page and try again.');
  }
}

function loginToken(ctx: AppContext, nonce: string): string {
  return nonceToken(ctx.secrets.fileUrlSecret, 'console-login-csrf', nonce);
}

/** A form field as a trimmed string ('' when absent; the first of a repeated one). */
export function field(body: unknown, name: string): string {
  const v = (body as Record<string, unknown> | undefined)?.[name];
  return typeof v === 'string' ? v.trim() : Array.isArray(v) ? String(v[0] ?? '').trim() : '';
}

/** The operator actor recorded in status history and the ledger: `operator:<op id>` (CONS-4, FIL-9). */
export function actorOf(request: FastifyRequest): string {
  return `operator:${request.consoleSession!.operator.id}`;
}

/** The operator as the audit log records them (AUDIT-1): id, e-mail address and the request's client address. */
export function auditActorOf(request: FastifyRequest): AuditActor {
  const { operator } = request.consoleSession!;
  return { kind: 'operator', id: operator.id, label: operator.email, address: request.ip };
}

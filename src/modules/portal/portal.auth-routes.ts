import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { bodyField } from '../../lib/validation.js';
import { field } from '../console/console.web.js';
import { perAddressLimit } from '../rate-limits/rate-limits.js';
import { prestartScryptWorker } from '../console/scrypt-worker.js';
import { BUSY_RETRY_SECONDS, portalPasswords } from './password-checks.js';
import { openReset, requestPasswordReset, resetPassword } from './password-reset.service.js';
import {
  COOKIES,
  cookieOptions,
  issueFormCsrf,
  PORTAL_PREFIX,
  redirectWith,
  render,
  userAgentOf,
} from './portal.web.js';
import { revokeSessionByHash } from './sessions.repo.js';
import { SESSION_MAX_SECONDS, sessionCookieValue } from './sessions.js';
import { checkSecondFactor, completeSignIn, type StepResult, signInWithPassword } from './sign-in.service.js';
import { PORTAL_SIGN_IN_LIMITS } from './sign-in-limits.js';

/**
 * Sign-in (password, then second factor), sign-out and password reset (PORTAL-4, PORTAL-5, PORTAL-8, PORTAL-9).
 * Every refusal is answered at once with a page saying why and, when waiting helps, Retry-After.
 */
export async function portalAuthRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  const passwords = portalPasswords(ctx);
  const signInLimit = perAddressLimit(ctx.config.rateLimits, 'sign-in', ctx.config.rateLimits.signInAttempts);
  app.addHook('onReady', async () => prestartScryptWorker());

  const signInPage = (request: FastifyRequest, reply: FastifyReply, email: string, error: string | null) =>
    render(ctx, request, reply, 'sign-in', {
      title: 'Sign in',
      formCsrf: issueFormCsrf(ctx, request, reply),
      email,
      error,
    });

  app.get('/sign-in', { schema: { hide: true } }, async (request, reply) => {
    if (request.portalSession && !request.portalSession.pending) return reply.redirect(`${PORTAL_PREFIX}/`, 303);
    return signInPage(request, reply, '', null);
  });

  app.post('/sign-in', { schema: { hide: true }, config: { rateLimit: signInLimit } }, async (request, reply) => {
    const email = field(request.body, 'email');
    const password = bodyField(request.body, 'password');
    if (!email || typeof password !== 'string' || !password)
      return signInPage(request, reply.status(400), email, 'Enter your e-mail address and password.');
    const result = await signInWithPassword(ctx, passwords, {
      email,
      password,
      address: request.ip,
      userAgent: userAgentOf(request),
    });
    if (!result.ok) return signInPage(request, refusalStatus(reply, result), email, refusalText(result, 'password'));
    reply.setCookie(
      COOKIES.session,
      sessionCookieValue(ctx.secrets.fileUrlSecret, result.sessionId),
      cookieOptions(ctx, request, SESSION_MAX_SECONDS),
    );
    return reply.redirect(result.pending ? `${PORTAL_PREFIX}/second-factor` : `${PORTAL_PREFIX}/`, 303);
  });

  const secondFactorPage = (request: FastifyRequest, reply: FastifyReply, error: string | null) =>
    render(ctx, request, reply, 'second-factor', { title: 'Two-factor authentication', error });

  app.get('/second-factor', { schema: { hide: true } }, async (request, reply) => {
    if (!request.portalSession?.pending) return reply.redirect(`${PORTAL_PREFIX}/`, 303);
    return secondFactorPage(request, reply, null);
  });

  app.post('/second-factor', { schema: { hide: true }, config: { rateLimit: signInLimit } }, async (request, reply) => {
    const session = request.portalSession!;
    if (!session.pending) return reply.redirect(`${PORTAL_PREFIX}/`, 303);
    const result = await checkSecondFactor(ctx, session.member.id, field(request.body, 'code'), request.ip);
    if (!result.ok) return secondFactorPage(request, refusalStatus(reply, result), refusalText(result, 'code'));
    await completeSignIn(ctx, session.idHash);
    return redirectWith(
      ctx,
      request,
      reply,
      `${PORTAL_PREFIX}/`,
      result.recoveryCodeUsed
        ? {
            kind: 'ok',
            text: 'Signed in with a recovery code, which is now spent.',
          }
        : undefined,
    );
  });

  app.post('/sign-out', { schema: { hide: true } }, async (request, reply) => {
    await revokeSessionByHash(ctx.pool, request.portalSession!.idHash);
    reply.clearCookie(COOKIES.session, cookieOptions(ctx, request));
    return redirectWith(ctx, request, reply, `${PORTAL_PREFIX}/sign-in`, { kind: 'ok', text: 'You are signed out.' });
  });

  app.get('/password-reset', { schema: { hide: true } }, async (request, reply) =>
    render(ctx, request, reply, 'password-reset', {
      title: 'Reset your password',
      formCsrf: issueFormCsrf(ctx, request, reply),
      sent: false,
    }),
  );

  app.post(
    '/password-reset',
    { schema: { hide: true }, config: { rateLimit: signInLimit } },
    async (request, reply) => {
      await requestPasswordReset(ctx, field(request.body, 'email'));
      // The same answer whether or not the address has an account (PORTAL-9).
      return render(ctx, request, reply, 'password-reset', { title: 'Check your e-mail', formCsrf: '', sent: true });
    },
  );

  const newPasswordPage = (
    request: FastifyRequest,
    reply: FastifyReply,
    token: string,
    email: string | null,
    error: string | null,
  ) =>
    render(ctx, request, reply, 'password-new', {
      title: email ? 'Choose a new password' : 'Link expired',
      formCsrf: issueFormCsrf(ctx, request, reply),
      token,
      email,
      error,
    });

  app.get<{ Querystring: Record<string, string> }>(
    '/password-reset/new',
    { schema: { hide: true } },
    async (request, reply) => {
      const token = String(request.query.token ?? '');
      const email = await openReset(ctx, token);
      return newPasswordPage(request, reply.status(email ? 200 : 404), token, email, null);
    },
  );

  app.post(
    '/password-reset/new',
    { schema: { hide: true }, config: { rateLimit: signInLimit } },
    async (request, reply) => {
      const token = field(request.body, 'token');
      const outcome = await resetPassword(ctx, passwords, {
        token,
        password: String(bodyField(request.body, 'password') ?? ''),
        confirm: String(bodyField(request.body, 'confirm') ?? ''),
      });
      if (outcome.ok) {
        reply.clearCookie(COOKIES.session, cookieOptions(ctx, request));
        return redirectWith(ctx, request, reply, `${PORTAL_PREFIX}/sign-in`, {
          kind: 'ok',
          text: 'Your password is changed and every session signed out. Sign in with the new password.',
        });
      }
      if (outcome.reason === 'gone') return newPasswordPage(request, reply.status(404), token, null, null);
      if (outcome.reason === 'busy') {
        reply.status(503).header('retry-after', String(BUSY_RETRY_SECONDS));
        return newPasswordPage(request, reply, token, await openReset(ctx, token), busyText());
      }
      return newPasswordPage(request, reply.status(400), token, await openReset(ctx, token), outcome.message);
    },
  );
}

/** Sets the status (and Retry-After) of a refused sign-in step. */
export function refusalStatus(reply: FastifyReply, result: Exclude<StepResult<object>, { ok: true }>): FastifyReply {
  if (result.reason === 'busy') return reply.status(503).header('retry-after', String(BUSY_RETRY_SECONDS));
  if (result.reason === 'throttled') return reply.status(429).header('retry-after', String(result.retryAfterSeconds));
  return reply.status(401);
}

/** What a refused sign-in step says (PORTAL-8: why, and how long to wait). */
export function refusalText(result: Exclude<StepResult<object>, { ok: true }>, what: 'password' | 'code'): string {
  if (result.reason === 'busy') return busyText();
  if (result.reason === 'throttled') {
    const minutes = Math.ceil(result.retryAfterSeconds / 60);
    return `Too many failed attempts (at most ${PORTAL_SIGN_IN_LIMITS.perAccount} per account and ${PORTAL_SIGN_IN_LIMITS.perAddress} per network address in ${PORTAL_SIGN_IN_LIMITS.windowSeconds / 60} minutes). Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`;
  }
  return what === 'password'
    ? 'That e-mail address and password do not match an active portal account.'
    : 'That code is not valid. Enter the current code from your authenticator app, or an unused recovery code.';
}

function busyText(): string {
  return `Sign-in is busy right now; try again in ${BUSY_RETRY_SECONDS} seconds.`;
}

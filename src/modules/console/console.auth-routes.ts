import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.js';
import { bodyField } from '../../lib/validation.js';
import { perAddressLimit } from '../rate-limits/rate-limits.js';
import { attemptLogin, BUSY_RETRY_SECONDS, LOGIN_LIMITS } from './login.service.js';
import { PasswordCheckQueue } from './password-queue.js';
import { prestartScryptWorker } from './scrypt-worker.js';
import {
  CONSOLE_PREFIX,
  COOKIES,
  checkLoginCsrf,
  cookieOptions,
  field,
  issueLoginCsrf,
  redirectWith,
  render,
} from './console.web.js';
import { revokeSession, SESSION_TTL_SECONDS, sessionCookieValue } from './sessions.js';

/**
 * Sign in and sign out. Sign-in attempts are limited per client address (RATE_LIMIT_SIGN_IN_ATTEMPTS), failures
 * throttled per e-mail and address (LOGIN_LIMITS), and password checks bounded (PASSWORD_HASH_CONCURRENCY/_QUEUE).
 */
export async function consoleAuthRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  const passwordChecks = new PasswordCheckQueue(
    ctx.config.passwordHashConcurrency,
    ctx.config.passwordHashQueue,
    ctx.config.passwordHashCpuPercent,
  );
  app.addHook('onReady', async () => prestartScryptWorker());
  // The place each sign-in holds: released by attemptLogin, and in any case when its response closes (answered
  // early, refused by the rate limit, or the client gone).
  const admissions = new WeakMap<object, () => void>();

  app.get<{ Querystring: Record<string, string> }>('/login', { schema: { hide: true } }, async (request, reply) => {
    const next = safeNext(request.query.next);
    return render(ctx, request, reply, 'login', {
      title: 'Sign in',
      loginCsrf: issueLoginCsrf(ctx, request, reply),
      next,
      email: '',
      error: null,
    });
  });

  app.post(
    '/login',
    {
      schema: { hide: true },
      config: { rateLimit: perAddressLimit(ctx.config.rateLimits, 'sign-in', ctx.config.rateLimits.signInAttempts) },
      // Every sign-in takes its place before its body is even read; one the password checks cannot take now is held
      // until a place frees up or its hold ends (AUTH-8). Refused, it costs microseconds, not a parsed form and a
      // rendered page.
      onRequest: async (request, reply) => {
        const admission = await passwordChecks.hold(ctx.config.passwordHashHoldMs, ctx.config.passwordHashHeld);
        // A client that gave up while held gets no password check: its place goes to the next.
        if (admission && !reply.raw.destroyed) {
          admissions.set(request, admission);
          reply.raw.once('close', admission);
          return;
        }
        admission?.();
        return reply
          .status(503)
          .header('retry-after', String(BUSY_RETRY_SECONDS))
          .header('cache-control', 'no-store')
          .type('text/html; charset=utf-8')
          .send(BUSY_PAGE);
      },
    },
    async (request, reply) => {
      checkLoginCsrf(ctx, request);
      const email = field(request.body, 'email');
      const password = bodyField(request.body, 'password');
      const next = safeNext(field(request.body, 'next'));
      const again = (status: number, error: string) =>
        render(ctx, request, reply.status(status), 'login', {
          title: 'Sign in',
          loginCsrf: issueLoginCsrf(ctx, request, reply),
          next,
          email,
          error,
        });
      if (!email || typeof password !== 'string' || !password)
        return again(400, 'Enter your e-mail address and password.');
      const result = await attemptLogin(
        ctx.pool,
        passwordChecks,
        { email, password, ip: request.ip },
        admissions.get(request),
      );
      if (!result.ok && result.reason === 'busy') {
        reply.header('retry-after', String(result.retryAfterSeconds));
        return again(503, `Sign-in is busy right now; try again in ${result.retryAfterSeconds} seconds.`);
      }
      if (!result.ok && result.reason === 'throttled') {
        reply.header('retry-after', String(result.retryAfterSeconds));
        const minutes = Math.ceil(result.retryAfterSeconds / 60);
        return again(
          429,
          `Too many failed sign-in attempts (at most ${LOGIN_LIMITS.perEmail} per account and ${LOGIN_LIMITS.perIp} per network address in ${LOGIN_LIMITS.windowSeconds / 60} minutes). Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`,
        );
      }
      if (!result.ok) return again(401, 'That e-mail address and password do not match an active operator account.');
      reply.setCookie(
        COOKIES.session,
        sessionCookieValue(ctx.secrets.fileUrlSecret, result.sessionId),
        cookieOptions(ctx, request, SESSION_TTL_SECONDS),
      );
      reply.clearCookie(COOKIES.login, cookieOptions(ctx, request));
      return reply.redirect(next, 303);
    },
  );

  app.post('/logout', { schema: { hide: true } }, async (request, reply) => {
    await revokeSession(ctx.pool, request.consoleSession!.idHash);
    reply.clearCookie(COOKIES.session, cookieOptions(ctx, request));
    return redirectWith(ctx, request, reply, `${CONSOLE_PREFIX}/login`, { kind: 'ok', text: 'You are signed out.' });
  });
}

// Only paths inside the console (never another host: `//evil` or `/\evil` are refused) may follow sign-in.
function safeNext(next: string | undefined): string {
  if (
    next?.startsWith(`${CONSOLE_PREFIX}/`) &&
    !next.startsWith('//') &&
    !next.includes('\\') &&
    !next.startsWith(`${CONSOLE_PREFIX}/login`)
  )
    return next;
  return `${CONSOLE_PREFIX}/queue`;
}

const BUSY_PAGE =
  '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign-in is busy</title></head><body>' +
  `<h1>Sign-in is busy</h1><p>Too many sign-ins are being checked right now. Try again in ${BUSY_RETRY_SECONDS} seconds.</p>` +
  `<p><a href="${CONSOLE_PREFIX}/login">Back to sign-in</a></p></body></html>`;

import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.js';
import { bodyField } from '../../lib/validation.js';
import { SignInLimits } from '../rate-limits/sign-in-limits.js';
import { attemptLogin } from './login.service.js';
import { PasswordCheckQueue } from './password-queue.js';
import { prestartPasswordWorker } from './password-worker.js';
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
 * Sign in and sign out (AUTH-8). A sign-in is limited per client address (RATE_LIMIT_SIGN_IN_ATTEMPTS) before its body
 * is read, then by the failures of its account (FAILURE_DELAYS in sign-in-limits.ts) before it waits for a password check, each refused at
 * once with 429 and Retry-After; its check is bounded in number, time and CPU (PASSWORD_HASH_*), and it is answered
 * within SIGN_IN_ANSWER_MS of its arrival.
 */
export async function consoleAuthRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  const { config } = ctx;
  const passwordChecks = new PasswordCheckQueue({
    concurrency: config.passwordHashConcurrency,
    waiting: config.passwordHashQueue + config.passwordHashHeld,
    holdMs: config.passwordHashHoldMs,
    cpuPercent: config.passwordHashCpuPercent,
    answerMs: config.signInAnswerMs,
  });
  const limits = new SignInLimits(
    { scope: 'console', limit: 'sign-in', perAddress: config.rateLimits.signInAttempts },
    config.rateLimits,
  );
  app.addHook('onReady', async () => prestartPasswordWorker());

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
      // The address's attempts are counted before anything else, its body not even read: refused, an attempt costs
      // microseconds (AUTH-8, LIM-8).
      onRequest: async (request, reply) => limits.limitAddress(request, reply),
    },
    async (request, reply) => {
      // Measured from the request's arrival, not from here: the answer bound covers the body's reading too.
      const deadline = performance.now() - reply.elapsedTime + config.signInAnswerMs;
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
      const result = await attemptLogin(ctx.pool, passwordChecks, limits, {
        email,
        password,
        ip: request.ip,
        deadline,
      });
      if (!result.ok && result.reason === 'busy') {
        reply.header('retry-after', String(result.retryAfterSeconds));
        return again(503, `Sign-in is busy right now; try again in ${result.retryAfterSeconds} seconds.`);
      }
      if (!result.ok && result.reason === 'throttled') {
        const seconds = result.retryAfterSeconds;
        reply.header('retry-after', String(seconds));
        const whose = result.of === 'pair' ? 'this account from your network address' : 'this account';
        return again(
          429,
          `Too many failed sign-in attempts for ${whose}. Try again in ${seconds} second${seconds === 1 ? '' : 's'}.`,
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

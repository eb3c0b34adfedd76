import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.js';
import { AppError } from '../../lib/errors.js';
import { field } from '../console/console.web.js';
import { perAddressLimit } from '../rate-limits/rate-limits.js';
import { refusalStatus, refusalText } from './portal.auth-routes.js';
import { PORTAL_PREFIX, redirectWith, render } from './portal.web.js';
import { listLiveSessions, revokeMemberSession } from './sessions.repo.js';
import { SESSION_IDLE_SECONDS } from './sessions.js';
import { redirectToSecretOnce, takeSecretOnce } from './secret-views.js';
import { STEP_UP_SECONDS, stepUpTarget } from './step-up.js';
import { confirmEnrolment, enrolmentView, startEnrolment, stepUp } from './two-factor.service.js';

/**
 * The member's own account: two-factor enrolment (PORTAL-5), the step-up before live secrets and settings
 * (PORTAL-10) and the list of their sessions (PORTAL-6).
 */
export async function portalAccountRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  const limit = perAddressLimit(ctx.config.rateLimits, 'sign-in', ctx.config.rateLimits.signInAttempts);

  // New recovery codes are shown on the GET enrolment redirects to, once (PORTAL-46): a reload shows them no more.
  app.get('/account/two-factor', { schema: { hide: true } }, async (request, reply) => {
    const session = request.portalSession!;
    const view = await takeSecretOnce<string[]>(ctx, request, 'recovery_codes');
    return render(ctx, request, reply, 'two-factor', {
      title: 'Two-factor authentication',
      section: 'account',
      enrolment: await enrolmentView(ctx, session.member.id),
      recoveryCodes: view.state === 'shown' ? view.secret : null,
      secretGone: view.state === 'gone',
      error: null,
    });
  });

  app.post('/account/two-factor/start', { schema: { hide: true } }, async (request, reply) => {
    await startEnrolment(ctx, request.portalSession!.member.id);
    return reply.redirect(`${PORTAL_PREFIX}/account/two-factor`, 303);
  });

  app.post(
    '/account/two-factor/confirm',
    { schema: { hide: true }, config: { rateLimit: limit } },
    async (request, reply) => {
      const session = request.portalSession!;
      const result = await confirmEnrolment(
        ctx,
        { idHash: session.idHash, memberId: session.member.id },
        field(request.body, 'code'),
        request.ip,
      );
      if (!result.ok)
        return render(ctx, request, refusalStatus(reply, result), 'two-factor', {
          title: 'Two-factor authentication',
          section: 'account',
          enrolment: await enrolmentView(ctx, session.member.id),
          recoveryCodes: null,
          secretGone: false,
          error: refusalText(result, 'code'),
        });
      // Shown once, on the page this redirects to: only their hashes are kept (PORTAL-46).
      return redirectToSecretOnce(
        ctx,
        request,
        reply,
        `${PORTAL_PREFIX}/account/two-factor`,
        'recovery_codes',
        result.recoveryCodes,
      );
    },
  );

  const stepUpPage = (
    request: Parameters<typeof render>[1],
    reply: Parameters<typeof render>[2],
    next: string,
    error: string | null,
  ) =>
    render(ctx, request, reply, 'step-up', {
      title: 'Confirm it is you',
      next,
      minutes: STEP_UP_SECONDS / 60,
      error,
    });

  app.get<{ Querystring: Record<string, string> }>('/step-up', { schema: { hide: true } }, async (request, reply) =>
    stepUpPage(request, reply, stepUpTarget(request.query.next), null),
  );

  app.post('/step-up', { schema: { hide: true }, config: { rateLimit: limit } }, async (request, reply) => {
    const session = request.portalSession!;
    const next = stepUpTarget(field(request.body, 'next'));
    const result = await stepUp(
      ctx,
      { idHash: session.idHash, memberId: session.member.id },
      field(request.body, 'code'),
      request.ip,
    );
    if (!result.ok) return stepUpPage(request, refusalStatus(reply, result), next, refusalText(result, 'code'));
    return redirectWith(
      ctx,
      request,
      reply,
      next,
      result.recoveryCodeUsed ? { kind: 'ok', text: 'Confirmed with a recovery code, which is now spent.' } : undefined,
    );
  });

  app.get('/sessions', { schema: { hide: true } }, async (request, reply) => {
    const session = request.portalSession!;
    return render(ctx, request, reply, 'sessions', {
      title: 'Sessions',
      section: 'sessions',
      sessions: await listLiveSessions(ctx.pool, session.member.id, SESSION_IDLE_SECONDS),
      currentId: session.id,
    });
  });

  app.post<{ Params: { id: string } }>('/sessions/:id/revoke', { schema: { hide: true } }, async (request, reply) => {
    const session = request.portalSession!;
    // Only the member's own sessions: another member's id revokes nothing and is told apart from nothing (404).
    if (!(await revokeMemberSession(ctx.pool, session.member.id, request.params.id)))
      throw new AppError('not_found', 'No such session of yours (signed out already?).');
    if (request.params.id === session.id) return reply.redirect(`${PORTAL_PREFIX}/sign-in`, 303);
    return redirectWith(ctx, request, reply, `${PORTAL_PREFIX}/sessions`, {
      kind: 'ok',
      text: 'The session is signed out.',
    });
  });
}

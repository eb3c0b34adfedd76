import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { bodyField } from '../../lib/validation.js';
import { field } from '../console/console.web.js';
import { perAddressLimit } from '../rate-limits/rate-limits.js';
import { acceptAsMember, acceptAsNewMember, inviteeHasAccount, openInvitation } from './invitations.service.js';
import { BUSY_RETRY_SECONDS, MIN_PASSWORD_LENGTH, portalPasswords } from './password-checks.js';
import {
  COOKIES,
  cookieOptions,
  issueFormCsrf,
  PORTAL_PREFIX,
  redirectWith,
  render,
  userAgentOf,
} from './portal.web.js';
import { SESSION_MAX_SECONDS, sessionCookieValue } from './sessions.js';
import { setSessionView } from './sessions.repo.js';

/**
 * Accepting an invitation (PORTAL-3): a newcomer chooses a name and password and is signed in; someone who already
 * has an account accepts signed in as the invited address. The page never shows the token's invitation to anyone
 * once it is spent or expired.
 */
export async function portalInvitationRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  const passwords = portalPasswords(ctx);
  const limit = perAddressLimit(ctx.config.rateLimits, 'sign-in', ctx.config.rateLimits.signInAttempts);

  const page = async (request: FastifyRequest, reply: FastifyReply, token: string, error: string | null, name = '') => {
    const invitation = await openInvitation(ctx, token);
    if (!invitation) reply.status(reply.statusCode === 200 ? 404 : reply.statusCode);
    return render(ctx, request, reply, 'invitation', {
      title: invitation ? `Join ${invitation.organization_name}` : 'Invitation not valid',
      formCsrf: issueFormCsrf(ctx, request, reply),
      token,
      invitation,
      hasAccount: invitation ? await inviteeHasAccount(ctx, invitation.email) : false,
      signedInAs: request.portalSession && !request.portalSession.pending ? request.portalSession.member.email : null,
      minLength: MIN_PASSWORD_LENGTH,
      name,
      error,
    });
  };

  app.get<{ Querystring: Record<string, string> }>('/invitation', { schema: { hide: true } }, async (request, reply) =>
    page(request, reply, String(request.query.token ?? ''), null),
  );

  app.post('/invitation', { schema: { hide: true }, config: { rateLimit: limit } }, async (request, reply) => {
    const token = field(request.body, 'token');
    const session = request.portalSession;
    if (session && !session.pending) {
      const joined = await acceptAsMember(ctx, session.member, token, request.ip);
      await setSessionView(ctx.pool, session.idHash, joined.organizationId, 'test');
      return redirectWith(ctx, request, reply, `${PORTAL_PREFIX}/`, {
        kind: 'ok',
        text: `You joined ${joined.organizationName}.`,
      });
    }
    const name = field(request.body, 'name');
    const outcome = await acceptAsNewMember(ctx, passwords, {
      token,
      name,
      password: String(bodyField(request.body, 'password') ?? ''),
      confirm: String(bodyField(request.body, 'confirm') ?? ''),
      address: request.ip,
      userAgent: userAgentOf(request),
    });
    if (outcome.ok) {
      reply.setCookie(
        COOKIES.session,
        sessionCookieValue(ctx.secrets.fileUrlSecret, outcome.sessionId),
        cookieOptions(ctx, request, SESSION_MAX_SECONDS),
      );
      return redirectWith(ctx, request, reply, `${PORTAL_PREFIX}/account/two-factor`, {
        kind: 'ok',
        text: 'Welcome! Your account is ready. Protect it with two-factor authentication.',
      });
    }
    if (outcome.reason === 'gone') return page(request, reply.status(404), token, null);
    if (outcome.reason === 'taken')
      return page(
        request,
        reply.status(409),
        token,
        'This address has an account already: sign in, then open the link again.',
      );
    if (outcome.reason === 'busy') {
      reply.status(503).header('retry-after', String(BUSY_RETRY_SECONDS));
      return page(
        request,
        reply,
        token,
        `The portal is busy right now; try again in ${BUSY_RETRY_SECONDS} seconds.`,
        name,
      );
    }
    return page(request, reply.status(400), token, outcome.message, name);
  });
}

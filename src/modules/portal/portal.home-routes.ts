import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { AppError, ValidationError } from '../../lib/errors.js';
import type { FieldProblems } from '../../lib/list-filters.js';
import { field } from '../console/console.web.js';
import { inviteMember, listMembers, removeMember, type Actor } from './members.service.js';
import { auditActorOf, PORTAL_PREFIX, redirectWith, render, requireRole } from './portal.web.js';
import { canManageMember, ROLES } from './roles.js';
import { setSessionView } from './sessions.repo.js';

/**
 * The signed-in landing page, the organization and test/live switches (PORTAL-7) and the members page (PORTAL-2,
 * PORTAL-3). Every handler asks the role policy itself: what a page hides, its form is refused on the server too.
 */
export async function portalHomeRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  app.get('/', { schema: { hide: true } }, async (request, reply) => {
    const session = request.portalSession!;
    if (session.organization) requireRole(request, 'overview.read');
    return render(ctx, request, reply, 'home', { title: 'Overview', section: 'home' });
  });

  app.post('/organization', { schema: { hide: true } }, async (request, reply) => {
    const session = request.portalSession!;
    const wanted = field(request.body, 'organizationId');
    // Only an organization the member belongs to: any other id is refused like an unknown one.
    if (!session.memberships.some((m) => m.organization_id === wanted))
      throw new AppError('not_found', 'You are not a member of that organization.');
    await setSessionView(ctx.pool, session.idHash, wanted, session.environment);
    return reply.redirect(`${PORTAL_PREFIX}/`, 303);
  });

  app.post('/environment', { schema: { hide: true } }, async (request, reply) => {
    const session = request.portalSession!;
    const org = requireRole(request, 'overview.read');
    const environment = field(request.body, 'environment');
    if (environment !== 'live' && environment !== 'test')
      throw new AppError('bad_request', 'environment: must be live or test');
    await setSessionView(ctx.pool, session.idHash, org.id, environment);
    return reply.redirect(`${PORTAL_PREFIX}/`, 303);
  });

  const actorOf = (request: Parameters<typeof requireRole>[0]): Actor => {
    const org = requireRole(request, 'members.read');
    return { memberId: request.portalSession!.member.id, organizationId: org.id, role: org.role };
  };

  /** The members page, with the invitation just made (its link shown once) or the invite form's refusal. */
  const membersPage = async (
    request: FastifyRequest,
    reply: FastifyReply,
    shown: {
      invitation?: Awaited<ReturnType<typeof inviteMember>>;
      typed?: Record<string, string>;
      problems?: FieldProblems;
    },
  ) => {
    const actor = actorOf(request);
    return render(ctx, request, reply, 'members', {
      title: 'Members',
      section: 'members',
      members: await listMembers(ctx, actor),
      invitableRoles: ROLES.filter((r) => canManageMember(actor.role, r)),
      canRemove: (role: (typeof ROLES)[number]) => canManageMember(actor.role, role),
      invitation: shown.invitation ?? null,
      typed: shown.typed ?? {},
      problems: shown.problems ?? {},
    });
  };

  app.get('/members', { schema: { hide: true } }, async (request, reply) => membersPage(request, reply, {}));

  app.post('/members/invite', { schema: { hide: true } }, async (request, reply) => {
    const typed = { email: field(request.body, 'email'), role: field(request.body, 'role') };
    try {
      const invitation = await inviteMember(ctx, actorOf(request), typed, auditActorOf(request));
      // The link is shown once here for the inviter to pass on; only its hash is kept.
      return await membersPage(request, reply.status(201), { invitation });
    } catch (err) {
      // A refused address or role is named beside its field, with what was typed kept.
      if (!(err instanceof ValidationError)) throw err;
      const problems = Object.fromEntries(err.errors.map((e) => [e.field, e.message]));
      return membersPage(request, reply.status(400), { typed, problems });
    }
  });

  app.post<{ Params: { memberId: string } }>(
    '/members/:memberId/remove',
    { schema: { hide: true } },
    async (request, reply) => {
      const actor = actorOf(request);
      await removeMember(ctx, actor, request.params.memberId, auditActorOf(request));
      return redirectWith(ctx, request, reply, `${PORTAL_PREFIX}/members`, {
        kind: 'ok',
        text: 'The member was removed.',
      });
    },
  );
}

import { randomBytes } from 'node:crypto';
import type { InjectOptions } from 'fastify';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Environment } from '../src/context.js';
import { withTransaction } from '../src/lib/db.js';
import { sha256 } from '../src/lib/secrets.js';
import { emitEvent } from '../src/modules/events/events.service.js';
import { transitionOrder } from '../src/modules/filings/filings.service.js';
import { addApiKey } from '../src/modules/organizations/organizations.service.js';
import { can, type PortalAction, ROLES, type Role } from '../src/modules/portal/roles.js';
import { createSession, sessionCookieValue } from '../src/modules/portal/sessions.js';
import { requestRecovery } from '../src/modules/webhooks/recoveries.service.js';
import { createEndpoint } from '../src/modules/webhooks/webhooks.service.js';
import { createCompany, createOrderRow } from './factories.js';
import type { TestApp, TestTenant } from './harness.js';
import { memberSession, newEmail } from './portal-helpers.js';
import type { RouteEntry } from './security-suite.js';

/**
 * The partner portal's route-table security suite (PORTAL-42 to PORTAL-45). Its routes are read from the app's own
 * route table (`routeTable`), like the API's suite (test/security-suite.ts): every route under /portal must have an
 * entry in PORTAL_ROUTES, so a portal route added later fails the suite until it is classified here. For each route:
 *
 * - Without a session: a page sends the browser to sign-in (303) and a form changes nothing (PORTAL-42).
 * - A form without the CSRF token, or with another's, is refused with 403 and changes nothing (PORTAL-42).
 * - Roles (PORTAL-43): each of owner, admin, developer and viewer asks; the roles the policy (`can`) refuses, and any
 *   the route refuses beyond it (an admin removing an owner), get 403 and change nothing; the others get their page.
 *   A viewer is refused every write of the organization's; a POST that is no such write names why.
 * - Tenants (PORTAL-44): a member of another organization, with this organization's ids in the path and the form,
 *   gets a 404 or a refusal, never a page with any of this organization's data, and changes nothing of it.
 * - Environments (PORTAL-45): with the session in test, a live id is unknown (404) and no live row is shown; nothing
 *   done in test changes a live row; a write that shows a secret or changes a live setting, in live, sends a session
 *   whose second factor is older than 15 minutes to the step-up page and changes nothing.
 */

/** What a route's path parameter (or form field) names: a resource of the organization's, made fresh or shared. */
type ResourceKind =
  | 'key'
  | 'endpoint'
  | 'delivery'
  | 'recovery'
  | 'order'
  | 'company'
  | 'event'
  | 'ownerMember'
  | 'ownSession'
  | 'organization';

/** How a portal route is protected, and what to send it. */
interface PortalRouteRule {
  /** public: no session needed (its forms carry the pre-session token); pending: the second factor's own page. */
  access: 'public' | 'pending' | 'member';
  /** The policy action the handler asks (PORTAL-2); null for the member's own account, open to every role. */
  action?: PortalAction | null;
  /** A POST open to every role (action null, or one a viewer may do): why it is no write of the organization's. */
  own?: string;
  /** What the path parameter (or the form's id field) names. */
  resource?: ResourceKind;
  /** The form a member with the right role would send. */
  body?: (id: string, f: OrgFixture, env: Environment) => Record<string, string>;
  /** Roles refused beyond the policy, on the resource the suite makes (`resource`). */
  alsoRefused?: Role[];
  /** The environment the roles are tried in (default test): settings change in live only (PORTAL-37). */
  env?: Environment;
  /** In live, asks for a second factor at most 15 minutes old (PORTAL-10); or why a live write does not. */
  stepUp?: true | string;
  /** A page whose owner sees this organization's rows of the session's environment (`rows`) or its members. */
  shows?: 'rows' | 'members';
  /** A page of what the organization has in both environments at once, and why. */
  bothEnvironments?: string;
  /** Why a public or pending route is what it is. */
  reason?: string;
}

const FORMATION = 'formation_tier_1';
const RESENDS = 'sends again what the endpoint was sent already: no secret shown, no setting changed';
const AUDIT_LOG: PortalRouteRule = {
  access: 'member',
  action: 'audit.read',
  shows: 'rows',
  bothEnvironments: 'the audit log is the organization’s, of both environments, each entry naming its own (AUDIT-6)',
};

/** Every portal route, `METHOD path` as Fastify's route table spells it. */
const PORTAL_ROUTES: Record<string, PortalRouteRule> = {
  'GET /portal/assets/portal.css': { access: 'public', reason: 'the stylesheet: no data' },
  'GET /portal/sign-in': { access: 'public', reason: 'the sign-in form' },
  'POST /portal/sign-in': { access: 'public', reason: 'signing in; checked by portal-auth.test.ts' },
  'GET /portal/invitation': { access: 'public', reason: "the invitation's single-use token is the credential" },
  'POST /portal/invitation': { access: 'public', reason: "the invitation's single-use token is the credential" },
  'GET /portal/password-reset': { access: 'public', reason: 'asking for a reset link' },
  'POST /portal/password-reset': { access: 'public', reason: 'the same answer for every address (PORTAL-9)' },
  'GET /portal/password-reset/new': { access: 'public', reason: "the reset link's single-use token is the credential" },
  'POST /portal/password-reset/new': {
    access: 'public',
    reason: "the reset link's single-use token is the credential",
  },
  'GET /portal/second-factor': { access: 'pending', reason: 'the second sign-in step of a password-only session' },
  'POST /portal/second-factor': { access: 'pending', reason: 'the second sign-in step of a password-only session' },

  'POST /portal/sign-out': { access: 'member', action: null, own: "ends the member's own session" },
  'GET /portal/account/two-factor': { access: 'member', action: null },
  'POST /portal/account/two-factor/start': {
    access: 'member',
    action: null,
    own: "the member's own second factor (PORTAL-5)",
  },
  'POST /portal/account/two-factor/confirm': {
    access: 'member',
    action: null,
    own: "the member's own second factor (PORTAL-5)",
    body: () => ({ code: '000000' }),
  },
  'GET /portal/step-up': { access: 'member', action: null },
  'POST /portal/step-up': {
    access: 'member',
    action: null,
    own: "proves the member's own second factor (PORTAL-10)",
    body: () => ({ code: '000000', next: '/portal/keys' }),
  },
  'GET /portal/sessions': { access: 'member', action: null },
  'POST /portal/sessions/:id/revoke': {
    access: 'member',
    action: null,
    own: "signs out one of the member's own sessions (PORTAL-6)",
    resource: 'ownSession',
  },

  'GET /portal': { access: 'member', action: 'overview.read' },
  'GET /portal/': { access: 'member', action: 'overview.read' },
  'POST /portal/organization': {
    access: 'member',
    action: null,
    own: 'chooses which of the member’s organizations the session shows (PORTAL-7)',
    resource: 'organization',
    body: (id) => ({ organizationId: id }),
  },
  'POST /portal/environment': {
    access: 'member',
    action: 'overview.read',
    own: 'switches what the session shows between test and live (PORTAL-7)',
    body: () => ({ environment: 'live' }),
  },
  'GET /portal/members': { access: 'member', action: 'members.read', shows: 'members' },
  'POST /portal/members/invite': {
    access: 'member',
    action: 'members.invite',
    body: () => ({ email: newEmail('invited'), role: 'viewer' }),
    stepUp: 'members are the organization’s, in live and test alike; PORTAL-10 asks in live only',
  },
  'POST /portal/members/:memberId/remove': {
    access: 'member',
    action: 'members.remove',
    resource: 'ownerMember',
    alsoRefused: ['admin'],
    stepUp: 'members are the organization’s, in live and test alike; PORTAL-10 asks in live only',
  },

  'GET /portal/keys': { access: 'member', action: 'keys.read', shows: 'rows' },
  'POST /portal/keys': {
    access: 'member',
    action: 'keys.write',
    body: () => ({ name: 'made by the suite' }),
    stepUp: true,
  },
  'POST /portal/keys/:keyId/roll': {
    access: 'member',
    action: 'keys.write',
    resource: 'key',
    body: () => ({ overlapHours: '24' }),
    stepUp: true,
  },
  'POST /portal/keys/:keyId/revoke': { access: 'member', action: 'keys.write', resource: 'key', stepUp: true },

  'GET /portal/webhooks': { access: 'member', action: 'webhooks.read', shows: 'rows' },
  'POST /portal/webhooks': {
    access: 'member',
    action: 'webhooks.write',
    body: () => ({ url: 'http://127.0.0.1:9/made-by-the-suite', eventTypes: 'document.uploaded' }),
    stepUp: true,
  },
  'GET /portal/webhooks/:id': { access: 'member', action: 'webhooks.read', resource: 'endpoint' },
  'POST /portal/webhooks/:id': {
    access: 'member',
    action: 'webhooks.write',
    resource: 'endpoint',
    body: (_id, f, env) => ({ url: `http://127.0.0.1:9/ep${f.tag}${env}`, eventTypes: 'filing.status_changed' }),
    stepUp: true,
  },
  'POST /portal/webhooks/:id/disable': {
    access: 'member',
    action: 'webhooks.write',
    resource: 'endpoint',
    stepUp: true,
  },
  'POST /portal/webhooks/:id/enable': {
    access: 'member',
    action: 'webhooks.write',
    resource: 'endpoint',
    stepUp: true,
  },
  'POST /portal/webhooks/:id/delete': {
    access: 'member',
    action: 'webhooks.write',
    resource: 'endpoint',
    body: () => ({ confirm: 'yes' }),
    stepUp: true,
  },
  'POST /portal/webhooks/:id/roll-secret': {
    access: 'member',
    action: 'webhooks.write',
    resource: 'endpoint',
    stepUp: true,
  },
  'POST /portal/webhooks/:id/test': { access: 'member', action: 'webhooks.write', resource: 'endpoint', stepUp: true },

  'GET /portal/deliveries': { access: 'member', action: 'webhooks.read', shows: 'rows' },
  'GET /portal/deliveries/recoveries': { access: 'member', action: 'webhooks.read' },
  'POST /portal/deliveries/recoveries': {
    access: 'member',
    action: 'webhooks.write',
    resource: 'endpoint',
    body: (id) => ({ endpoint: id, since: new Date(Date.now() - 3_600_000).toISOString() }),
    stepUp: RESENDS,
  },
  'GET /portal/deliveries/recoveries/:id': { access: 'member', action: 'webhooks.read', resource: 'recovery' },
  'GET /portal/deliveries/:id': { access: 'member', action: 'webhooks.read', resource: 'delivery' },
  'POST /portal/deliveries/:id/resend': {
    access: 'member',
    action: 'webhooks.write',
    resource: 'delivery',
    stepUp: RESENDS,
  },

  'GET /portal/events': { access: 'member', action: 'events.read', shows: 'rows' },
  'GET /portal/events/:id': { access: 'member', action: 'events.read', resource: 'event' },
  'GET /portal/request-log': { access: 'member', action: 'logs.read' },
  'GET /portal/audit-log': AUDIT_LOG,
  'GET /portal/audit-log.csv': AUDIT_LOG,

  'GET /portal/orders': { access: 'member', action: 'orders.read', shows: 'rows' },
  'GET /portal/orders/:orderId': { access: 'member', action: 'orders.read', resource: 'order' },
  'GET /portal/companies': { access: 'member', action: 'companies.read', shows: 'rows' },
  'GET /portal/companies/:companyId': { access: 'member', action: 'companies.read', resource: 'company' },
  'GET /portal/users': { access: 'member', action: 'users.read', shows: 'rows' },

  'GET /portal/balance': { access: 'member', action: 'billing.read', shows: 'rows' },
  'GET /portal/balance/ledger.csv': { access: 'member', action: 'billing.read', shows: 'rows' },
  'GET /portal/balance/top-up': { access: 'member', action: 'billing.write' },
  'POST /portal/balance/top-up': {
    access: 'member',
    action: 'billing.write',
    body: () => ({ amount: '50', formKey: randomBytes(8).toString('hex') }),
    stepUp:
      'opens a Stripe payment page (test money is credited at once): no setting changes, no secret shows, and nothing live is credited before Stripe says paid (FUND-24)',
  },
  'GET /portal/balance/statements': { access: 'member', action: 'billing.read' },
  'GET /portal/balance/statements/:month': { access: 'member', action: 'billing.read' },
  'GET /portal/balance/auto-recharge': { access: 'member', action: 'billing.read' },
  'POST /portal/balance/auto-recharge': {
    access: 'member',
    action: 'billing.write',
    env: 'live',
    alsoRefused: ['admin'],
    body: () => ({ threshold: '100', amount: '500' }),
    stepUp: true,
  },
  'POST /portal/balance/auto-recharge/setup': {
    access: 'member',
    action: 'billing.write',
    env: 'live',
    alsoRefused: ['admin'],
    stepUp: true,
  },
  'GET /portal/prices': { access: 'member', action: 'prices.read' },
  'POST /portal/prices/:type': {
    access: 'member',
    action: 'prices.write',
    body: () => ({ retailAmount: '999' }),
    stepUp: true,
  },
  'POST /portal/prices/:type/revert': { access: 'member', action: 'prices.write', stepUp: true },

  'GET /portal/branding': { access: 'member', action: 'settings.read' },
  'POST /portal/branding': {
    access: 'member',
    action: 'settings.write',
    env: 'live',
    body: () => ({ primaryColor: '#123456' }),
    stepUp: true,
  },
  'POST /portal/branding/domain': {
    access: 'member',
    action: 'settings.write',
    env: 'live',
    body: () => ({ whiteLabelDomain: '' }),
    stepUp: true,
  },
  'POST /portal/branding/domain/verify': { access: 'member', action: 'settings.write', env: 'live', stepUp: true },
};

/** Path parameters that name no tenant's resource, with the value used. */
const PARAM_VALUES: Record<string, string> = { ':type': FORMATION, ':month': new Date().toISOString().slice(0, 7) };

/** One organization of the suite: its members by role and the strings only its pages show, per environment. */
interface OrgFixture {
  tenant: TestTenant;
  tag: string;
  members: Record<Role, string>;
  /** Strings that only this organization's pages show: its name and members' addresses, and its rows per environment. */
  markers: { common: string[]; live: string[]; test: string[] };
  shared: Record<
    Environment,
    { endpointId: string; deliveryId: string; orderId: string; companyId: string; eventId: string; recoveryId: string }
  >;
}

/**
 * The problems that keep the portal suite from covering `routes` (the app's whole route table): a /portal route
 * without an entry in PORTAL_ROUTES, an entry no route has any more, and a POST open to viewers that says not why it
 * is no write of the organization's. Empty when every portal route is classified.
 */
export function portalCoverageProblems(routes: RouteEntry[]): string[] {
  const problems: string[] = [];
  const portal = routes.filter((r) => r.path === '/portal' || r.path.startsWith('/portal/'));
  const keys = new Set(portal.map((r) => `${r.method} ${r.path}`));
  for (const key of keys) {
    const rule = PORTAL_ROUTES[key];
    if (!rule) {
      problems.push(`${key}: not classified in test/portal-security-suite.ts`);
      continue;
    }
    const [method] = key.split(' ');
    if (rule.access !== 'member') continue;
    if (rule.action === undefined) problems.push(`${key}: names no policy action (null for the member's own)`);
    const viewerMay = rule.action === null || (rule.action !== undefined && can('viewer', rule.action));
    if (method === 'POST' && viewerMay && !rule.own)
      problems.push(`${key}: a POST open to viewers without the reason it is no write of the organization's`);
    if (method === 'POST' && !viewerMay && rule.stepUp === undefined)
      problems.push(`${key}: a write that says neither that it asks for a step-up in live nor why not`);
  }
  for (const key of Object.keys(PORTAL_ROUTES)) if (!keys.has(key)) problems.push(`${key}: no such route any more`);
  return problems;
}

interface Session {
  cookie: string;
  csrf: string;
  id: string;
}

/** Runs the portal suite over the /portal routes of `routes` (the app's route table, read at collection time). */
export function runPortalSecuritySuite(opts: { app: () => TestApp; routes: RouteEntry[] }): void {
  const portal = opts.routes.filter((r) => r.path === '/portal' || r.path.startsWith('/portal/'));

  describe('portal security suite: the route table', () => {
    it('classifies every portal route (a new route must be classified in test/portal-security-suite.ts)', () => {
      expect(portalCoverageProblems(opts.routes)).toEqual([]);
      expect(portal.length).toBeGreaterThan(40);
    });
  });

  describe('portal security suite: every portal route', () => {
    let mine: OrgFixture;
    let theirs: OrgFixture;
    let tables: Array<{ name: string; env: boolean }>;

    beforeAll(async () => {
      const t = opts.app();
      [mine, theirs] = await Promise.all([orgFixture(t, 'Mine'), orgFixture(t, 'Theirs')]);
      const { rows } = await t.ctx.pool.query<{ table_name: string; env: boolean }>(
        `SELECT c.table_name, bool_or(e.column_name IS NOT NULL) AS env
           FROM information_schema.columns c
           JOIN information_schema.tables tb ON tb.table_schema = c.table_schema AND tb.table_name = c.table_name
                AND tb.table_type = 'BASE TABLE'
           LEFT JOIN information_schema.columns e
             ON e.table_schema = c.table_schema AND e.table_name = c.table_name AND e.column_name = 'environment'
          WHERE c.table_schema = 'public' AND c.column_name = 'organization_id' AND c.table_name <> 'portal_sessions'
          GROUP BY c.table_name ORDER BY c.table_name`,
      );
      tables = rows.map((r) => ({ name: r.table_name, env: r.env }));
    }, 60_000);

    /**
     * What an organization has, table by table (an md5 of its rows): in `env` only for the tables kept per environment,
     * or everything (the organization's row, members, sessions and the tables without an environment) when `env` is
     * 'all'.
     */
    const fingerprint = async (f: OrgFixture, env: Environment | 'all') => {
      const t = opts.app();
      const org = f.tenant.organizationId;
      const parts: string[] = [];
      for (const table of tables) {
        if (env !== 'all' && !table.env) continue;
        const where = env === 'all' ? 'organization_id = $1' : `organization_id = $1 AND environment = '${env}'`;
        parts.push(
          `SELECT '${table.name}' AS t, md5(coalesce(string_agg(to_jsonb(x)::text, ',' ORDER BY to_jsonb(x)::text), '')) AS h FROM ${table.name} x WHERE ${where}`,
        );
      }
      if (env === 'all') {
        parts.push(`SELECT 'organizations', md5(to_jsonb(x)::text) FROM organizations x WHERE id = $1`);
        parts.push(
          `SELECT 'members', md5(coalesce(string_agg((to_jsonb(m) - 'updated_at')::text, ',' ORDER BY m.id), ''))
             FROM members m WHERE m.id IN (SELECT member_id FROM organization_memberships WHERE organization_id = $1)`,
        );
        parts.push(
          `SELECT 'portal_sessions', md5(coalesce(string_agg(concat_ws('|', s.id, s.revoked_at, s.organization_id, s.environment, s.second_factor_at), ',' ORDER BY s.id), ''))
             FROM portal_sessions s WHERE s.member_id IN (SELECT member_id FROM organization_memberships WHERE organization_id = $1)`,
        );
      }
      const { rows } = await t.ctx.pool.query<{ t: string; h: string }>(parts.join(' UNION ALL '), [org]);
      return Object.fromEntries(rows.map((r) => [r.t, r.h]));
    };

    /** A new session of a member, showing `env`, its second factor proved `proofMinutesAgo` minutes back (null: never). */
    const sessionOf = async (
      memberId: string,
      env: Environment,
      proofMinutesAgo: number | null = 0,
      pending = false,
    ): Promise<Session> => {
      const t = opts.app();
      const sessionId = await createSession(t.ctx.pool, {
        memberId,
        pending,
        clientAddress: '127.0.0.1',
        userAgent: 'portal security suite',
      });
      const { rows } = await t.ctx.pool.query<{ id: string; csrf_token: string }>(
        `UPDATE portal_sessions SET environment = $2,
                second_factor_at = CASE WHEN $3::int IS NULL THEN NULL ELSE now() - make_interval(mins => $3::int) END
          WHERE id_hash = $1 RETURNING id, csrf_token`,
        [sha256(sessionId), env, proofMinutesAgo],
      );
      return {
        cookie: `fcs_portal=${sessionCookieValue(t.ctx.secrets.fileUrlSecret, sessionId)}`,
        csrf: rows[0]!.csrf_token,
        id: rows[0]!.id,
      };
    };

    const send = async (
      method: string,
      url: string,
      session: Session | null,
      form?: Record<string, string>,
      csrf: string | null = session?.csrf ?? null,
    ) => {
      // A client address of its own per request, so the per-address sign-in and cookie throttles never answer first.
      const res = await opts.app().app.inject({
        method: method as InjectOptions['method'],
        url,
        remoteAddress: `10.${randomBytes(3).join('.')}`,
        headers: {
          ...(session ? { cookie: session.cookie } : {}),
          ...(method === 'POST' ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        },
        ...(method === 'POST'
          ? { payload: new URLSearchParams({ ...(csrf === null ? {} : { _csrf: csrf }), ...form }).toString() }
          : {}),
      });
      return { status: res.statusCode, location: String(res.headers.location ?? ''), body: res.body };
    };

    /** The resource of `kind` of `f` in `env` (`requester`: whose own session an own-session route revokes). */
    const resourceOf = async (kind: ResourceKind, f: OrgFixture, env: Environment, requester: string) => {
      const t = opts.app();
      switch (kind) {
        case 'key':
          return (await addApiKey(t.ctx.pool, f.tenant.organizationId, env, `key${f.tag}${env}`)).id;
        case 'ownerMember': {
          const target = await memberSession(t, f.tenant.organizationId, 'owner', { email: newEmail(`own${f.tag}`) });
          return target.memberId;
        }
        case 'ownSession':
          return (await sessionOf(requester, env)).id;
        case 'organization':
          return f.tenant.organizationId;
        case 'endpoint':
          return f.shared[env].endpointId;
        default:
          return f.shared[env][`${kind}Id`];
      }
    };

    /** The URL and form of `rule`'s route for `f`'s resource in `env`. */
    const requestOf = async (
      route: RouteEntry,
      rule: PortalRouteRule,
      f: OrgFixture,
      env: Environment,
      requester: string,
    ) => {
      const id = rule.resource ? await resourceOf(rule.resource, f, env, requester) : '';
      const url = route.path.replace(/:[A-Za-z]+/g, (p) => encodeURIComponent(PARAM_VALUES[p] ?? id));
      return { id, url, form: rule.body?.(id, f, env) ?? {} };
    };

    const othersMarkers = (f: OrgFixture) => [...f.markers.common, ...f.markers.live, ...f.markers.test];
    const shown = (body: string, markers: string[]) => markers.filter((m) => body.includes(m));

    for (const route of portal) {
      const key = `${route.method} ${route.path}`;
      const rule = PORTAL_ROUTES[key];
      if (!rule) continue;
      const isPost = route.method === 'POST';
      const sample = () => route.path.replace(/:[A-Za-z]+/g, (p) => PARAM_VALUES[p] ?? 'id_of_nothing');

      if (rule.access === 'public') {
        it(`${key}: open without a session (${rule.reason}); ${isPost ? 'refused without the form token' : 'a page'}`, async () => {
          const res = await send(route.method, sample(), null, isPost ? { email: 'a@example.com' } : undefined);
          if (isPost) expect(res.status, res.body.slice(0, 300)).toBe(403);
          else expect(res.status === 200 || res.status === 404, `${res.status}`).toBe(true);
        });
        continue;
      }

      if (rule.access === 'pending') {
        it(`${key}: without a session → sign-in; ${isPost ? 'without the CSRF token → 403' : 'a password-only session sees it'}`, async () => {
          const none = await send(route.method, sample(), null, isPost ? { code: '000000' } : undefined);
          expect(none.status).toBe(303);
          expect(none.location).toBe('/portal/sign-in');
          const pending = await sessionOf(mine.members.owner, 'test', null, true);
          const res = await send(route.method, sample(), pending, isPost ? { code: '000000' } : undefined, null);
          expect(res.status, res.body.slice(0, 300)).toBe(isPost ? 403 : 200);
        });
        continue;
      }

      const env = rule.env ?? 'test';
      const allowed = (role: Role) =>
        (rule.action == null || can(role, rule.action)) && !(rule.alsoRefused ?? []).includes(role);

      it(`${key}: without a session → sign-in, nothing changes`, async () => {
        const { url, form } = await requestOf(route, rule, mine, env, mine.members.owner);
        const before = await fingerprint(mine, 'all');
        for (const cookie of [null, { cookie: 'fcs_portal=forged.cookie', csrf: 'x', id: '' }]) {
          const res = await send(route.method, url, cookie, isPost ? form : undefined);
          expect(res.status, res.body.slice(0, 300)).toBe(303);
          expect(res.location).toBe('/portal/sign-in');
        }
        expect(await fingerprint(mine, 'all')).toEqual(before);
      });

      if (isPost) {
        it(`${key}: without the session's CSRF token → 403, nothing changes`, async () => {
          const owner = await sessionOf(mine.members.owner, env);
          const other = await sessionOf(mine.members.admin, env);
          const { url, form } = await requestOf(route, rule, mine, env, mine.members.owner);
          const before = await fingerprint(mine, 'all');
          for (const csrf of [null, '', other.csrf, randomBytes(32).toString('base64url')]) {
            const res = await send(route.method, url, owner, form, csrf);
            expect(res.status, `csrf ${JSON.stringify(csrf)}: ${res.body.slice(0, 300)}`).toBe(403);
          }
          expect(await fingerprint(mine, 'all')).toEqual(before);
        });
      }

      it(`${key}: roles — ${ROLES.filter(allowed).join(', ') || 'none'} may; ${ROLES.filter((r) => !allowed(r)).join(', ') || 'none'} refused (403, nothing changes)`, async () => {
        // The refused first, then the allowed, the owner last, each on a fresh resource when the route makes one.
        for (const role of [...ROLES.filter((r) => !allowed(r)), ...ROLES.filter(allowed).reverse()]) {
          const session = await sessionOf(mine.members[role], env);
          const { url, form } = await requestOf(route, rule, mine, env, mine.members[role]);
          const before = await fingerprint(mine, 'all');
          const res = await send(route.method, url, session, isPost ? form : undefined);
          const what = `${role}: ${res.status} ${res.location} ${res.body.slice(0, 300)}`;
          if (!allowed(role)) {
            expect(res.status, what).toBe(403);
            expect(res.body, what).toContain(`Your role (${role})`);
            expect(await fingerprint(mine, 'all'), what).toEqual(before);
          } else {
            expect(res.status, what).not.toBe(403);
            expect(res.status, what).toBeLessThan(500);
            if (!isPost) expect(res.status, what).toBe(200);
          }
        }
      });

      it(`${key}: a member of another organization sees nothing of this one and changes nothing of it`, async () => {
        const stranger = await sessionOf(theirs.members.owner, env);
        const { id, url, form } = await requestOf(route, rule, mine, env, mine.members.owner);
        const before = await fingerprint(mine, 'all');
        const res = await send(route.method, url, stranger, isPost ? form : undefined);
        const what = `${res.status} ${res.body.slice(0, 300)}`;
        // A refusal may repeat the id it was asked for: the asker's own input, not the organization's data.
        const markers = othersMarkers(mine).filter((m) => m !== id);
        expect(res.status, what).toBeLessThan(500);
        if (rule.resource && rule.resource !== 'ownerMember' && rule.resource !== 'ownSession') {
          expect([400, 403, 404], what).toContain(res.status);
        } else if (rule.resource) expect([403, 404], what).toContain(res.status);
        expect(shown(res.body, markers), what).toEqual([]);
        expect(await fingerprint(mine, 'all'), what).toEqual(before);
        // Control: the organization's own owner, asked the same, sees its rows there.
        if (!isPost && (rule.shows || rule.resource)) {
          const own = await send('GET', url, await sessionOf(mine.members.owner, env));
          expect(own.status, own.body.slice(0, 300)).toBe(200);
          if (rule.shows)
            expect(shown(own.body, [...mine.markers.common, ...mine.markers[env]]).length).toBeGreaterThan(0);
        }
      });

      if (rule.env !== 'live') {
        it(`${key}: in test, a live id is unknown, no live row is shown and no live row changes`, async () => {
          const owner = await sessionOf(mine.members.owner, 'test');
          const { id, url, form } = await requestOf(route, rule, mine, 'live', mine.members.owner);
          const liveBefore = await fingerprint(mine, 'live');
          const res = await send(route.method, url, owner, isPost ? form : undefined);
          const what = `${res.status} ${res.body.slice(0, 300)}`;
          expect(res.status, what).toBeLessThan(500);
          if (rule.resource && !['ownerMember', 'ownSession', 'organization'].includes(rule.resource))
            expect([400, 404], what).toContain(res.status);
          if (!rule.bothEnvironments)
            expect(
              shown(
                res.body,
                mine.markers.live.filter((m) => m !== id),
              ),
              what,
            ).toEqual([]);
          // The same request with test's own ids changes nothing in live either.
          const own = await requestOf(route, rule, mine, 'test', mine.members.owner);
          await send(route.method, own.url, await sessionOf(mine.members.owner, 'test'), isPost ? own.form : undefined);
          expect(await fingerprint(mine, 'live'), what).toEqual(liveBefore);
          if (rule.shows === 'rows') {
            const live = await send('GET', url, await sessionOf(mine.members.owner, 'live'));
            expect(shown(live.body, mine.markers.live).length, 'the live page shows the live rows').toBeGreaterThan(0);
          }
        });
      }

      if (rule.stepUp === true) {
        it(`${key}: in live, a second factor older than 15 minutes → step-up, nothing changes`, async () => {
          for (const age of [16, null]) {
            const stale = await sessionOf(mine.members.owner, 'live', age);
            const { url, form } = await requestOf(route, rule, mine, 'live', mine.members.owner);
            const before = await fingerprint(mine, 'all');
            const res = await send(route.method, url, stale, form);
            expect(res.status, `${age}: ${res.body.slice(0, 300)}`).toBe(303);
            expect(res.location).toMatch(/^\/portal\/step-up\?next=%2Fportal%2F/);
            expect(await fingerprint(mine, 'all')).toEqual(before);
          }
          // Control: a fresh proof goes ahead.
          const fresh = await sessionOf(mine.members.owner, 'live', 1);
          const { url, form } = await requestOf(route, rule, mine, 'live', mine.members.owner);
          const res = await send(route.method, url, fresh, form);
          expect(res.location, res.body.slice(0, 300)).not.toMatch(/step-up/);
          expect(res.status).toBeLessThan(500);
        });
      }
    }
  });
}

/**
 * An organization with a member of each role (owners and admins with a second factor) and, in each environment, a
 * webhook endpoint, an order with a company and user, events and a delivery, a recovery, an API key, a ledger entry:
 * each carries the organization's tag, so a page showing it is found by its markers.
 */
async function orgFixture(t: TestApp, label: string): Promise<OrgFixture> {
  const tag = `${label}${randomBytes(4).toString('hex')}`;
  const tenant = await t.newTenant(`Org${tag}`);
  const members = {} as Record<Role, string>;
  const emails: string[] = [];
  for (const role of ROLES) {
    const email = newEmail(`m${tag}${role}`);
    members[role] = (await memberSession(t, tenant.organizationId, role, { email })).memberId;
    emails.push(email);
  }
  const markers: OrgFixture['markers'] = { common: [`Org${tag}`, ...emails], live: [], test: [] };
  const shared = {} as OrgFixture['shared'];
  for (const env of ['live', 'test'] as const) {
    const tenantEnv = { organizationId: tenant.organizationId, environment: env };
    const endpoint = await createEndpoint(t.ctx, tenantEnv, {
      url: `http://127.0.0.1:9/ep${tag}${env}`,
      eventTypes: ['document.uploaded', 'filing.status_changed'],
    });
    // Made as a member makes it, so the audit log has an entry of this organization's (AUDIT-1).
    const key = await addApiKey(t.ctx.pool, tenant.organizationId, env, `key${tag}${env}`, {
      kind: 'member',
      id: members.owner,
      label: emails[0]!,
      address: '127.0.0.1',
    });
    const { user, company } = await createCompany(tenant, env, { legalName: `Co${tag}${env} LLC` });
    const { orderId } = await createOrderRow(t.ctx, tenantEnv, {
      companyId: company.id,
      userId: user.id,
      debitLines: [{ amountCents: 12345, lineType: 'state_fee' }],
    });
    const eventId = (await transitionOrder(t.ctx, null, orderId, { filingStatus: 'pending' }, 'cli')).event.id;
    const deliveryId = await withTransaction(t.ctx.pool, async (tx) => {
      const e = await emitEvent(tx, tenantEnv, 'document.uploaded', {});
      const { rows } = await tx.query(
        `UPDATE webhook_deliveries SET status = 'succeeded', next_attempt_at = NULL WHERE event_id = $1 AND endpoint_id = $2 RETURNING id`,
        [e.id, endpoint.id],
      );
      return rows[0].id as string;
    });
    const recovery = await requestRecovery(t.ctx, tenantEnv, {
      endpointId: endpoint.id,
      since: new Date(Date.now() - 3_600_000),
      requestedBy: 'portal security suite',
    });
    shared[env] = {
      endpointId: endpoint.id,
      deliveryId,
      orderId,
      companyId: company.id,
      eventId,
      recoveryId: recovery.id,
    };
    markers[env].push(
      user.email,
      `ep${tag}${env}`,
      `key${tag}${env}`,
      `Co${tag}${env}`,
      orderId,
      eventId,
      deliveryId,
      key.id,
    );
  }
  return { tenant, tag, members, markers, shared };
}

import { randomBytes } from 'node:crypto';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { PDFDocument } from 'pdf-lib';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Environment } from '../src/context.js';
import { withTransaction } from '../src/lib/db.js';
import { storeDocument } from '../src/modules/documents/documents.service.js';
import { emitEvent } from '../src/modules/events/events.service.js';
import { transitionOrder } from '../src/modules/filings/filings.service.js';
import { newId } from '../src/lib/ids.js';
import { claimTopUp } from '../src/modules/funding/top-ups.repo.js';
import { createCompany, createOrderRow, createUser } from './factories.js';
import type { TestApp, TestTenant } from './harness.js';

/**
 * The shared security suite (AUTH-1, AUTH-2, TEN-3). Its routes are not kept
 * by hand: they are read from the app's own route table (`routeTable`), so a route added later is covered at once,
 * or makes the suite fail until it is classified here.
 *
 * - Integrator routes (`/v1`, `/test/v1`, test helpers included): no key, a malformed, an unknown and a revoked key
 *   answer 401; a key of the other environment answers 401 naming the right base address. A route with a path
 *   parameter needs a resource factory (TENANT_RESOURCES) or a reasoned entry in NOT_A_TENANT_ID: another
 *   organization's key and the same organization's other environment get 404, and the resource read back with its
 *   owner's key (and its database row) is unchanged afterwards.
 * - Integrator GET routes without a path parameter are lists (LIST_ROUTES) or reasoned exemptions (NOT_A_LIST). A
 *   list is read by another organization and by the owner's other environment, without filters and with the
 *   owner's ids in each filter that takes an id: the answer is a 404 or a list without any of the owner's rows
 *   (TEN-3), while the owner, asked the same, sees them.
 * - Operator routes (`/admin/v1`, `/metrics`): no token, a wrong token and an integrator key answer 401.
 * - Browser routes: each is listed in WEB_ROUTES with the reason its authentication is what it is; the ones behind a
 *   session answer nothing successful without one.
 */

/** One route of the table: a method and Fastify's path pattern (`:param`, `*`). HEAD routes Fastify adds are left out. */
export interface RouteEntry {
  method: string;
  path: string;
}

/** Every route the app serves, read from `printRoutes` (Fastify has no other public route listing). */
export function routeTable(app: FastifyInstance): RouteEntry[] {
  const text = app.printRoutes({ commonPrefix: false });
  const stack: string[] = [];
  const seen = new Set<string>();
  const routes: RouteEntry[] = [];
  for (const line of text.split('\n')) {
    const m = /^([│ ]*)[├└]── (.*)$/.exec(line);
    if (!m) continue;
    const depth = m[1].length / 4;
    const node = /^(\S+)(?: \(([^)]*)\))?/.exec(m[2]);
    if (!node) throw new Error(`routeTable: cannot read the route line ${JSON.stringify(line)}`);
    stack.length = depth;
    stack.push(node[1]);
    const path = stack.join('');
    for (const method of (node[2] ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)) {
      if (method === 'HEAD') continue;
      const key = `${method} ${path}`;
      if (!seen.has(key)) routes.push({ method, path });
      seen.add(key);
    }
  }
  if (routes.length < 20)
    throw new Error(`routeTable: only ${routes.length} routes read; the printRoutes format changed?\n${text}`);
  return routes;
}

const PREFIX: Record<Environment, string> = { live: '/v1', test: '/test/v1' };
const DUMMY_ID = 'id_does_not_matter_for_auth';
const fill = (pattern: string, id: string) =>
  pattern.replace(/:[A-Za-z]+/g, encodeURIComponent(id)).replace(/\*$/, 'x');

/** A tenant's resource addressed by a route's path parameter, and how to read all of it back. */
interface TenantResource {
  create(t: TestApp, owner: TestTenant, env: Environment): Promise<string>;
  /** What the resource is now: its owner's view through the API (when the API has one) and its database rows. */
  snapshot(t: TestApp, owner: TestTenant, env: Environment, id: string): Promise<unknown>;
}

const row = async (t: TestApp, table: string, id: string) =>
  (await t.ctx.pool.query(`SELECT to_jsonb(x) AS r FROM ${table} x WHERE id = $1`, [id])).rows[0]?.r ?? null;
const count = async (t: TestApp, sql: string, id: string) =>
  (await t.ctx.pool.query(`SELECT count(*)::int AS n FROM ${sql}`, [id])).rows[0].n as number;
const ownerView = async (owner: TestTenant, env: Environment, path: string) => {
  const res = await owner.api('GET', path, undefined, { env });
  return { status: res.statusCode, body: res.statusCode === 200 ? res.json() : null };
};

const user: TenantResource = {
  create: async (_t, owner, env) => (await createUser(owner, env)).id,
  snapshot: async (t, owner, env, id) => ({
    api: await ownerView(owner, env, `/users/${id}`),
    row: await row(t, 'users', id),
  }),
};
const company: TenantResource = {
  create: async (_t, owner, env) => (await createCompany(owner, env)).company.id,
  snapshot: async (t, owner, env, id) => ({
    api: await ownerView(owner, env, `/companies/${id}`),
    row: await row(t, 'companies', id),
  }),
};
const document: TenantResource = {
  async create(t, owner, environment) {
    const { orderId } = await createOrderRow(t.ctx, { organizationId: owner.organizationId, environment });
    const bytes = await (await PDFDocument.create()).save();
    return (
      await storeDocument(t.ctx, null, { orderId, documentType: 'company', fileName: 'a.pdf', content: bytes }, 'cli')
    ).document.documentId;
  },
  snapshot: async (t, owner, env, id) => {
    const api = await ownerView(owner, env, `/documents/${id}`);
    // The signed link's expiry counts from the moment of the read, so two reads a second apart differ there only.
    if (api.body) api.body.fileUrl = String(api.body.fileUrl).split('?')[0];
    return { api, row: await row(t, 'documents', id) };
  },
};
const event: TenantResource = {
  async create(t, owner, environment) {
    const { orderId } = await createOrderRow(t.ctx, { organizationId: owner.organizationId, environment });
    return (await transitionOrder(t.ctx, null, orderId, { filingStatus: 'pending' }, 'cli')).event.id;
  },
  snapshot: async (t, owner, env, id) => ({
    api: await ownerView(owner, env, `/events/${id}`),
    row: await row(t, 'events', id),
  }),
};
// A top-up as POST /balance/top-ups writes it before its payment page opens (live) or its credit (test).
const topUp: TenantResource = {
  create: async (t, owner, environment) =>
    (
      await claimTopUp(
        t.ctx.pool,
        { organizationId: owner.organizationId, environment },
        {
          id: newId('topUp'),
          amountCents: 1000,
          provider: environment === 'live' ? 'stripe' : 'test',
          idempotencyKey: null,
        },
      )
    ).topUp.id,
  snapshot: async (t, owner, env, id) => ({
    api: await ownerView(owner, env, `/balance/top-ups/${id}`),
    row: await row(t, 'top_ups', id),
  }),
};
// Port 9 on loopback: no test here runs a worker, so nothing is ever sent there.
const endpoint: TenantResource = {
  create: async (_t, owner, env) =>
    (
      await owner.api(
        'POST',
        '/webhook-endpoints',
        { url: 'http://127.0.0.1:9/hooks', eventTypes: ['document.uploaded'] },
        { env },
      )
    ).json().id,
  snapshot: async (t, owner, env, id) => ({
    api: await ownerView(owner, env, `/webhook-endpoints/${id}`),
    row: await row(t, 'webhook_endpoints', id),
    deliveries: await count(t, 'webhook_deliveries WHERE endpoint_id = $1', id),
  }),
};
const delivery: TenantResource = {
  // A finished delivery, so the owner's own resend is accepted in the control check.
  async create(t, owner, env) {
    const ep = (
      await owner.api(
        'POST',
        '/webhook-endpoints',
        { url: 'http://127.0.0.1:9/hooks', eventTypes: ['document.uploaded'] },
        { env },
      )
    ).json();
    return withTransaction(t.ctx.pool, async (tx) => {
      const e = await emitEvent(
        tx,
        { organizationId: owner.organizationId, environment: env },
        'document.uploaded',
        {},
      );
      const { rows } = await tx.query(
        `UPDATE webhook_deliveries SET status = 'succeeded', next_attempt_at = NULL WHERE event_id = $1 AND endpoint_id = $2 RETURNING id`,
        [e.id, ep.id],
      );
      return rows[0].id as string;
    });
  },
  snapshot: async (t, owner, env, id) => ({
    api: await ownerView(owner, env, `/webhook-deliveries/${id}`),
    row: await row(t, 'webhook_deliveries', id),
    attempts: await count(t, 'webhook_attempts WHERE delivery_id = $1', id),
  }),
};
// The integrator API has no order read; the order's row, its history and its documents are what a call could change.
const order: TenantResource = {
  create: async (t, owner, environment) =>
    (await createOrderRow(t.ctx, { organizationId: owner.organizationId, environment })).orderId,
  snapshot: async (t, _owner, _env, id) => ({
    row: await row(t, 'orders', id),
    history: await count(t, 'order_status_history WHERE order_id = $1', id),
    documents: await count(t, 'documents WHERE order_id = $1', id),
  }),
};

// An EIN order the IRS refused (exception 483), so its owner's correction is accepted in the control check (ORD-EIN-8).
const refusedEinOrder: TenantResource = {
  async create(t, owner, environment) {
    const { orderId } = await createOrderRow(
      t.ctx,
      { organizationId: owner.organizationId, environment },
      {
        orderType: 'ein',
      },
    );
    await transitionOrder(t.ctx, null, orderId, { filingStatus: 'exception', exceptionCode: '483' }, 'cli');
    return orderId;
  },
  snapshot: async (t, _owner, _env, id) => ({
    row: await row(t, 'orders', id),
    history: await count(t, 'order_status_history WHERE order_id = $1', id),
    taxIds: await count(t, 'ein_tax_ids WHERE order_id = $1', id),
  }),
};

/** Integrator routes with a path parameter naming a tenant's resource (pattern without the environment prefix). */
const TENANT_RESOURCES: Record<string, TenantResource> = {
  '/users/:userIdOrEmail': user,
  '/companies/:companyIdOrSlug': company,
  '/companies/:companyIdOrSlug/compliance-calendar': company,
  '/documents/:documentId': document,
  '/events/:eventId': event,
  '/balance/top-ups/:topUpId': topUp,
  '/webhook-endpoints/:id': endpoint,
  '/webhook-endpoints/:id/rotate-secret': endpoint,
  '/webhook-endpoints/:id/test': endpoint,
  '/webhook-deliveries/:id': delivery,
  '/webhook-deliveries/:id/resend': delivery,
  '/test_helpers/orders/:orderId/advance': order,
  '/test_helpers/orders/:orderId/documents': order,
  '/orders/:orderId/ein-responsible-party': refusedEinOrder,
};

/** Integrator list routes whose query names a tenant's resource (a cursor); another organization's id answers 404. */
const QUERY_IDS: Array<{ path: string; param: string; resource: TenantResource }> = [
  {
    path: '/balance-transactions',
    param: 'startingAfter',
    resource: {
      create: async (t, owner, env) =>
        env === 'test'
          ? (await owner.api('POST', '/test_helpers/balance-credits', { amount: 1 })).json().id
          : (
              await t.admin('POST', `/organizations/${owner.organizationId}/balance-credits`, {
                environment: 'live',
                amount: 1,
              })
            ).json().id,
      snapshot: async (t, owner, env, id) => ({
        row: await row(t, 'ledger_entries', id),
        balance: (await owner.api('GET', '/organization', undefined, { env })).json().balance,
      }),
    },
  },
];

/** Integrator routes whose path parameter is no tenant's resource id, with the value used and why. */
const NOT_A_TENANT_ID: Record<string, { value: string; reason: string }> = {
  '/organization/prices/:type': {
    value: 'ein',
    reason: "a product type of the shared catalogue; the price row written is always the caller's own",
  },
  '/balance/statements/:month': {
    value: '2025-01',
    reason: "a calendar month; the statement read is always of the caller's own balance in the key's environment",
  },
};

/**
 * What one organization has in one environment, a row of every kind an integrator list shows: the ids of its rows
 * and a retail price of its own. Lists are checked against it (LIST_ROUTES).
 */
interface OwnerRows {
  userId: string;
  companyId: string;
  orderId: string;
  documentId: string;
  eventIds: string[];
  endpointId: string;
  deliveryIds: string[];
  ledgerEntryId: string;
  topUpId: string;
  deadlineIds: string[];
  /** A retail price set in this environment only (retail prices are per environment, TEN-6), whole dollars. */
  price: { type: string; retailAmount: number };
}

/** Every id of `o`, in one list, for looking them up in an answer. */
const idsOf = (o: OwnerRows) => [
  o.userId,
  o.companyId,
  o.orderId,
  o.documentId,
  ...o.eventIds,
  o.endpointId,
  ...o.deliveryIds,
  o.ledgerEntryId,
  o.topUpId,
  ...o.deadlineIds,
];

/** A list route: which of the owner's rows it shows the owner, and the query parameters that take an id. */
interface ListRoute {
  /** The owner's rows of this list (its own answer must show them all). */
  rows(o: OwnerRows): string[];
  /** Query parameters naming a row by id, each with the owner's id to pass. */
  idFilters: Record<string, (o: OwnerRows) => string>;
  /** The owner's rows a 200 answer shows; default: every id of the owner's rows that occurs in the body. */
  shows?(body: string, o: OwnerRows): string[];
}

const ownIdsIn = (body: string, o: OwnerRows) => idsOf(o).filter((id) => body.includes(id));

/** Integrator list routes (pattern without the environment prefix). */
const LIST_ROUTES: Record<string, ListRoute> = {
  '/users': { rows: (o) => [o.userId], idFilters: { startingAfter: (o) => o.userId } },
  '/companies': {
    rows: (o) => [o.companyId],
    idFilters: { startingAfter: (o) => o.companyId, userId: (o) => o.userId },
  },
  '/compliance-deadlines': { rows: (o) => o.deadlineIds, idFilters: { startingAfter: (o) => o.deadlineIds[0]! } },
  '/balance-transactions': { rows: (o) => [o.ledgerEntryId], idFilters: { startingAfter: (o) => o.ledgerEntryId } },
  '/balance/top-ups': { rows: (o) => [o.topUpId], idFilters: { startingAfter: (o) => o.topUpId } },
  '/documents': {
    rows: (o) => [o.documentId],
    idFilters: { startingAfter: (o) => o.documentId, companyId: (o) => o.companyId, orderId: (o) => o.orderId },
  },
  '/events': {
    rows: (o) => o.eventIds,
    idFilters: { startingAfter: (o) => o.eventIds[o.eventIds.length - 1]!, orderId: (o) => o.orderId },
  },
  '/webhook-endpoints': { rows: (o) => [o.endpointId], idFilters: { startingAfter: (o) => o.endpointId } },
  '/webhook-deliveries': {
    rows: (o) => o.deliveryIds,
    idFilters: {
      startingAfter: (o) => o.deliveryIds[0]!,
      endpointId: (o) => o.endpointId,
      eventId: (o) => o.eventIds[0]!,
    },
  },
  // Prices have no ids: the owner's row is its retail price of one product in this environment.
  '/organization/prices': {
    rows: () => ['retail price'],
    idFilters: {},
    shows: (body, o) =>
      (JSON.parse(body) as { data: Array<{ type: string; retailAmount: number | null }> }).data.some(
        (p) => p.type === o.price.type && p.retailAmount === o.price.retailAmount,
      )
        ? ['retail price']
        : [],
  },
};

/** Integrator GET routes without a path parameter that are no list of a tenant's rows, and why. */
const NOT_A_LIST: Record<string, string> = {
  '/organization': "the caller's own organization, found from the key alone (organization-settings.test.ts)",
  '/events/stream':
    "a stream, not a page; it sends only the key's own organization and environment's events (event-stream.test.ts)",
  '/balance/auto-recharge':
    "the caller's own organization's auto-recharge settings, found from the key alone (balance-auto-recharge.test.ts)",
};

/** Creates `owner`'s rows of every kind in `env` (a webhook endpoint first, so the events fan out to it). */
async function createOwnerRows(t: TestApp, owner: TestTenant, env: Environment): Promise<OwnerRows> {
  const tenant = { organizationId: owner.organizationId, environment: env };
  const endpoint = await owner.api(
    'POST',
    '/webhook-endpoints',
    { url: 'http://127.0.0.1:9/hooks', eventTypes: ['filing.status_changed', 'document.uploaded'] },
    { env },
  );
  expect(endpoint.statusCode, endpoint.body).toBe(201);
  // An LLC formed in Delaware (llcFields): its yearly tax is always within the deadlines' default 18 months.
  const { user, company } = await createCompany(owner, env);
  const { orderId } = await createOrderRow(t.ctx, tenant, { companyId: company.id, userId: user.id });
  const bytes = await (await PDFDocument.create()).save();
  const { document } = await storeDocument(
    t.ctx,
    null,
    { orderId, documentType: 'company', fileName: 'a.pdf', content: bytes },
    'cli',
  );
  const credit =
    env === 'test'
      ? await owner.api('POST', '/test_helpers/balance-credits', { amount: 1 })
      : await t.admin('POST', `/organizations/${owner.organizationId}/balance-credits`, {
          environment: 'live',
          amount: 1,
        });
  expect(credit.statusCode, credit.body).toBeLessThan(300);
  const price = { type: 'ein', retailAmount: env === 'live' ? 7101 : 7202 };
  const priced = await owner.api(
    'PUT',
    `/organization/prices/${price.type}`,
    { retailAmount: price.retailAmount },
    { env },
  );
  expect(priced.statusCode, priced.body).toBe(200);
  const ids = async (sql: string) =>
    (await t.ctx.pool.query<{ id: string }>(sql, [owner.organizationId, env])).rows.map((r) => r.id);
  const deadlines = await owner.api('GET', '/compliance-deadlines', undefined, { env });
  const o: OwnerRows = {
    userId: user.id,
    companyId: company.id,
    orderId,
    documentId: document.documentId,
    eventIds: await ids('SELECT id FROM events WHERE organization_id = $1 AND environment = $2 ORDER BY id'),
    endpointId: endpoint.json().id,
    deliveryIds: await ids(
      'SELECT id FROM webhook_deliveries WHERE organization_id = $1 AND environment = $2 ORDER BY id',
    ),
    ledgerEntryId: credit.json().id,
    topUpId: await topUp.create(t, owner, env),
    deadlineIds: deadlines.json().data.map((d: { id: string }) => d.id),
    price,
  };
  expect(o.eventIds.length, 'events of the owner').toBeGreaterThanOrEqual(2);
  expect(o.deliveryIds.length, 'webhook deliveries of the owner').toBeGreaterThanOrEqual(2);
  expect(o.deadlineIds.length, 'compliance deadlines of the owner').toBeGreaterThan(0);
  return o;
}

/** Request bodies valid enough for a route to get as far as looking its resource up (key: `METHOD pattern`). */
const BODIES: Record<string, unknown> = {
  'PATCH /companies/:companyIdOrSlug': { tradeName: 'Renamed' },
  'PATCH /webhook-endpoints/:id': { description: 'renamed' },
  'POST /test_helpers/orders/:orderId/advance': { filingStatus: 'pending' },
  'POST /test_helpers/orders/:orderId/documents': { documentType: 'company' },
  'PUT /organization/prices/:type': { retailAmount: 500 },
  'PUT /orders/:orderId/ein-responsible-party': {
    firstName: 'Ada',
    lastName: 'Lovelace',
    taxIdType: 'SSN',
    taxId: '123-45-6789',
    title: 'Managing Member',
  },
};

/** How a browser-facing route authenticates, and why it is not an API-key or operator-token route. */
type WebKind = 'public' | 'dashboard session' | 'console session' | 'portal session' | 'own credential';
const WEB_ROUTES: Array<{ pattern: RegExp; kind: WebKind; reason: string }> = [
  {
    pattern: /^\/(v1|test\/v1)\/openapi\.json$/,
    kind: 'public',
    reason: 'the published API description (openapi.test.ts)',
  },
  {
    pattern: /^\/docs(\/.*)?$/,
    kind: 'public',
    reason: 'the API reference pages, built from the published description',
  },
  {
    pattern: /^\/(healthz|readyz)$/,
    kind: 'public',
    reason: 'probes for load balancers; they reveal no tenant data (health-metrics.test.ts)',
  },
  {
    pattern: /^(\/dashboard\/|\/)assets\/:file$/,
    kind: 'public',
    reason: 'static stylesheets and scripts of the dashboard',
  },
  { pattern: /^\/console\/assets\/console\.css$/, kind: 'public', reason: 'the console stylesheet' },
  {
    pattern: /^(\/dashboard\/|\/)auth\/:token$/,
    kind: 'own credential',
    reason: "the magic link's single-use token is the credential (magic-links.test.ts)",
  },
  {
    pattern: /^\/files\/:documentId$/,
    kind: 'own credential',
    reason: 'a signed, expiring file link (FILE_URL_SECRET; documents.test.ts)',
  },
  {
    pattern: /^\/stripe\/webhook$/,
    kind: 'own credential',
    reason: "Stripe's signature on the raw body (stripe-checkout.test.ts)",
  },
  {
    pattern: /^\/console\/login$/,
    kind: 'public',
    reason: 'the operator sign-in form and its submission (console.test.ts)',
  },
  {
    pattern: /^\/console(\/.*)?$/,
    kind: 'console session',
    reason: 'operator pages behind a console session (console.test.ts)',
  },
  {
    pattern: /^\/portal\/(assets\/portal\.css|sign-in|password-reset|password-reset\/new)$/,
    kind: 'public',
    reason:
      'the partner portal stylesheet, sign-in and password-reset forms (portal-auth, portal-password-reset tests)',
  },
  {
    pattern: /^\/portal\/invitation$/,
    kind: 'own credential',
    reason: "the invitation's single-use token is the credential (portal-invitations.test.ts)",
  },
  {
    pattern: /^\/portal(\/.*)?$/,
    kind: 'portal session',
    reason:
      'partner portal pages behind a portal session; roles, tenants, environments and CSRF of every one in the portal suite (portal-security-suite.ts)',
  },
  {
    pattern:
      /^(\/dashboard(\/.*)?|\/|\/companies\/.*|\/checkout(\/.*)?|\/orders|\/orders\/:orderId\/responsible-party|\/documents\/:documentId\/download|\/sign-out)$/,
    kind: 'dashboard session',
    reason:
      "customer pages behind a dashboard session, at the default address or an organization's white-label host (dashboard.test.ts)",
  },
];

type Classified =
  | { kind: 'integrator'; env: Environment; route: RouteEntry; rel: string }
  | { kind: 'operator'; route: RouteEntry }
  | { kind: WebKind; route: RouteEntry; reason: string }
  | { kind: 'unclassified'; route: RouteEntry };

function classify(route: RouteEntry): Classified {
  const web = WEB_ROUTES.find((w) => w.pattern.test(route.path));
  if (web && web.kind === 'public' && /openapi\.json$/.test(route.path))
    return { kind: web.kind, route, reason: web.reason };
  for (const env of ['test', 'live'] as const) {
    if (route.path.startsWith(`${PREFIX[env]}/`))
      return { kind: 'integrator', env, route, rel: route.path.slice(PREFIX[env].length) };
  }
  if (route.path.startsWith('/admin/v1/') || route.path === '/metrics') return { kind: 'operator', route };
  if (web) return { kind: web.kind, route, reason: web.reason };
  return { kind: 'unclassified', route };
}

/**
 * What keeps the suite from covering `routes`: a route in no class, an integrator route whose path parameter has
 * neither a resource factory nor a reasoned exemption, or an integrator GET route without a path parameter that is
 * neither a checked list (LIST_ROUTES) nor exempted (NOT_A_LIST). Empty when every route is covered.
 */
export function coverageProblems(routes: RouteEntry[]): string[] {
  const problems: string[] = [];
  for (const c of routes.map(classify)) {
    const label = `${c.route.method} ${c.route.path}`;
    if (c.kind === 'unclassified') problems.push(`${label}: neither covered nor exempted`);
    else if (c.kind === 'integrator' && c.rel.includes(':') && !TENANT_RESOURCES[c.rel] && !NOT_A_TENANT_ID[c.rel]) {
      problems.push(`${label}: a path parameter with no resource factory nor reasoned exemption`);
    } else if (
      c.kind === 'integrator' &&
      c.route.method === 'GET' &&
      !c.rel.includes(':') &&
      !LIST_ROUTES[c.rel] &&
      NOT_A_LIST[c.rel] === undefined
    ) {
      problems.push(`${label}: a GET route without a path parameter that is neither a checked list nor exempted`);
    }
  }
  return problems;
}

/**
 * Runs the suite over every route of the app `app()` returns (a getter: the app is created in beforeAll).
 * `routes` is the app's route table, read once the app is built; pass the table of an app built at collection time.
 */
export function runSecuritySuite(opts: { app: () => TestApp; routes: RouteEntry[] }): void {
  const classified = opts.routes.map(classify);

  describe('security suite: the route table', () => {
    it('classifies every route the app serves (a new route must be covered or exempted here, with a reason)', () => {
      expect(
        coverageProblems(opts.routes),
        'routes the suite neither covers nor exempts (test/security-suite.ts)',
      ).toEqual([]);
      // The table is the whole app: the integrator API at both addresses, test helpers, and the admin API.
      const paths = new Set(opts.routes.map((r) => r.path));
      for (const p of [
        '/v1/companies',
        '/test/v1/companies',
        '/test/v1/test_helpers/balance-credits',
        '/admin/v1/organizations',
        '/admin/v1/state-fees/:state',
      ]) {
        expect(paths.has(p), p).toBe(true);
      }
      for (const q of QUERY_IDS)
        expect(paths.has(`/v1${q.path}`), `${q.path} (a list with an id in its query) is no route any more`).toBe(true);
      for (const rel of [...Object.keys(LIST_ROUTES), ...Object.keys(NOT_A_LIST)])
        expect(paths.has(`/v1${rel}`), `${rel} (a list or an exempted GET) is no route any more`).toBe(true);
    });
  });

  describe('security suite: every route', () => {
    let owner: TestTenant;
    let stranger: TestTenant;
    let revoked: TestTenant;
    // The lists' owner has only the rows createOwnerRows makes, so each fits on the first page of its lists.
    let listOwner: TestTenant;
    const listOwnerRows = new Map<Environment, Promise<OwnerRows>>();
    const rowsOf = (env: Environment) => {
      let rows = listOwnerRows.get(env);
      if (!rows) {
        rows = createOwnerRows(opts.app(), listOwner, env);
        listOwnerRows.set(env, rows);
      }
      return rows;
    };

    beforeAll(async () => {
      const t = opts.app();
      [owner, stranger, revoked, listOwner] = await Promise.all([
        t.newTenant('Owner'),
        t.newTenant('Stranger'),
        t.newTenant('Revoked'),
        t.newTenant('List owner'),
      ]);
      for (const env of ['live', 'test'] as const) {
        const res = await t.admin('DELETE', `/organizations/${revoked.organizationId}/api-keys/${revoked.keyIds[env]}`);
        expect(res.statusCode, 'revoking a key through the admin API').toBe(200);
      }
    });

    const inject = (method: string, url: string, headers: Record<string, string>, body?: unknown) =>
      opts.app().app.inject({
        method: method as InjectOptions['method'],
        url,
        payload: body as InjectOptions['payload'],
        headers,
      });

    const expect401 = (res: { statusCode: number; body: string; json: () => any }, what: string) => {
      expect(res.statusCode, `${what} (body: ${res.body.slice(0, 200)})`).toBe(401);
      expect(res.json(), what).toMatchObject({
        message: expect.any(String),
        code: expect.any(String),
        requestId: expect.any(String),
      });
    };

    for (const c of classified) {
      const label = `${c.route.method} ${c.route.path}`;
      if (c.kind === 'integrator') {
        const { env, rel, route } = c;
        const other: Environment = env === 'live' ? 'test' : 'live';
        const notId = NOT_A_TENANT_ID[rel];
        const url = (id = DUMMY_ID) => `${PREFIX[env]}${fill(rel, notId ? notId.value : id)}`;
        const body = BODIES[`${route.method} ${rel}`];

        it(`${label}: no key, a malformed key, an unknown key and a revoked key answer 401`, async () => {
          expect401(await inject(route.method, url(), {}, body), 'no key');
          expect401(await inject(route.method, url(), { 'x-api-key': 'not-a-key' }, body), 'malformed key');
          expect401(
            await inject(
              route.method,
              url(),
              { 'x-api-key': `sk_${env}_${randomBytes(32).toString('base64url')}` },
              body,
            ),
            'unknown key',
          );
          expect401(await inject(route.method, url(), { 'x-api-key': revoked.keys[env] }, body), 'revoked key');
        });

        it(`${label}: a key of the other environment answers 401 naming the right base address`, async () => {
          const res = await inject(route.method, url(), { 'x-api-key': owner.keys[other] }, body);
          expect401(res, `${other} key`);
          const { config } = opts.app().ctx;
          expect(res.json().message).toContain(other === 'live' ? config.liveBaseUrl : config.testBaseUrl);
        });

        const resource = TENANT_RESOURCES[rel];
        if (resource) {
          it(`${label}: another tenant's id answers 404 and leaves the resource unchanged`, async () => {
            const t = opts.app();
            // Fresh resources per route, so a DELETE route cannot hide what the next route would see.
            const id = await resource.create(t, owner, env);
            const before = await resource.snapshot(t, owner, env, id);
            const foreign = await inject(route.method, url(id), { 'x-api-key': stranger.keys[env] }, body);
            expect(foreign.statusCode, `another organization's key (body: ${foreign.body.slice(0, 200)})`).toBe(404);
            expect(foreign.json().code).toBe('not_found');
            expect(
              await resource.snapshot(t, owner, env, id),
              "the owner's resource after another organization's call",
            ).toEqual(before);
            // The same organization's other environment: live and test data never mix. (A test helper, served at the
            // test address only, is asked there for a live resource.)
            const otherEnvId = await resource.create(t, owner, other);
            const otherBefore = await resource.snapshot(t, owner, other, otherEnvId);
            const crossed = await inject(route.method, url(otherEnvId), { 'x-api-key': owner.keys[env] }, body);
            expect(crossed.statusCode, `a ${other} id with the same organization's ${env} key`).toBe(404);
            expect(
              await resource.snapshot(t, owner, other, otherEnvId),
              `the ${other} resource after the ${env} call`,
            ).toEqual(otherBefore);
            // Control: the owner reaches its own resource, so the 404s above come from tenancy, not from the request.
            const own = await inject(route.method, url(id), { 'x-api-key': owner.keys[env] }, body);
            expect(own.statusCode, `the owner's own id (body: ${own.body.slice(0, 200)})`).toBeLessThan(400);
          });
        }
        const list = route.method === 'GET' ? LIST_ROUTES[rel] : undefined;
        if (list) {
          it(`${label}: another organization and the owner's ${other} key never see the owner's rows, unfiltered or filtered by the owner's ids`, async () => {
            const o = await rowsOf(env);
            const shows = (body: string) => (list.shows ?? ownIdsIn)(body, o);
            const queries: Array<Record<string, string>> = [
              {},
              ...Object.entries(list.idFilters).map(([param, id]) => ({ [param]: id(o) })),
            ];
            const get = (prefix: string, key: string, query: Record<string, string>) =>
              inject('GET', `${prefix}${rel}?${new URLSearchParams(query)}`, { 'x-api-key': key });
            // Control: the owner sees its rows, and each filter (but the cursor) still shows some of them.
            const own = await get(PREFIX[env], listOwner.keys[env], {});
            expect(own.statusCode, own.body.slice(0, 200)).toBe(200);
            expect(shows(own.body), "the owner's own list").toEqual(expect.arrayContaining(list.rows(o)));
            for (const query of queries.slice(1)) {
              const res = await get(PREFIX[env], listOwner.keys[env], query);
              expect(res.statusCode, `the owner with ${JSON.stringify(query)}: ${res.body.slice(0, 200)}`).toBe(200);
              if (!('startingAfter' in query))
                expect(shows(res.body).length, `the owner with ${JSON.stringify(query)}`).toBeGreaterThan(0);
            }
            const readers = [
              { who: 'another organization', prefix: PREFIX[env], key: stranger.keys[env] },
              { who: `the owner's ${other} key`, prefix: PREFIX[other], key: listOwner.keys[other] },
            ];
            for (const { who, prefix, key } of readers) {
              for (const query of queries) {
                const res = await get(prefix, key, query);
                const what = `${who} with ${JSON.stringify(query)} (body: ${res.body.slice(0, 200)})`;
                expect([200, 404], what).toContain(res.statusCode);
                if (res.statusCode === 404) expect(res.json().code, what).toBe('not_found');
                else expect(shows(res.body), what).toEqual([]);
              }
            }
          });
        }
        for (const q of QUERY_IDS.filter((x) => x.path === rel && route.method === 'GET')) {
          it(`${label}?${q.param}=: another tenant's id answers 404 and leaves the resource unchanged`, async () => {
            const t = opts.app();
            const id = await q.resource.create(t, owner, env);
            const before = await q.resource.snapshot(t, owner, env, id);
            const at = (key: string) =>
              inject('GET', `${PREFIX[env]}${rel}?${q.param}=${encodeURIComponent(id)}`, { 'x-api-key': key });
            const foreign = await at(stranger.keys[env]);
            expect(foreign.statusCode, foreign.body.slice(0, 200)).toBe(404);
            expect(foreign.json().code).toBe('not_found');
            expect(await q.resource.snapshot(t, owner, env, id)).toEqual(before);
            expect((await at(owner.keys[env])).statusCode, "the owner's own id").toBe(200);
          });
        }
      } else if (c.kind === 'operator') {
        it(`${label}: no operator token, a wrong one and an integrator API key answer 401`, async () => {
          const url = fill(c.route.path, DUMMY_ID);
          expect((await inject(c.route.method, url, {})).statusCode, 'no token').toBe(401);
          expect(
            (await inject(c.route.method, url, { authorization: `Bearer ${randomBytes(24).toString('hex')}` }))
              .statusCode,
            'wrong token',
          ).toBe(401);
          expect(
            (
              await inject(c.route.method, url, {
                authorization: `Bearer ${owner.keys.live}`,
                'x-api-key': owner.keys.live,
              })
            ).statusCode,
            'an integrator key',
          ).toBe(401);
        });
      } else if (
        c.kind === 'dashboard session' ||
        c.kind === 'console session' ||
        c.kind === 'portal session' ||
        c.kind === 'own credential'
      ) {
        it(`${label}: answers nothing successful without ${c.kind === 'own credential' ? 'its credential' : `a ${c.kind}`}`, async () => {
          const res = await inject(
            c.route.method,
            fill(c.route.path, DUMMY_ID),
            {},
            c.route.method === 'POST' ? {} : undefined,
          );
          expect(res.statusCode, `${c.reason} (body: ${res.body.slice(0, 200)})`).toBeGreaterThanOrEqual(300);
          expect(res.headers['set-cookie'] ?? '', 'no session handed out').not.toMatch(/session=[^;]{8,}/);
        });
      }
    }
  });
}

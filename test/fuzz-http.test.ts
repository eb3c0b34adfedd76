import fc from 'fast-check';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOperator } from '../src/modules/console/operators.service.js';
import { DUMMY_HASH } from '../src/modules/console/password.js';
import { createSession, sessionCookieValue } from '../src/modules/console/sessions.js';
import { newId } from '../src/lib/ids.js';
import { seal } from '../src/lib/secret-box.js';
import { addMembership, insertMember } from '../src/modules/portal/members.repo.js';
import {
  createSession as createPortalSession,
  sessionCookieValue as portalSessionCookie,
} from '../src/modules/portal/sessions.js';
import { fakeDns, setVerifiedDomain } from './domain-helpers.js';
import { MEMBER_TOTP_SECRET } from './portal-helpers.js';
import { createCompany } from './factories.js';
import {
  anything,
  encodePath,
  FUZZ_SEED,
  type Fixtures,
  makeFixtures,
  nastyString,
  type Operation,
  openApiArbitraries,
  operationsOf,
  toInject,
} from './fuzz-requests.js';
import { createTestApp, OPERATOR_TOKEN, type TestApp, type TestTenant } from './harness.js';
import { type Exchange, exchange, request, type Transport, type WireRequest } from './raw-http.js';

/*
 * Fuzzing over a listening socket (OPS-7): hostile requests to every surface the service answers on (the integrator
 * API from its OpenAPI documents, the admin API, the console's pages and forms with multipart uploads, the partner
 * portal's pages and forms, the dashboard on its own host and on a white-label domain, magic links, /docs, /metrics,
 * probes, signed file links, the Stripe
 * webhook), on the right host and on wrong ones, sent whole or stalling: bodies that stop half-way, chunked bodies
 * without their end, `Expect: 100-continue` never followed by the body, bodies trickled in, headers never finished,
 * clients that leave, bytes that are not HTTP. Every request must be answered within 15 s of the client's last byte,
 * and none with a 5xx but where a 503 is the designed answer (a DNS server that does not answer, a console sign-in
 * while the password checks are saturated). The rate limits are raised (test/harness.ts) so requests reach the code;
 * every other setting is the default. DNS never answers here, like an unreachable server. Deterministic by seed like
 * test/fuzz.test.ts: FUZZ_SEED (or `random`), and FUZZ_HTTP_REQUESTS for the count.
 */

const TOTAL_REQUESTS = Number(process.env.FUZZ_HTTP_REQUESTS ?? 3000);
/** OPS-7: the longest a request may wait for its answer, counted from the client's last byte. */
const ANSWER_WITHIN_MS = 15_000;
/** Requests in flight that are answered as soon as the service can; stalling ones run beside them. */
const CONCURRENCY = 6;
const STALLING_CONCURRENCY = 40;

/** A host per site: the base addresses are configured on these, and requests connect to 127.0.0.1 with them. */
const HOST = {
  api: 'api.fuzz.test',
  dashboard: 'app.fuzz.test',
  console: 'console.fuzz.test',
  portal: 'partners.fuzz.test',
  brand: 'portal.fuzz-brand.test',
  stranger: 'elsewhere.fuzz.test',
} as const;

let t: TestApp;
let port: number;
let operations: Operation[];
let arbitraries: ReturnType<typeof openApiArbitraries>;
let fixtures: Fixtures;
let web: WebFixtures;

beforeAll(async () => {
  t = await createTestApp({
    LIVE_BASE_URL: `http://${HOST.api}/v1`,
    TEST_BASE_URL: `http://${HOST.api}/test/v1`,
    DASHBOARD_BASE_URL: `http://${HOST.dashboard}/dashboard`,
    CONSOLE_BASE_URL: `http://${HOST.console}/console`,
    PORTAL_BASE_URL: `http://${HOST.portal}/portal`,
  });
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  port = (t.app.server.address() as AddressInfo).port;
  const [live, test] = await Promise.all(
    ['/v1/openapi.json', '/test/v1/openapi.json'].map(
      async (path) => JSON.parse((await request(port, { path, host: HOST.api })).body) as any,
    ),
  );
  operations = operationsOf(live, test);
  arbitraries = openApiArbitraries(live);
  fixtures = await makeFixtures(t);
  web = await makeWebFixtures(t, fixtures);
}, 180_000);
afterAll(() => t?.close());

// ---------- the web surfaces' fixtures: sessions, links, and the forms their pages hold ----------

/** A form found on a page: where it posts, how, and its fields with the values the page gave them. */
interface Form {
  host: string;
  cookie: string;
  action: string;
  multipart: boolean;
  fields: Array<[string, string]>;
  files: string[];
}

interface WebFixtures {
  consoleCookie: string;
  loginForm: { cookie: string; csrf: string };
  operator: { email: string; password: string };
  dashboardCookie: string;
  brandCookie: string;
  /** Unused magic links (path and host), each good for one sign-in. */
  links: Array<{ host: string; path: string }>;
  pages: Array<{ host: string; cookie: string; path: string }>;
  forms: Form[];
  victim: TestTenant;
  documentLink: string;
}

async function makeWebFixtures(app: TestApp, f: Fixtures): Promise<WebFixtures> {
  // A white-label organization (verified while DNS still answered), and one whose settings the console may change.
  const brand = await app.newTenant('Brand Co');
  await setVerifiedDomain(app, brand, HOST.brand, fakeDns(app));
  const victim = await app.newTenant('Console Target Co');
  // From now on no DNS lookup is ever answered, as with an unreachable server.
  app.ctx.resolveTxt = () => new Promise(() => undefined);

  // An operator the fuzz's sign-ins may get right; the console session it fuzzes with is made directly, so the
  // setup does not hang on sign-in (AUTH-8 has its own tests).
  const operator = { email: 'fuzz.operator@example.com', password: 'correct horse battery staple' };
  const { operator: created } = await createOperator(app.ctx.pool, { ...operator, name: 'Fuzz Operator' });
  const session = await createSession(app.ctx.pool, created.id);
  const consoleCookie = `fcs_console=${sessionCookieValue(app.ctx.secrets.fileUrlSecret, session.sessionId)}`;
  const loginPage = await request(port, { path: '/console/login', host: HOST.console });
  const loginForm = { cookie: cookiesOf(loginPage), csrf: csrfOf(loginPage.body, '_csrf') };

  const userId = f.ids.test.user[0]!;
  const companyId = f.ids.test.company[0]!;
  const mint = async (tenant: TestTenant, body: Record<string, string>, env: 'live' | 'test') => {
    const res = await tenant.api('POST', '/auth/magic-link', body, { env });
    if (res.statusCode !== 201) throw new Error(`magic link: ${res.statusCode} ${res.body}`);
    const url = new URL(res.json().magicLink as string);
    return { host: url.hostname, path: url.pathname };
  };
  const openLink = async (link: { host: string; path: string }) => {
    const res = await request(port, { path: link.path, host: link.host });
    if (res.status !== 303) throw new Error(`magic link open: ${res.status}`);
    return cookiesOf(res);
  };
  const dashboardCookie = await openLink(await mint(f.tenant, { userId, companyId }, 'test'));
  const brandUser = await createCompany(brand, 'live');
  const brandCookie = await openLink(
    await mint(brand, { userId: brandUser.user.id, companyId: brandUser.company.id }, 'live'),
  );
  const links = [];
  for (let i = 0; i < 6; i++) links.push(await mint(f.tenant, { userId }, 'test'));
  for (let i = 0; i < 3; i++) links.push(await mint(brand, { userId: brandUser.user.id }, 'live'));

  const orderId = f.ids.test.order[0]!;
  const documentId = f.ids.test.document[0]!;
  const document = await f.tenant.api('GET', `/documents/${documentId}`);
  const documentLink = new URL(document.json().fileUrl as string);
  // A partner portal member of the console's target organization, signed in (its password never matches).
  const member = await insertMember(app.ctx.pool, {
    id: newId('member'),
    email: 'fuzz.member@example.com',
    name: 'Fuzz Member',
    passwordHash: DUMMY_HASH,
  });
  await addMembership(app.ctx.pool, victim.organizationId, member!.id, 'owner');
  // With a second factor, proved just now, so that every page and form is reached rather than its enrolment or its
  // step-up (PORTAL-5, PORTAL-10).
  await app.ctx.pool.query('UPDATE members SET totp_sealed = $2, totp_enabled_at = now() WHERE id = $1', [
    member!.id,
    seal(app.ctx.secrets.dataKeys, MEMBER_TOTP_SECRET, `member-totp:${member!.id}`),
  ]);
  const portalSession = await createPortalSession(app.ctx.pool, {
    memberId: member!.id,
    pending: false,
    clientAddress: '127.0.0.1',
    userAgent: 'fuzz',
  });
  await app.ctx.pool.query('UPDATE portal_sessions SET second_factor_at = now() WHERE member_id = $1', [member!.id]);
  const portalCookie = `fcs_portal=${portalSessionCookie(app.ctx.secrets.fileUrlSecret, portalSession)}`;
  const portalPages = [
    '/portal/',
    '/portal/members',
    '/portal/sessions',
    '/portal/account/two-factor',
    '/portal/audit-log',
    '/portal/orders',
    `/portal/orders/${orderId}`,
    '/portal/companies',
    '/portal/users',
    '/portal/balance',
    '/portal/balance/ledger.csv',
    '/portal/balance/auto-recharge',
    '/portal/prices',
    '/portal/branding',
    '/portal/keys',
    '/portal/webhooks',
    '/portal/deliveries',
    '/portal/events',
    '/portal/request-log',
  ];
  // Signed out: the sign-in, password reset and invitation forms.
  const portalPublicPages = ['/portal/sign-in', '/portal/password-reset', '/portal/invitation?token=x'];
  const consolePages = [
    '/console/queue',
    `/console/orders/${orderId}`,
    `/console/orders/${f.ids.live.order[0]}`,
    `/console/orders/${orderId}/tax-id`,
    '/console/organizations',
    `/console/organizations/${victim.organizationId}`,
    '/console/webhooks',
    `/console/webhooks/${f.tenant.organizationId}`,
    '/console/prices',
    `/console/prices?organizationId=${victim.organizationId}`,
    '/console/fees',
    '/console/fees/DE',
    '/console/deadlines',
    '/console/audit-log',
  ];
  const dashboardPages = [
    '/dashboard/',
    `/dashboard/companies/${companyId}`,
    '/dashboard/checkout',
    '/dashboard/checkout/formation?tier=1',
    `/dashboard/companies/${companyId}/checkout`,
    '/dashboard/orders',
    `/dashboard/orders/${orderId}/responsible-party`,
  ];
  const brandPages = [
    '/',
    `/companies/${brandUser.company.id}`,
    `/companies/${brandUser.company.id}/checkout`,
    '/checkout',
    '/checkout/formation?tier=2',
    '/orders',
  ];
  const pages = [
    ...consolePages.map((path) => ({ host: HOST.console, cookie: consoleCookie, path })),
    ...dashboardPages.map((path) => ({ host: HOST.dashboard, cookie: dashboardCookie, path })),
    ...brandPages.map((path) => ({ host: HOST.brand, cookie: brandCookie, path })),
    ...portalPages.map((path) => ({ host: HOST.portal, cookie: portalCookie, path })),
    ...portalPublicPages.map((path) => ({ host: HOST.portal, cookie: '', path })),
  ];
  // Each product's form page, as the companies' checkout pages link them.
  for (const page of pages.filter((p) => p.path.endsWith('/checkout') && p.path.includes('/companies/')))
    for (const path of (await linksOf(page)).filter((l) => /\/checkout\/[a-z_-]+$/.test(l)))
      pages.push({ ...page, path });
  const forms: Form[] = [];
  for (const page of pages) {
    const res = await request(port, { path: page.path, host: page.host, headers: { cookie: page.cookie } });
    // A form's own cookie (the CSRF nonce of a sign-in form) goes with it.
    const cookie = [page.cookie, cookiesOf(res)].filter(Boolean).join('; ');
    forms.push(...formsOf(res.body, { ...page, cookie }));
  }
  // Signing out would end the sessions the fuzz signs in with: those forms are posted without a valid session.
  return {
    consoleCookie,
    loginForm,
    operator,
    dashboardCookie,
    brandCookie,
    links,
    pages,
    forms,
    victim,
    documentLink: documentLink.pathname + documentLink.search,
  };
}

function cookiesOf(page: { headers: Record<string, unknown> }): string {
  const set = ([] as string[]).concat((page.headers['set-cookie'] as string[] | undefined) ?? []);
  return set
    .map((c) => c.split(';')[0]!)
    .filter((pair) => !pair.endsWith('='))
    .join('; ');
}

function csrfOf(html: string, name: string): string {
  const m = new RegExp(`name="${name}" value="([^"]+)"`).exec(html);
  if (!m) throw new Error(`no ${name} in page`);
  return m[1]!;
}

async function linksOf(page: { host: string; cookie: string; path: string }): Promise<string[]> {
  const res = await request(port, { path: page.path, host: page.host, headers: { cookie: page.cookie } });
  return [...res.body.matchAll(/href="(\/[^"#]*)"/g)].map((m) => unescapeHtml(m[1]!));
}

function unescapeHtml(s: string): string {
  return s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/** The POST forms of a page: action, encoding, named fields (a select's first option, a box's value) and file inputs. */
function formsOf(html: string, page: { host: string; cookie: string; path: string }): Form[] {
  const forms: Form[] = [];
  for (const m of html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/gi)) {
    const attrs = m[1]!;
    if (!/method="post"/i.test(attrs)) continue;
    const action = unescapeHtml(/action="([^"]*)"/i.exec(attrs)?.[1] ?? page.path);
    const fields: Array<[string, string]> = [];
    const files: string[] = [];
    const inner = m[2]!;
    for (const input of inner.matchAll(/<(input|select|textarea)\b([^>]*)>/gi)) {
      const name = /name="([^"]*)"/.exec(input[2]!)?.[1];
      if (!name) continue;
      const type = /type="([^"]*)"/.exec(input[2]!)?.[1];
      if (type === 'file') {
        files.push(name);
        continue;
      }
      const after = inner.slice(input.index! + input[0].length);
      const value =
        input[1]!.toLowerCase() === 'select'
          ? (/<option[^>]*value="([^"]*)"/.exec(after.slice(0, after.indexOf('</select>')))?.[1] ?? '')
          : (/value="([^"]*)"/.exec(input[2]!)?.[1] ?? (type === 'checkbox' ? 'on' : 'x'));
      fields.push([unescapeHtml(name), unescapeHtml(value)]);
    }
    forms.push({
      host: page.host,
      cookie: page.cookie,
      action,
      multipart: /multipart\/form-data/i.test(attrs),
      fields,
      files,
    });
  }
  return forms;
}

// ---------- generation ----------

/** One generated request: what it is for (a route pattern), what is written, and how. */
interface Item {
  label: string;
  wire: WireRequest;
  how: Transport;
  /** 503 is this route's designed answer under the conditions of the run (DNS silent, sign-ins saturated). */
  may503?: boolean;
}

type Wire = Omit<Item, 'how'>;

/** `value` `weight` times out of `weight + 1`, else what `otherwise` gives. */
const usually = <T>(value: T, weight: number, otherwise: fc.Arbitrary<T>): fc.Arbitrary<T> =>
  fc.oneof({ weight, arbitrary: fc.constant(value) }, { weight: 1, arbitrary: otherwise });

/** A host for a request meant for `right`: nearly always it, else another site's, a stranger's, none, odd forms. */
const hostFor = (right: string) =>
  fc.oneof(
    { weight: 30, arbitrary: fc.constant<string | null>(right) },
    {
      weight: 2,
      arbitrary: fc.constantFrom<string | null>(
        HOST.api,
        HOST.console,
        HOST.dashboard,
        HOST.brand,
        HOST.stranger,
        `${right.toUpperCase()}:8080`,
        '127.0.0.1',
        'localhost',
        '[::1]:3000',
        null,
        '',
        'a b',
        'x'.repeat(300),
      ),
    },
  );

const fuzzText = fc.oneof(
  { weight: 2, arbitrary: nastyString },
  { weight: 2, arbitrary: fc.string({ maxLength: 30 }) },
  { weight: 1, arbitrary: fc.constantFrom('0', '-1', '1e309', '99999999999', '2024-02-30', 'DE', 'yes', 'on') },
);

/**
 * A form value: as the page gave it most of the time, else hostile. The page's own tokens (`_csrf`, a checkout
 * form's `_checkout` and `_total`) are kept but rarely, so that most posts get past them to the form's handler.
 */
const formValue = (name: string, given: string) =>
  fc.oneof(
    { weight: name.startsWith('_') ? 40 : 5, arbitrary: fc.constant(given) },
    { weight: 2, arbitrary: fuzzText },
  );

/** url-encoded like a browser would, lone surrogates as the invalid bytes a careless client sends. */
const urlEncoded = (fields: Array<[string, string]>) =>
  fields.map(([k, v]) => `${encodePath(k)}=${encodePath(v)}`).join('&');

const PDF = Buffer.from('%PDF-1.4\n1 0 obj<</Type/Catalog>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n');
const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');

/** A file part's content, name and type: valid documents, garbage, empty, large, hostile names. */
const filePart = fc.record({
  bytes: fc.oneof(
    fc.constant(PDF),
    fc.constant(PNG),
    fc.constant(Buffer.alloc(0)),
    fc.uint8Array({ maxLength: 200 }).map((a) => Buffer.from(a)),
    fc.constant(Buffer.concat([PDF, Buffer.alloc(300_000, 0x20)])),
  ),
  filename: fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom('articles.pdf', 'scan.png', 'doc') },
    { weight: 2, arbitrary: nastyString.filter((s) => !/[\r\n"]/.test(s)) },
  ),
  type: fc.constantFrom('application/pdf', 'image/png', 'text/plain', 'application/octet-stream', 'x/'),
});

type FilePart = { bytes: Buffer; filename: string; type: string };

function multipartBody(boundary: string, fields: Array<[string, string]>, files: Array<[string, FilePart]>): Buffer {
  const parts: Buffer[] = [];
  for (const [name, value] of fields)
    parts.push(
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`, 'utf8'),
    );
  for (const [name, f] of files)
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="${f.filename}"\r\nContent-Type: ${f.type}\r\n\r\n`,
        'utf8',
      ),
      f.bytes,
      Buffer.from('\r\n'),
    );
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(parts);
}

/** Ways a multipart body goes wrong: each turns a well-formed body (and its boundary) into a broken one. */
const MULTIPART_DAMAGE: Array<(body: Buffer, boundary: string) => { body: Buffer; contentType: string }> = [
  (body, b) => ({ body, contentType: `multipart/form-data; boundary=${b}` }),
  (body) => ({ body, contentType: 'multipart/form-data' }),
  (body) => ({ body, contentType: 'multipart/form-data; boundary=other' }),
  (body, b) => ({
    body: body.subarray(0, Math.floor(body.length / 2)),
    contentType: `multipart/form-data; boundary=${b}`,
  }),
  (body, b) => ({
    body: Buffer.from(body.toString('latin1').replace(/--\r\n$/, ''), 'latin1'),
    contentType: `multipart/form-data; boundary=${b}`,
  }),
  (_body, b) => ({
    body: Buffer.from(`--${b}\r\nContent-Dispo\u0000sition: nonsense\r\n\r\nvalue\r\n--${b}--\r\n`),
    contentType: `multipart/form-data; boundary=${b}`,
  }),
  (_body, b) => ({
    body: Buffer.from(
      `--${b}\r\nContent-Disposition: form-data; name="json"\r\nContent-Type: application/json\r\n\r\n{not json\r\n--${b}--\r\n`,
    ),
    contentType: `multipart/form-data; boundary=${b}`,
  }),
  (_body, b) => ({
    body: Buffer.from(
      `${Array.from({ length: 30 }, (_, i) => `--${b}\r\nContent-Disposition: form-data; name="f${i}"\r\n\r\nv\r\n`).join('')}--${b}--\r\n`,
    ),
    contentType: `multipart/form-data; boundary=${b}`,
  }),
  (_body, b) => ({
    body: Buffer.from(
      `--${b}\r\nContent-Disposition: form-data; name="__proto__"\r\n\r\nx\r\n--${b}\r\nContent-Disposition: form-data; name="a"; filename="a.pdf"\r\n\r\n%PDF\r\n--${b}\r\nContent-Disposition: form-data; name="b"; filename="b.pdf"\r\n\r\n%PDF\r\n--${b}--\r\n`,
    ),
    contentType: `multipart/form-data; boundary=${b}`,
  }),
];

/** A POST of one of the pages' forms: fields kept or made hostile, some left out or added, sent as the page says or not. */
function formPost(form: Form): fc.Arbitrary<Wire> {
  // Never with the session the fuzz signs in with: signing out, or a portal member revoking its own sessions.
  const signsOut = /\/(logout|sign-out)$|^\/portal\/sessions\//.test(form.action);
  return fc
    .record({
      values: fc.tuple(...form.fields.map(([k, v]) => formValue(k, v))),
      drop: fc.option(fc.nat({ max: Math.max(0, form.fields.length - 1) }), { freq: 6 }),
      extra: fc.option(fc.tuple(fuzzText, fuzzText), { freq: 6 }),
      csrf: usually('kept', 12, fc.constant('gone')),
      cookie: usually('session', 12, fc.constantFrom('none', 'garbage')),
      encoding: usually('as-page', 8, fc.constant('switched')),
      files: fc.array(filePart, { minLength: form.files.length ? 1 : 0, maxLength: form.files.length ? 1 : 0 }),
      damage: usually(0, 3, fc.nat({ max: MULTIPART_DAMAGE.length - 1 })),
      host: hostFor(form.host),
      boundary: fc.constantFrom('----fuzzboundary', 'x', `${'b'.repeat(70)}`),
    })
    .map((g) => {
      let fields = form.fields.map(([k], i): [string, string] => [k, g.values[i]!]);
      if (g.csrf === 'gone' || signsOut) fields = fields.filter(([k]) => k !== '_csrf');
      if (g.drop !== null) fields = fields.filter((_, i) => i !== g.drop);
      if (g.extra) fields.push(g.extra);
      const cookie =
        g.cookie === 'session' && !signsOut
          ? form.cookie
          : g.cookie === 'garbage'
            ? 'fcs_console=x; fcs_dashboard=y'
            : '';
      const multipart = g.encoding === 'as-page' ? form.multipart : !form.multipart;
      const headers: Record<string, string> = cookie ? { cookie } : {};
      let body: Buffer;
      if (multipart) {
        const damaged = MULTIPART_DAMAGE[g.damage]!(
          multipartBody(
            g.boundary,
            fields,
            g.files.map((f, i): [string, FilePart] => [form.files[i] ?? 'file', f]),
          ),
          g.boundary,
        );
        body = damaged.body;
        headers['content-type'] = damaged.contentType;
      } else {
        body = Buffer.from(urlEncoded(fields), 'latin1');
        headers['content-type'] = 'application/x-www-form-urlencoded';
      }
      return {
        label: `POST ${routeOf(form.action)}${multipart ? ' (multipart)' : ''}`,
        wire: { method: 'POST', target: form.action, host: g.host, headers, body },
        may503: /\/domain\/verify$/.test(form.action),
      };
    });
}

/** The route pattern of a path, for reports: ids and other variable segments as `:id`. */
function routeOf(path: string): string {
  return (
    path
      .split('?')[0]!
      .replace(/\/(org|user|comp|order|doc|evt|we|wd|key|op|txn|ordgrp|chk|mem|ps)_[0-9a-z]+/g, '/:id')
      .replace(/\/auth\/[^/]+$/, '/auth/:token') || '/'
  );
}

/** GETs (and a few HEADs) of the pages, signed in or not, with hostile path segments and query strings. */
function pageGet(): fc.Arbitrary<Wire> {
  return fc
    .record({
      page: fc.constantFrom(...web.pages),
      mutate: usually<string | null>(null, 3, nastyString),
      where: fc.constantFrom<'segment' | 'query'>('segment', 'query'),
      cookie: usually(true, 10, fc.constant(false)),
      method: usually('GET', 10, fc.constant('HEAD')),
    })
    .chain((g) =>
      hostFor(g.page.host).map((host) => {
        let target = g.page.path;
        if (g.mutate !== null) {
          const [path, query] = target.split('?');
          target =
            g.where === 'segment'
              ? `${path!.replace(/\/[^/]*$/, '')}/${encodePath(g.mutate)}${query ? `?${query}` : ''}`
              : `${path}?${query ? `${query}&` : ''}next=${encodePath(g.mutate)}&after=${encodePath(g.mutate)}`;
        }
        return {
          label: `${g.method} ${routeOf(g.page.path)}`,
          wire: {
            method: g.method,
            target,
            host,
            headers: (g.cookie ? { cookie: g.page.cookie } : {}) as Record<string, string>,
          },
        };
      }),
    );
}

/** Console sign-ins: right or wrong passwords, forms without their token, an unknown e-mail. */
function consoleSignIn(): fc.Arbitrary<Wire> {
  return fc
    .record({
      email: fc.oneof(fc.constant(web.operator.email), fuzzText),
      password: fc.oneof(fc.constant(web.operator.password), fuzzText),
      csrf: usually(web.loginForm.csrf, 5, fuzzText),
      next: fc.oneof(fc.constant('/console/queue'), fuzzText),
    })
    .map((g) => ({
      label: 'POST /console/login',
      wire: {
        method: 'POST',
        target: '/console/login',
        host: HOST.console,
        headers: { cookie: web.loginForm.cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: Buffer.from(
          urlEncoded([
            ['_csrf', g.csrf],
            ['email', g.email],
            ['password', g.password],
            ['next', g.next],
          ]),
          'latin1',
        ),
      },
      may503: true,
    }));
}

/** Magic links: unused ones (each signs in once, then is spent), spent or made-up tokens, HEAD probes. */
function magicLinkOpen(): fc.Arbitrary<Wire> {
  return fc
    .record({
      link: fc.constantFrom(...web.links),
      token: usually<string | null>(null, 2, nastyString),
      method: usually('GET', 5, fc.constant('HEAD')),
    })
    .chain((g) =>
      hostFor(g.link.host).map((host) => ({
        label: `${g.method} ${routeOf(g.link.path)}`,
        wire: {
          method: g.method,
          target: g.token === null ? g.link.path : g.link.path.replace(/[^/]+$/, encodePath(g.token)),
          host,
          headers: {},
        },
      })),
    );
}

/** /docs and its files, /metrics with and without the operator token, probes, OpenAPI documents, file links. */
function plainGet(): fc.Arbitrary<Wire> {
  const paths = [
    '/docs',
    '/docs/',
    '/docs/json',
    '/docs/yaml',
    '/docs/static/index.html',
    '/docs/static/swagger-initializer.js',
    '/docs/static/swagger-ui.css',
    '/docs/static/%2e%2e/%2e%2e/package.json',
    '/metrics',
    '/healthz',
    '/readyz',
    '/v1/openapi.json',
    '/test/v1/openapi.json',
    '/dashboard/assets/dashboard.css',
    '/console/assets/console.css',
    '/assets/dashboard.js',
    web.documentLink,
    web.documentLink.replace(/signature=[^&]+/, 'signature=0'),
    '/files/doc_x?expires=1&signature=x',
  ];
  return fc
    .record({
      path: fc.constantFrom(...paths),
      suffix: usually('', 6, nastyString),
      auth: fc.constantFrom(`Bearer ${OPERATOR_TOKEN}`, 'Bearer wrong', ''),
      method: fc.constantFrom('GET', 'GET', 'HEAD'),
    })
    .chain((g) =>
      hostFor(
        g.path.startsWith('/dashboard') ? HOST.dashboard : g.path.startsWith('/console') ? HOST.console : HOST.api,
      ).map((host) => ({
        label: `${g.method} ${routeOf(g.path)}`,
        wire: {
          method: g.method,
          target: g.suffix ? `${g.path.split('?')[0]}/${encodePath(g.suffix)}` : g.path,
          host,
          headers: (g.auth ? { authorization: g.auth } : {}) as Record<string, string>,
        },
      })),
    );
}

/** The admin API with the operator token (or not): every route, ids real or not, bodies of any shape. */
function adminCall(): fc.Arbitrary<Wire> {
  const org = web.victim.organizationId;
  const order = fixtures.ids.test.order[0]!;
  const routes: Array<[string, string]> = [
    ['GET', '/admin/v1/organizations'],
    ['POST', '/admin/v1/organizations'],
    ['GET', `/admin/v1/organizations/${org}`],
    ['POST', `/admin/v1/organizations/${org}/api-keys`],
    ['DELETE', `/admin/v1/organizations/${org}/api-keys/key_x`],
    ['GET', `/admin/v1/organizations/${org}/wholesale-prices`],
    ['PUT', `/admin/v1/organizations/${org}/wholesale-prices/formation`],
    ['DELETE', `/admin/v1/organizations/${org}/wholesale-prices/formation`],
    ['POST', `/admin/v1/organizations/${org}/balance-credits`],
    ['GET', '/admin/v1/orders'],
    ['GET', `/admin/v1/orders/${order}`],
    ['POST', `/admin/v1/orders/${order}/transitions`],
    ['POST', `/admin/v1/orders/${order}/documents`],
    ['GET', '/admin/v1/wholesale-prices'],
    ['PUT', '/admin/v1/wholesale-prices/formation'],
    ['GET', '/admin/v1/state-fees'],
    ['PUT', '/admin/v1/state-fees/DE'],
    ['GET', '/admin/v1/compliance-rules'],
    ['GET', '/admin/v1/compliance-rules/changes'],
    ['PUT', '/admin/v1/compliance-rules/DE'],
  ];
  return fc
    .record({
      route: fc.constantFrom(...routes),
      body: fc.oneof(
        fc.dictionary(
          fc.constantFrom('name', 'amount', 'filingStatus', 'retailPrice', 'price', 'fee', 'note'),
          anything,
          {
            maxKeys: 3,
          },
        ),
        anything,
      ),
      query: fc.option(nastyString, { freq: 4 }),
      auth: usually(`Bearer ${OPERATOR_TOKEN}`, 8, fc.constantFrom('Bearer wrong', '')),
    })
    .chain((g) =>
      hostFor(HOST.api).map((host) => {
        const [method, path] = g.route;
        const hasBody = method === 'POST' || method === 'PUT';
        return {
          label: `${method} ${routeOf(path)}`,
          wire: {
            method,
            target: g.query === null ? path : `${path}?limit=${encodePath(g.query)}&cursor=${encodePath(g.query)}`,
            host,
            headers: {
              ...(g.auth ? { authorization: g.auth } : {}),
              ...(hasBody ? { 'content-type': 'application/json' } : {}),
            },
            ...(hasBody ? { body: Buffer.from(JSON.stringify(g.body) ?? 'null') } : {}),
          },
        };
      }),
    );
}

/** The Stripe webhook: bodies and signatures of any kind (no Stripe keys are set, so it is refused). */
function stripeWebhook(): fc.Arbitrary<Wire> {
  return fc
    .record({
      body: fc.oneof(
        anything.map((v) => JSON.stringify(v) ?? ''),
        nastyString,
      ),
      signature: fc.oneof(
        fc.constant('t=1,v1=00'),
        nastyString.filter((s) => !/[\r\n]/.test(s)),
      ),
      type: fc.constantFrom('application/json', 'text/plain', 'application/octet-stream'),
    })
    .map((g) => ({
      label: 'POST /stripe/webhook',
      wire: {
        method: 'POST',
        target: '/stripe/webhook',
        host: HOST.api,
        headers: { 'content-type': g.type, 'stripe-signature': g.signature.slice(0, 1000) },
        body: Buffer.from(g.body, 'utf8'),
      },
    }));
}

/** An operation of the integrator API as test/fuzz.test.ts generates it, written on the wire. */
function apiCall(): fc.Arbitrary<Wire> {
  return fc.constantFrom(...operations).chain((o) =>
    fc.tuple(arbitraries.requestArbitrary(o), hostFor(HOST.api)).map(([g, host]) => {
      const options = toInject(o, g, fixtures);
      const payload = options.payload as string | undefined;
      return {
        label: `${o.method.toUpperCase()} ${o.path}`,
        wire: {
          method: String(options.method),
          target: String(options.url),
          host,
          headers: options.headers as Record<string, string>,
          ...(payload === undefined ? {} : { body: Buffer.from(payload, 'utf8') }),
        },
        may503: o.path.endsWith('/white-label-domain/verify'),
      };
    }),
  );
}

/** Bytes that are not a proper HTTP request, or are one at its edges. */
const BROKEN_HTTP: Array<[string, string]> = [
  ['not HTTP', '\u0016\u0003\u0001\u0002\u0000\u0001\u0000\u0001\u00fc\u0003\u0003'],
  ['not HTTP', 'hello\r\n\r\n'],
  ['bad request line', 'GET\r\n\r\n'],
  ['headers over 16 KB', `GET /healthz HTTP/1.1\r\nHost: ${HOST.api}\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`],
  [
    'Content-Length twice',
    `POST /v1/users HTTP/1.1\r\nHost: ${HOST.api}\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}`,
  ],
  [
    'Content-Length and chunked',
    `POST /v1/users HTTP/1.1\r\nHost: ${HOST.api}\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
  ],
  ['negative Content-Length', `POST /v1/users HTTP/1.1\r\nHost: ${HOST.api}\r\nContent-Length: -1\r\n\r\n`],
  [
    'bad chunk size',
    `POST /v1/users HTTP/1.1\r\nHost: ${HOST.api}\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
  ],
  ['absolute target', `GET http://${HOST.stranger}/healthz HTTP/1.1\r\nHost: ${HOST.api}\r\n\r\n`],
  ['asterisk target', `OPTIONS * HTTP/1.1\r\nHost: ${HOST.api}\r\n\r\n`],
  ['unknown method', `PROPFIND /console/queue HTTP/1.1\r\nHost: ${HOST.console}\r\n\r\n`],
  ['HTTP/1.0', 'GET /healthz HTTP/1.0\r\n\r\n'],
  ['header without colon', `GET /healthz HTTP/1.1\r\nHost: ${HOST.api}\r\nbroken header\r\n\r\n`],
  ['NUL in header', `GET /healthz HTTP/1.1\r\nHost: ${HOST.api}\r\nx-a: a\u0000b\r\n\r\n`],
];

function brokenHttp(): fc.Arbitrary<Wire> {
  return fc.constantFrom(...BROKEN_HTTP).map(([label, raw]) => ({
    label: `raw: ${label}`,
    wire: { method: '', target: '', host: null, headers: {}, raw: Buffer.from(raw, 'latin1') },
  }));
}

/** How each request is sent: mostly whole, else one of the ways a client stalls or leaves. */
const transport: fc.Arbitrary<Transport> = fc.oneof(
  { weight: 160, arbitrary: fc.constant<Transport>({ kind: 'whole' }) },
  {
    weight: 5,
    arbitrary: fc.double({ min: 0, max: 0.9, noNaN: true }).map((keep): Transport => ({ kind: 'stall', keep })),
  },
  {
    weight: 3,
    arbitrary: fc.double({ min: 0, max: 0.9, noNaN: true }).map((keep): Transport => ({ kind: 'chunked-stall', keep })),
  },
  { weight: 2, arbitrary: fc.constant<Transport>({ kind: 'expect-stall' }) },
  { weight: 2, arbitrary: fc.constant<Transport>({ kind: 'trickle', pauseMs: 1500 }) },
  { weight: 1, arbitrary: fc.constant<Transport>({ kind: 'headers-stall' }) },
  {
    weight: 4,
    arbitrary: fc.double({ min: 0, max: 0.9, noNaN: true }).map((keep): Transport => ({ kind: 'abandon', keep })),
  },
);

function requestsArbitrary(): fc.Arbitrary<Item> {
  const surfaces = fc.oneof(
    { weight: 40, arbitrary: apiCall() },
    { weight: 6, arbitrary: adminCall() },
    { weight: 14, arbitrary: pageGet() },
    { weight: 22, arbitrary: fc.constantFrom(...web.forms).chain(formPost) },
    { weight: 2, arbitrary: consoleSignIn() },
    { weight: 4, arbitrary: magicLinkOpen() },
    { weight: 6, arbitrary: plainGet() },
    { weight: 2, arbitrary: stripeWebhook() },
    { weight: 2, arbitrary: brokenHttp() },
  );
  return fc.tuple(surfaces, transport).map(([w, how]) => ({ ...w, how: w.wire.raw ? { kind: 'whole' } : how }));
}

// ---------- the run ----------

describe('fuzzing every surface over a listening socket', () => {
  it(`answers ${TOTAL_REQUESTS} hostile requests within 15 s each, none with an unexpected 5xx (seed ${FUZZ_SEED})`, async () => {
    expect(web.forms.length).toBeGreaterThanOrEqual(20);
    expect(web.forms.some((f) => f.multipart && f.files.length)).toBe(true);
    const work = fc.sample(requestsArbitrary(), { seed: FUZZ_SEED, numRuns: TOTAL_REQUESTS });
    const unanswered: string[] = [];
    const serverErrors: string[] = [];
    const sentBy = new Map<string, number>();
    const describeItem = (i: Item, e: Exchange) =>
      `${i.label} [${i.how.kind}] ${e.outcome}${e.status ? ` ${e.status}` : ''} after ${e.afterLastByteMs} ms: ${i.wire.method} ${i.wire.target.slice(0, 150)} host=${String(i.wire.host).slice(0, 40)}`;

    const run = async (queue: Item[]) => {
      for (let item = queue.shift(); item; item = queue.shift()) {
        const e = await exchange(port, item.wire, item.how, ANSWER_WITHIN_MS);
        sentBy.set(item.label, (sentBy.get(item.label) ?? 0) + 1);
        if (e.outcome === 'timeout' || e.outcome === 'closed') unanswered.push(describeItem(item, e));
        else if (e.status !== null && e.status >= 500 && !(e.status === 503 && item.may503))
          serverErrors.push(describeItem(item, e));
      }
    };
    // Stalling requests wait for the service's timeouts: they run beside the others, not in their place.
    const stalls = (i: Item) => i.how.kind !== 'whole' && i.how.kind !== 'abandon';
    const slow = work.filter(stalls);
    const quick = work.filter((i) => !stalls(i));
    await Promise.all([
      ...Array.from({ length: CONCURRENCY }, () => run(quick)),
      ...Array.from({ length: STALLING_CONCURRENCY }, () => run(slow)),
    ]);

    expect([...sentBy.values()].reduce((a, b) => a + b, 0)).toBe(TOTAL_REQUESTS);
    const report = (list: string[]) => `(reproduce with FUZZ_SEED=${FUZZ_SEED}):\n${list.slice(0, 20).join('\n')}`;
    expect.soft(unanswered, `requests without an answer within 15 s ${report(unanswered)}`).toEqual([]);
    expect.soft(serverErrors, `unexpected 5xx answers ${report(serverErrors)}`).toEqual([]);
    // Every surface was reached.
    const labels = [...sentBy.keys()];
    for (const surface of [
      /^GET \/organization$/,
      /^POST \/admin\/v1\//,
      /^POST \/console\/orders\/:id\/documents \(multipart\)$/,
      /^POST \/console\/login$/,
      /^GET \/dashboard\/companies\/:id\/checkout\//,
      /^POST \/companies\/:id\/checkout\//,
      /^GET \/dashboard\/auth\/:token$/,
      /^GET \/auth\/:token$/,
      /^GET \/docs/,
      /^GET \/metrics$/,
      /^POST \/portal\/sign-in$/,
      /^GET \/portal\/members$/,
      /^POST \/stripe\/webhook$/,
      /^raw: /,
    ])
      expect
        .soft(
          labels.some((l) => surface.test(l)),
          String(surface),
        )
        .toBe(true);
  }, 400_000);
});

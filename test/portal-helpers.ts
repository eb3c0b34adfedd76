import { Secret, TOTP } from 'otpauth';
import type pg from 'pg';
import { newId } from '../src/lib/ids.js';
import { seal } from '../src/lib/secret-box.js';
import type { Role } from '../src/modules/portal/roles.js';
import { createSession, sessionCookieValue } from '../src/modules/portal/sessions.js';
import { type ConsoleClient, consoleClient, type InjectResult } from './console-helpers.js';
import type { TestApp } from './harness.js';

/** A browser-like portal client: keeps cookies, reads the last form's `_csrf`. */
export type PortalClient = ConsoleClient;

/** A new portal client (optionally from a given client address). */
export function portalClient(t: TestApp, remoteAddress?: string): PortalClient {
  return consoleClient(t.app, {}, remoteAddress);
}

/** The password every test member chooses. */
export const PASSWORD = 'a long portal password 1';

/** The authenticator secret of every member {@link memberSession} gives a second factor. */
export const MEMBER_TOTP_SECRET = 'JBSWY3DPEHPK3PXP';

let n = 0;

/** A fresh e-mail address. */
export function newEmail(tag = 'member'): string {
  return `${tag}.${Date.now().toString(36)}${n++}@example.com`;
}

/** Invites through the admin API. @returns the invitation link's path and query, and the raw response. */
export async function invite(t: TestApp, organizationId: string, email: string, role: string) {
  const res = await t.admin('POST', `/organizations/${organizationId}/invitations`, { email, role });
  const body = res.json<{ invitationUrl: string; expiresAt: string }>();
  const url = body.invitationUrl ? new URL(body.invitationUrl) : null;
  return { res, body, path: url ? `${url.pathname}${url.search}` : '', token: url?.searchParams.get('token') ?? '' };
}

/** Accepts an invitation as a new member (GET the page for its form token, POST name and password). */
export async function acceptInvitation(c: PortalClient, path: string, name = 'Pat Partner'): Promise<InjectResult> {
  await c.get(path);
  const token = new URL(path, 'http://x').searchParams.get('token') ?? '';
  return c.post('/portal/invitation', { _csrf: c.csrf(), token, name, password: PASSWORD, confirm: PASSWORD });
}

/** Starts and confirms two-factor enrolment. @returns the authenticator secret (base32) and the recovery codes. */
export async function enrolTotp(c: PortalClient): Promise<{ secret: string; recoveryCodes: string[] }> {
  await c.get('/portal/account/two-factor');
  await c.post('/portal/account/two-factor/start', { _csrf: c.csrf() });
  const page = await c.get('/portal/account/two-factor');
  const secret = /<code class="secret">([A-Z2-7 ]+)<\/code>/.exec(page.body)![1]!.replace(/ /g, '');
  const res = await followSecret(
    c,
    await c.post('/portal/account/two-factor/confirm', { _csrf: c.csrf(), code: totpCode(secret) }),
  );
  const recoveryCodes = [...res.body.matchAll(/<li><code>([A-Z0-9]{5}-[A-Z0-9]{5})<\/code><\/li>/g)].map((m) => m[1]!);
  return { secret, recoveryCodes };
}

/**
 * Follows a form's redirect (303) to the page that shows its new secret once (PORTAL-46), as a browser does; any
 * other answer is returned as it is.
 */
export async function followSecret(c: PortalClient, res: InjectResult): Promise<InjectResult> {
  const to = String(res.headers.location ?? '');
  return res.statusCode === 303 && /[?&]shown=psv_/.test(to) ? c.get(to) : res;
}

/** The TOTP code of a secret at a time (default now), as an authenticator app computes it. */
export function totpCode(secret: string, timestamp = Date.now()): string {
  return new TOTP({ secret: Secret.fromBase32(secret) }).generate({ timestamp });
}

/** Lets a member's next TOTP code be accepted again in the same 30 seconds (each step is accepted only once). */
export async function forgetLastTotpStep(pool: pg.Pool, email: string): Promise<void> {
  await pool.query('UPDATE members SET totp_last_step = NULL WHERE lower(email) = lower($1)', [email]);
}

/** Signs in with e-mail and password (GET the form for its token first). */
export async function signInPassword(c: PortalClient, email: string, password = PASSWORD): Promise<InjectResult> {
  await c.get('/portal/sign-in');
  return c.post('/portal/sign-in', { _csrf: c.csrf(), email, password });
}

/** Signs in with the password and then the current TOTP code. @returns the second step's response. */
export async function signIn(c: PortalClient, email: string, secret: string): Promise<InjectResult> {
  const first = await signInPassword(c, email);
  if (first.headers.location !== '/portal/second-factor') return first;
  await c.get('/portal/second-factor');
  return c.post('/portal/second-factor', { _csrf: c.csrf(), code: totpCode(secret) });
}

/**
 * A member of `organizationId` with `role`, signed in on a new client without going through the password (for tests of
 * what a session may do; sign-in itself is tested in portal-auth.test.ts). Owners and admins get a trusted second
 * factor, as the portal requires of them.
 */
export async function memberSession(
  t: TestApp,
  organizationId: string,
  role: Role,
  opts: { email?: string; remoteAddress?: string; totp?: boolean } = {},
): Promise<{ client: PortalClient; memberId: string; email: string }> {
  const memberId = newId('member');
  const email = opts.email ?? newEmail(role);
  const secured = opts.totp ?? (role === 'owner' || role === 'admin');
  await t.ctx.pool.query(
    `INSERT INTO members (id, email, name, password_hash, totp_sealed, totp_enabled_at)
     VALUES ($1, $2, $3, 'scrypt$unused', $4, CASE WHEN $5 THEN now() END)`,
    [
      memberId,
      email,
      `${role} ${memberId.slice(-4)}`,
      secured ? seal(t.ctx.secrets.dataKeys, MEMBER_TOTP_SECRET, `member-totp:${memberId}`) : null,
      secured,
    ],
  );
  await t.ctx.pool.query(
    'INSERT INTO organization_memberships (organization_id, member_id, role) VALUES ($1, $2, $3)',
    [organizationId, memberId, role],
  );
  const client = portalClient(t, opts.remoteAddress);
  await joinAs(t, client, memberId);
  return { client, memberId, email };
}

/**
 * Dates the last second-factor proof of every session of a member `minutesAgo` minutes back (null: never proved), as
 * if time had passed (PORTAL-10).
 */
export async function setProofAge(t: TestApp, memberId: string, minutesAgo: number | null): Promise<void> {
  await t.ctx.pool.query(
    `UPDATE portal_sessions SET second_factor_at = CASE WHEN $2::int IS NULL THEN NULL ELSE now() - make_interval(mins => $2::int) END
      WHERE member_id = $1`,
    [memberId, minutesAgo],
  );
}

/** Switches the client's session to the live or test environment. */
export async function switchTo(c: PortalClient, environment: 'live' | 'test'): Promise<void> {
  await c.get('/portal/');
  const res = await c.post('/portal/environment', { _csrf: c.csrf(), environment });
  if (res.statusCode !== 303) throw new Error(`switching to ${environment}: ${res.statusCode} ${res.body}`);
}

/**
 * POSTs a url-encoded form whose fields may repeat (checkboxes) with the client's cookies and last CSRF token; a
 * cookie the answer sets (a flash message) is kept for the client's next request.
 */
export async function postPairs(
  t: TestApp,
  c: PortalClient,
  url: string,
  pairs: Array<[string, string]>,
): Promise<InjectResult> {
  const res = await t.app.inject({
    method: 'POST',
    url,
    payload: new URLSearchParams([['_csrf', c.csrf()], ...pairs]).toString(),
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      cookie: [...c.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
    },
  });
  for (const cookie of res.cookies) c.cookies.set(cookie.name, cookie.value);
  return { statusCode: res.statusCode, headers: res.headers as InjectResult['headers'], body: res.body };
}

/** Gives a client a new full session of a member (its cookie set as sign-in would). */
async function joinAs(t: TestApp, client: PortalClient, memberId: string): Promise<void> {
  const sessionId = await createSession(t.ctx.pool, {
    memberId,
    pending: false,
    clientAddress: '127.0.0.1',
    userAgent: 'test',
  });
  client.cookies.set('fcs_portal', sessionCookieValue(t.ctx.secrets.fileUrlSecret, sessionId));
}

/** Adds an existing member to another organization. */
export async function addMembership(t: TestApp, organizationId: string, memberId: string, role: Role): Promise<void> {
  await t.ctx.pool.query(
    'INSERT INTO organization_memberships (organization_id, member_id, role) VALUES ($1, $2, $3)',
    [organizationId, memberId, role],
  );
}

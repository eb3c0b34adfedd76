import { Secret, TOTP } from 'otpauth';
import type pg from 'pg';
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
  const res = await c.post('/portal/account/two-factor/confirm', { _csrf: c.csrf(), code: totpCode(secret) });
  const recoveryCodes = [...res.body.matchAll(/<li><code>([A-Z0-9]{5}-[A-Z0-9]{5})<\/code><\/li>/g)].map((m) => m[1]!);
  return { secret, recoveryCodes };
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

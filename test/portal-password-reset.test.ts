import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outboxDir } from '../src/modules/notifications/mailer.js';
import { type BackgroundWorker, startWorker } from '../src/worker.js';
import { createTestApp, type TestApp } from './harness.js';
import { acceptInvitation, invite, newEmail, portalClient, signInPassword } from './portal-helpers.js';

let t: TestApp;
let worker: BackgroundWorker;
beforeAll(async () => {
  t = await createTestApp();
  worker = await startWorker(t.ctx);
});
afterAll(async () => {
  await worker.stop();
  await t.close();
});

/** The text of the e-mails sent to `to` so far (the outbox: no SMTP server in tests). */
function mailsTo(to: string): string[] {
  const dir = outboxDir(t.ctx.config);
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .map((f) => fs.readFileSync(path.join(dir, f), 'utf8'))
    .filter((m) => m.includes(`To: ${to}`));
}

async function resetLink(to: string, count: number): Promise<string> {
  for (let i = 0; i < 300 && mailsTo(to).length < count; i++) await new Promise((r) => setTimeout(r, 100));
  // Quoted-printable: soft line breaks joined, =XX decoded.
  const mail = mailsTo(to)
    [count - 1]!.replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
  const url = new URL(/(http:\/\/\S+\/portal\/password-reset\/new\?token=[A-Za-z0-9_%-]+)/.exec(mail)![1]!);
  return `${url.pathname}${url.search}`;
}

const NEW_PASSWORD = 'a brand new password 22';

describe('portal password reset', () => {
  it('mails a single-use link that sets a new password and signs every session out', async () => {
    const tenant = await t.newTenant('Reset Co');
    const email = newEmail('reset');
    const inv = await invite(t, tenant.organizationId, email, 'developer');
    const old = portalClient(t);
    expect((await acceptInvitation(old, inv.path)).statusCode).toBe(303);

    const c = portalClient(t);
    await c.get('/portal/password-reset');
    const known = await c.post('/portal/password-reset', { _csrf: c.csrf(), email: email.toUpperCase() });
    await c.get('/portal/password-reset');
    const unknown = await c.post('/portal/password-reset', { _csrf: c.csrf(), email: newEmail('nobody') });
    // The same answer either way: the form tells nobody which addresses have accounts.
    expect(known.statusCode).toBe(200);
    expect(unknown.statusCode).toBe(200);
    expect(unknown.body.replace(/value="[^"]*"/g, '')).toBe(known.body.replace(/value="[^"]*"/g, ''));

    const link = await resetLink(email, 1);
    const form = await c.get(link);
    expect(form.statusCode).toBe(200);
    expect(form.body).toContain('Choose a new password');
    const token = new URL(link, 'http://x').searchParams.get('token')!;
    const stored = await t.ctx.pool.query('SELECT token_hash FROM portal_password_resets');
    expect(stored.rows.some((r) => r.token_hash.includes(token))).toBe(false);
    const mismatch = await c.post('/portal/password-reset/new', {
      _csrf: c.csrf(),
      token,
      password: NEW_PASSWORD,
      confirm: 'something else entirely',
    });
    expect(mismatch.statusCode).toBe(400);
    const done = await c.post('/portal/password-reset/new', {
      _csrf: c.csrf(),
      token,
      password: NEW_PASSWORD,
      confirm: NEW_PASSWORD,
    });
    expect(done.statusCode).toBe(303);
    expect(done.headers.location).toBe('/portal/sign-in');

    // The old session is signed out; the link is spent; the new password works, the old one not.
    expect((await old.get('/portal/')).headers.location).toBe('/portal/sign-in');
    expect((await c.get(link)).statusCode).toBe(404);
    await c.get('/portal/sign-in');
    const again = await c.post('/portal/password-reset/new', {
      _csrf: c.csrf(),
      token,
      password: NEW_PASSWORD,
      confirm: NEW_PASSWORD,
    });
    expect(again.statusCode).toBe(404);
    expect((await signInPassword(portalClient(t), email)).statusCode).toBe(401);
    expect((await signInPassword(portalClient(t), email, NEW_PASSWORD)).headers.location).toBe('/portal/');
  });

  it('refuses an expired link', async () => {
    const tenant = await t.newTenant('Reset Expiry Co');
    const email = newEmail('late');
    const inv = await invite(t, tenant.organizationId, email, 'viewer');
    await acceptInvitation(portalClient(t), inv.path);
    const c = portalClient(t);
    await c.get('/portal/password-reset');
    await c.post('/portal/password-reset', { _csrf: c.csrf(), email });
    const link = await resetLink(email, 1);
    expect((await c.get(link)).statusCode).toBe(200);
    await t.ctx.pool.query(
      `UPDATE portal_password_resets r SET expires_at = now() - interval '1 second' FROM members m WHERE m.id = r.member_id AND m.email = $1`,
      [email],
    );
    const page = await c.get(link);
    expect(page.statusCode).toBe(404);
    expect(page.body).toContain('Link expired');
  });
});

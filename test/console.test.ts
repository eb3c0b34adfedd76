import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleClient, newOperator, signIn } from './console-helpers.js';
import { createTestApp, type TestApp } from './harness.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe('console authentication', () => {
  it('sends visitors without a session to the sign-in page and back afterwards', async () => {
    const c = consoleClient(t.app);
    const res = await c.get('/console/queue?status=exception');
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/console/login?next=%2Fconsole%2Fqueue%3Fstatus%3Dexception');
    const post = await c.post('/console/organizations', { name: 'Nope' });
    expect(post.statusCode).toBe(303);
    expect(post.headers.location).toBe('/console/login');

    const op = await newOperator(t.ctx.pool, 'Redirect Tester');
    await c.get('/console/login?next=%2Fconsole%2Fqueue%3Fstatus%3Dexception');
    const login = await c.post('/console/login', {
      _csrf: c.csrf(),
      email: op.email,
      password: op.password,
      next: '/console/queue?status=exception',
    });
    expect(login.statusCode).toBe(303);
    expect(login.headers.location).toBe('/console/queue?status=exception');
    const cookie = ([] as string[])
      .concat(login.headers['set-cookie'] ?? [])
      .find((s) => s.startsWith('fcs_console='))!;
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
    expect(cookie).toMatch(/Path=\/console/i);
    const page = await c.get('/console/queue?status=exception');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Redirect Tester');
  });

  it('stores only a hash of the session id and signs out for good', async () => {
    const op = await newOperator(t.ctx.pool);
    const c = consoleClient(t.app);
    await signIn(c, op.email, op.password);
    const sid = c.cookies.get('fcs_console')!;
    const { rows } = await t.ctx.pool.query('SELECT id_hash FROM operator_sessions WHERE operator_id = $1', [op.id]);
    expect(rows).toHaveLength(1);
    expect(rows[0].id_hash).not.toBe(sid);

    await c.get('/console/queue');
    const out = await c.post('/console/logout', { _csrf: c.csrf() });
    expect(out.statusCode).toBe(303);
    const again = consoleClient(t.app);
    again.cookies.set('fcs_console', sid);
    expect((await again.get('/console/queue')).statusCode).toBe(303);
  });

  it('AUTH-7: a session lasts 12 hours from sign-in; past that the browser is sent to sign in again', async () => {
    const op = await newOperator(t.ctx.pool, 'Long Shift');
    const c = consoleClient(t.app);
    const login = await signIn(c, op.email, op.password);
    const cookie = ([] as string[])
      .concat(login.headers['set-cookie'] ?? [])
      .find((s) => s.startsWith('fcs_console='))!;
    expect(cookie).toMatch(/Max-Age=43200(;|$)/i);
    const { rows } = await t.ctx.pool.query(
      `SELECT extract(epoch FROM expires_at - created_at)::int AS ttl FROM operator_sessions WHERE operator_id = $1`,
      [op.id],
    );
    expect(rows).toEqual([{ ttl: 12 * 60 * 60 }]);
    // The session as if it had started `ago` before now, keeping the lifetime sign-in gave it (the database's clock
    // decides, so the margins below are minutes and a second past the end, not the test's own timing).
    const signedInAgo = (ago: string) =>
      t.ctx.pool.query(
        `UPDATE operator_sessions SET created_at = now() - $2::interval,
                expires_at = now() - $2::interval + (expires_at - created_at)
          WHERE operator_id = $1`,
        [op.id, ago],
      );
    await signedInAgo('11 hours 55 minutes');
    const late = await c.get('/console/queue');
    expect(late.statusCode, 'five minutes before the end').toBe(200);
    expect(late.body).toContain('Long Shift');

    await signedInAgo('12 hours 1 second');
    const expired = await c.get('/console/queue?status=exception');
    expect(expired.statusCode).toBe(303);
    expect(expired.headers.location).toBe('/console/login?next=%2Fconsole%2Fqueue%3Fstatus%3Dexception');
    expect(c.cookies.has('fcs_console'), 'the expired cookie is cleared').toBe(false);
    const form = await c.get(expired.headers.location as string);
    expect(form.statusCode).toBe(200);
    expect(form.body).toContain('name="password"');
  });

  it('refuses unknown e-mails, wrong passwords and disabled operators alike', async () => {
    const op = await newOperator(t.ctx.pool);
    const c = consoleClient(t.app, {}, '198.51.100.7');
    expect((await signIn(c, 'nobody@example.com', 'whatever password')).statusCode).toBe(401);
    expect((await signIn(c, op.email, 'wrong password!!')).statusCode).toBe(401);
    await t.ctx.pool.query('UPDATE operators SET disabled_at = now() WHERE id = $1', [op.id]);
    const res = await signIn(c, op.email, op.password);
    expect(res.statusCode).toBe(401);
    expect(res.body).toContain('do not match an active operator account');
    expect(c.cookies.has('fcs_console')).toBe(false);
  });
});

describe('CSRF', () => {
  it('refuses a sign-in without the form token', async () => {
    const op = await newOperator(t.ctx.pool);
    const c = consoleClient(t.app);
    await c.get('/console/login');
    const res = await c.post('/console/login', { email: op.email, password: op.password });
    expect(res.statusCode).toBe(403);
    expect(c.cookies.has('fcs_console')).toBe(false);
    const forged = await c.post('/console/login', { _csrf: 'forged-token', email: op.email, password: op.password });
    expect(forged.statusCode).toBe(403);
  });

  it('refuses every signed-in POST without the session token and changes nothing', async () => {
    const op = await newOperator(t.ctx.pool);
    const c = consoleClient(t.app);
    await signIn(c, op.email, op.password);
    await c.get('/console/organizations');
    const good = c.csrf();
    const count = async () =>
      Number((await t.ctx.pool.query(`SELECT count(*) FROM organizations WHERE name = 'CSRF Co'`)).rows[0].count);

    const missing = await c.post('/console/organizations', { name: 'CSRF Co' });
    expect(missing.statusCode).toBe(403);
    expect(missing.body).toContain('Form expired');
    expect((await c.post('/console/organizations', { name: 'CSRF Co', _csrf: `${good}x` })).statusCode).toBe(403);
    // A token of another operator's session does not work either.
    const other = consoleClient(t.app);
    const op2 = await newOperator(t.ctx.pool);
    await signIn(other, op2.email, op2.password);
    await other.get('/console/organizations');
    expect((await c.post('/console/organizations', { name: 'CSRF Co', _csrf: other.csrf() })).statusCode).toBe(403);
    expect((await c.post('/console/logout', {})).statusCode).toBe(403);
    expect(await count()).toBe(0);

    const ok = await c.post('/console/organizations', { name: 'CSRF Co', _csrf: good });
    expect(ok.statusCode).toBe(201);
    expect(await count()).toBe(1);
  });

  it('puts a token in every form the console renders', async () => {
    const op = await newOperator(t.ctx.pool);
    const c = consoleClient(t.app);
    await signIn(c, op.email, op.password);
    const tenant = await t.newTenant('Forms Co');
    for (const url of [
      '/console/queue',
      '/console/organizations',
      `/console/organizations/${tenant.organizationId}`,
      '/console/prices',
      `/console/prices?organizationId=${tenant.organizationId}`,
      '/console/fees',
      '/console/fees/DE',
      '/console/webhooks',
      `/console/webhooks/${tenant.organizationId}`,
    ]) {
      const res = await c.get(url);
      expect(res.statusCode, url).toBe(200);
      const posts = res.body.match(/<form[^>]*method="post"[\s\S]*?<\/form>/g) ?? [];
      expect(posts.length, url).toBeGreaterThan(0);
      for (const form of posts) expect(form, url).toMatch(/name="_csrf" value="[^"]+"/);
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createPool } from '../src/lib/db.js';
import { attemptLogin } from '../src/modules/console/login.service.js';
import { PasswordCheckQueue } from '../src/modules/console/password-queue.js';
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

describe('login rate limiting', () => {
  it('locks an e-mail after 5 failures in 15 minutes, across app instances, even with the right password', async () => {
    const op = await newOperator(t.ctx.pool);
    const c = consoleClient(t.app, {}, '203.0.113.10');
    for (let i = 0; i < 5; i++) expect((await signIn(c, op.email, `wrong-${i}-password`)).statusCode).toBe(401);

    // A second server process on the same database sees the same counter (nothing is kept in memory).
    const other = await buildApp(t.ctx, { logger: false });
    try {
      const c2 = consoleClient(other, {}, '203.0.113.99');
      const res = await signIn(c2, op.email.toUpperCase(), op.password);
      expect(res.statusCode).toBe(429);
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      expect(res.body).toContain('Too many failed sign-in attempts');
      expect(c2.cookies.has('fcs_console')).toBe(false);
    } finally {
      await other.close();
    }
    const { rows } = await t.ctx.pool.query(
      `SELECT count(*)::int AS n FROM login_attempts WHERE key = $1 AND NOT succeeded`,
      [`email:${op.email}`],
    );
    expect(rows[0].n).toBe(5);

    // Once the failures are older than the window, the operator gets in again.
    await t.ctx.pool.query(
      `UPDATE login_attempts SET attempted_at = attempted_at - interval '16 minutes' WHERE key = $1`,
      [`email:${op.email}`],
    );
    expect((await signIn(c, op.email, op.password)).statusCode).toBe(303);
  });

  it('a successful sign-in starts the e-mail count again', async () => {
    const op = await newOperator(t.ctx.pool);
    const c = consoleClient(t.app, {}, '203.0.113.20');
    for (let i = 0; i < 4; i++) await signIn(c, op.email, 'wrong password here');
    expect((await signIn(c, op.email, op.password)).statusCode).toBe(303);
    for (let i = 0; i < 4; i++) expect((await signIn(c, op.email, 'wrong password here')).statusCode).toBe(401);
    expect((await signIn(c, op.email, op.password)).statusCode).toBe(303);
  });

  it(
    'locks a network address after 20 failures, whatever the e-mail',
    async () => {
      const op = await newOperator(t.ctx.pool);
      const c = consoleClient(t.app, {}, '192.0.2.44');
      for (let i = 0; i < 20; i++)
        expect((await signIn(c, `guess${i}@example.com`, 'password guess')).statusCode).toBe(401);
      expect((await signIn(c, op.email, op.password)).statusCode).toBe(429);
      const elsewhere = consoleClient(t.app, {}, '192.0.2.45');
      expect((await signIn(elsewhere, op.email, op.password)).statusCode).toBe(303);
    },
    TWENTY_SIGN_INS_MS,
  );

  it(
    'does not take the address from X-Forwarded-For unless TRUST_PROXY is set (a forged header changes nothing)',
    async () => {
      const op = await newOperator(t.ctx.pool);
      for (let i = 0; i < 20; i++) {
        const forged = consoleClient(t.app, { 'x-forwarded-for': `198.51.100.${i}` }, '192.0.2.60');
        expect((await signIn(forged, `forged${i}@example.com`, 'password guess')).statusCode).toBe(401);
      }
      expect(
        (
          await signIn(
            consoleClient(t.app, { 'x-forwarded-for': '198.51.100.200' }, '192.0.2.60'),
            op.email,
            op.password,
          )
        ).statusCode,
      ).toBe(429);
    },
    TWENTY_SIGN_INS_MS,
  );
});

/**
 * Time allowed a test that sends 21 sign-ins one after another: each is a real scrypt check (a few hundred ms) in a
 * low-priority thread, which the other test files running beside it on two cores can slow threefold (about 20 s
 * alone, over 60 s in one CI run).
 */
const TWENTY_SIGN_INS_MS = 180_000;

/** An app that checks one password at a time with no queue, holding sign-ins beyond it for up to `holdMs`. */
function oneCheckAtATime(holdMs: string): Promise<TestApp> {
  return createTestApp({ PASSWORD_HASH_CONCURRENCY: '1', PASSWORD_HASH_QUEUE: '0', PASSWORD_HASH_HOLD_MS: holdMs });
}

/** `count` wrong sign-ins sent together, each for another e-mail from another address (198.51.100.<first + i>). */
async function wrongSignInsTogether(app: TestApp, count: number, first: number) {
  const clients = Array.from({ length: count }, (_, i) => consoleClient(app.app, {}, `198.51.100.${first + i}`));
  for (const c of clients) await c.get('/console/login');
  return Promise.all(
    clients.map((c, i) =>
      c.post('/console/login', {
        _csrf: c.csrf(),
        email: `flood${first + i}@example.com`,
        password: 'guess',
        next: '/console/queue',
      }),
    ),
  );
}

describe('password checks under load', () => {
  it('records the failed attempt before hashing, and hashes with no database connection held', async () => {
    const op = await newOperator(t.ctx.pool);
    const pool = createPool(t.ctx.config.databaseUrl!, 2);
    const seen: Array<{ recorded: number; busyConnections: number }> = [];
    const real = new PasswordCheckQueue(1, 4);
    // Looks at the database at the moment the hash is about to be computed.
    const watching = {
      admit: () => () => undefined,
      run: async <T>(check: () => Promise<T>) => {
        const busyConnections = pool.totalCount - pool.idleCount;
        const { rows } = await t.ctx.pool.query(
          `SELECT count(*)::int AS n FROM login_attempts WHERE key = $1 AND NOT succeeded`,
          [`email:${op.email}`],
        );
        seen.push({ recorded: rows[0].n, busyConnections });
        return real.run(check);
      },
    } as unknown as PasswordCheckQueue;
    try {
      expect(
        await attemptLogin(pool, watching, { email: op.email, password: 'wrong password', ip: '192.0.2.90' }),
      ).toEqual({ ok: false, reason: 'invalid' });
      const ok = await attemptLogin(pool, watching, { email: op.email, password: op.password, ip: '192.0.2.90' });
      expect(ok).toMatchObject({ ok: true, operatorId: op.id });
    } finally {
      await pool.end();
    }
    expect(seen).toEqual([
      { recorded: 1, busyConnections: 0 },
      { recorded: 2, busyConnections: 0 },
    ]);
    // The success turned its own recorded failure into a success, so it does not count against the operator.
    const { rows } = await t.ctx.pool.query(
      `SELECT succeeded FROM login_attempts WHERE key = $1 ORDER BY attempted_at`,
      [`email:${op.email}`],
    );
    expect(rows.map((r) => r.succeeded)).toEqual([false, true]);
  });

  it('keeps each slot hashing for at most PASSWORD_HASH_CPU_PERCENT of its time: a flood waits, an answer does not', async () => {
    const queue = new PasswordCheckQueue(1, 10, 25);
    const starts: number[] = [];
    const steps: string[] = [];
    let n = 0;
    const check = async () => {
      starts.push(performance.now());
      steps.push(`check ${++n} starts`);
      await new Promise((resolve) => setTimeout(resolve, 40));
      return true;
    };
    await Promise.all([1, 2, 3].map((i) => queue.run(check).then(() => steps.push(`sign-in ${i} answered`))));
    // A 40 ms check at 25 % leaves the slot resting 120 ms: checks start at least 160 ms apart (lower bounds only:
    // a loaded machine makes the gaps longer, never shorter).
    expect(starts[1]! - starts[0]!).toBeGreaterThanOrEqual(155);
    expect(starts[2]! - starts[1]!).toBeGreaterThanOrEqual(155);
    // Each sign-in is answered when its own check ends, before the slot's rest lets the next check start.
    expect(steps).toEqual([
      'check 1 starts',
      'sign-in 1 answered',
      'check 2 starts',
      'sign-in 2 answered',
      'check 3 starts',
      'sign-in 3 answered',
    ]);
    expect(() => loadConfig({ PASSWORD_HASH_CPU_PERCENT: '0' })).toThrow(/PASSWORD_HASH_CPU_PERCENT/);
    expect(loadConfig({}).passwordHashCpuPercent).toBe(10);
  });

  it('refuses at once with 503 and Retry-After when the checks and their queue are full and nothing may be held, recording nothing', async () => {
    const op = await newOperator(t.ctx.pool);
    const full = {
      admit: () => null,
      run: () => Promise.reject(new Error('must not run')),
    } as unknown as PasswordCheckQueue;
    expect(
      await attemptLogin(t.ctx.pool, full, { email: op.email, password: op.password, ip: '192.0.2.91' }),
    ).toMatchObject({ ok: false, reason: 'busy' });
    const { rows } = await t.ctx.pool.query(`SELECT count(*)::int AS n FROM login_attempts WHERE key = $1`, [
      `email:${op.email}`,
    ]);
    expect(rows[0].n).toBe(0);

    const tight = await oneCheckAtATime('0');
    try {
      const answers = await wrongSignInsTogether(tight, 6, 40);
      const statuses = answers.map((a) => a.statusCode);
      expect(
        statuses.every((s) => s === 401 || s === 503),
        statuses.join(),
      ).toBe(true);
      expect(statuses).toContain(401);
      expect(statuses).toContain(503);
      const busy = answers.find((a) => a.statusCode === 503)!;
      expect(Number(busy.headers['retry-after'])).toBeGreaterThan(0);
      expect(busy.body).toContain('Sign-in is busy');
    } finally {
      await tight.close();
    }
  });

  it('holds sign-ins beyond the queue unread and gives them places in arrival order, or 503 when the hold ends', async () => {
    // AUTH-8: a held sign-in waits for a place instead of being refused and coming straight back.
    const queue = new PasswordCheckQueue(1, 0);
    const first = queue.admit()!;
    const order: string[] = [];
    const second = queue.hold(5_000, 10).then((r) => {
      order.push('second');
      return r;
    });
    const third = queue.hold(5_000, 10).then((r) => {
      order.push('third');
      return r;
    });
    expect(await queue.hold(5_000, 2)).toBeNull(); // two held already: refused at once
    first();
    const secondPlace = await second;
    expect(secondPlace).toBeTypeOf('function');
    expect(order).toEqual(['second']);
    secondPlace!();
    expect(await third).toBeTypeOf('function');
    expect(order).toEqual(['second', 'third']);
    const started = performance.now();
    expect(await queue.hold(200, 10)).toBeNull(); // the third still holds the only place
    expect(performance.now() - started).toBeGreaterThanOrEqual(95);
    expect(() => loadConfig({ PASSWORD_HASH_HOLD_MS: 'soon' })).toThrow(/PASSWORD_HASH_HOLD_MS/);
    expect(loadConfig({})).toMatchObject({ passwordHashHoldMs: 10_000, passwordHashHeld: 1000 });

    const holding = await oneCheckAtATime('30000');
    try {
      const answers = await wrongSignInsTogether(holding, 4, 60);
      // Each waited for its turn and had its password checked: none was refused as busy.
      expect(answers.map((a) => a.statusCode)).toEqual([401, 401, 401, 401]);
    } finally {
      await holding.close();
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256 } from '../src/lib/secrets.js';
import { purgeExpiredTask } from '../src/modules/maintenance/purge-expired.task.js';
import { cronItems, taskDefinitions } from '../src/tasks.js';
import { createUser } from './factories.js';
import { createTestApp, type TestApp, type TestTenant } from './harness.js';
import { mintLink, signIn } from './dashboard-helpers.js';
import { consoleClient, newOperator, signIn as consoleSignIn } from './console-helpers.js';

let t: TestApp;
let tenant: TestTenant;
beforeAll(async () => {
  t = await createTestApp({ DASHBOARD_BASE_URL: 'http://localhost:3000/dashboard' });
  tenant = await t.newTenant('Purge Co');
});
afterAll(() => t.close());

const count = async (sql: string, params: unknown[] = []) => (await t.ctx.pool.query(sql, params)).rows[0].n as number;
const runPurge = () => purgeExpiredTask.handler(t.ctx)({}, {} as never);

describe('daily purge of expired rows', () => {
  it('is a daily graphile-worker cron task', () => {
    expect(taskDefinitions[purgeExpiredTask.name]).toBe(purgeExpiredTask);
    expect(cronItems).toContainEqual(
      expect.objectContaining({ task: purgeExpiredTask.name, match: expect.stringMatching(/^\d+ \d+ \* \* \*$/) }),
    );
  });

  it('deletes expired idempotency keys, spent or expired links, ended sessions, unused forms and lapsed streamed tenants, and keeps what is live', async () => {
    // Idempotency keys: one a day old, one fresh.
    await tenant.api(
      'POST',
      '/users',
      { fullName: 'Old Key', email: 'old.key@example.com' },
      { headers: { 'idempotency-key': 'purge-old' } },
    );
    await tenant.api(
      'POST',
      '/users',
      { fullName: 'New Key', email: 'new.key@example.com' },
      { headers: { 'idempotency-key': 'purge-new' } },
    );
    await t.ctx.pool.query(
      `UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE key = 'purge-old'`,
    );

    // Dashboard: a signed-out session, a live one with a checkout form, an old form, an unopened and an expired link.
    const user = await createUser(tenant);
    const ended = await signIn(t, tenant, { userId: user.id });
    const endedPage = await ended.get('/');
    await ended.post('/sign-out', { _csrf: /name="_csrf" value="([^"]+)"/.exec(endedPage.body)![1] });
    const live = await signIn(t, tenant, { userId: user.id });
    const unopened = await mintLink(tenant, { userId: user.id });
    const expired = await mintLink(tenant, { userId: user.id });
    await t.ctx.pool.query(`UPDATE magic_links SET expires_at = now() - interval '1 minute' WHERE token_hash = $1`, [
      sha256(expired.split('/auth/')[1]),
    ]);
    const liveSession = (
      await t.ctx.pool.query(`SELECT id_hash FROM dashboard_sessions WHERE revoked_at IS NULL AND user_id = $1`, [
        user.id,
      ])
    ).rows[0].id_hash;
    await t.ctx.pool.query(
      `INSERT INTO checkout_forms (token_hash, session_id_hash, organization_id, environment, created_at) VALUES ('old-form', $1, $2, 'test', now() - interval '9 days'), ('new-form', $1, $2, 'test', now())`,
      [liveSession, tenant.organizationId],
    );

    // Console: an expired session and a live one; login attempts old and new.
    const op = await newOperator(t.ctx.pool);
    await consoleSignIn(consoleClient(t.app, {}, '192.0.2.150'), op.email, op.password);
    await consoleSignIn(consoleClient(t.app, {}, '192.0.2.151'), op.email, op.password);
    await t.ctx.pool.query(
      `UPDATE operator_sessions SET expires_at = now() - interval '1 second' WHERE id_hash = (SELECT id_hash FROM operator_sessions WHERE operator_id = $1 ORDER BY created_at LIMIT 1)`,
      [op.id],
    );
    await t.ctx.pool.query(
      `INSERT INTO login_attempts (key, succeeded, attempted_at) VALUES ('console:address:192.0.2.152', false, now() - interval '2 days')`,
    );

    // Streamed tenants (OPS-6): one whose process went away (lapsed) and one still refreshed.
    await t.ctx.pool.query(
      `INSERT INTO event_stream_tenants (organization_id, environment, hub_id, expires_at)
       VALUES ($1, 'test', 'gone:1:aaaa', now() - interval '1 minute'), ($1, 'test', 'live:2:bbbb', now() + interval '30 seconds')`,
      [tenant.organizationId],
    );

    await runPurge();

    expect(await count(`SELECT count(*)::int AS n FROM idempotency_keys WHERE key = 'purge-old'`)).toBe(0);
    expect(await count(`SELECT count(*)::int AS n FROM idempotency_keys WHERE key = 'purge-new'`)).toBe(1);
    expect(await count(`SELECT count(*)::int AS n FROM dashboard_sessions WHERE user_id = $1`, [user.id])).toBe(1);
    expect((await live.get('/')).statusCode).toBe(200);
    // Left: the link of the live session (it still points at it) and the unopened one.
    const links = (await t.ctx.pool.query(`SELECT token_hash FROM magic_links WHERE user_id = $1`, [user.id])).rows.map(
      (r) => r.token_hash,
    );
    expect(links).toHaveLength(2);
    expect(links).toContain(sha256(unopened.split('/auth/')[1]));
    expect(links).not.toContain(sha256(expired.split('/auth/')[1]));
    expect(
      (await t.ctx.pool.query(`SELECT token_hash FROM checkout_forms WHERE session_id_hash = $1`, [liveSession])).rows,
    ).toEqual([{ token_hash: 'new-form' }]);
    expect(await count(`SELECT count(*)::int AS n FROM operator_sessions WHERE operator_id = $1`, [op.id])).toBe(1);
    expect(await count(`SELECT count(*)::int AS n FROM login_attempts WHERE key = 'console:address:192.0.2.152'`)).toBe(
      0,
    );
    expect(await count(`SELECT count(*)::int AS n FROM login_attempts WHERE key = 'console:address:192.0.2.151'`)).toBe(
      1,
    );
    expect(
      (
        await t.ctx.pool.query(`SELECT hub_id FROM event_stream_tenants WHERE organization_id = $1`, [
          tenant.organizationId,
        ])
      ).rows,
    ).toEqual([{ hub_id: 'live:2:bbbb' }]);
  });
});

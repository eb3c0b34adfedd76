import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PORTAL_SIGN_IN_LIMITS } from '../src/modules/portal/sign-in-limits.js';
import { createTestApp, type TestApp } from './harness.js';
import { memberSession, newEmail, PASSWORD, portalClient, signInPassword } from './portal-helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

/** Records `n` failed attempts of a limiter key, `ago` before now (as failures counted by earlier attempts). */
async function failures(key: string, n: number, ago = '1 minute'): Promise<void> {
  await t.ctx.pool.query(
    `INSERT INTO login_attempts (key, succeeded, attempted_at)
     SELECT $1, false, now() - $2::interval FROM generate_series(1, $3)`,
    [key, ago, n],
  );
}

describe('portal sign-in throttling (PORTAL-8)', () => {
  it('refuses an account at its failure limit at once, with Retry-After, and counts nothing for it', async () => {
    const email = newEmail('throttled');
    await failures(`portal:password:account:${email}`, PORTAL_SIGN_IN_LIMITS.perAccount);
    const c = portalClient(t, '198.51.100.41');
    const res = await signInPassword(c, email.toUpperCase(), PASSWORD);
    expect(res.statusCode).toBe(429);
    const retryAfter = Number(res.headers['retry-after']);
    // The oldest counted failure, a minute old, leaves the 15-minute window in about 14 minutes.
    expect(retryAfter).toBeGreaterThan(13 * 60);
    expect(retryAfter).toBeLessThanOrEqual(14 * 60 + 1);
    expect(res.body).toContain('Try again in 14 minutes');
    const { rows } = await t.ctx.pool.query('SELECT count(*)::int AS n FROM login_attempts WHERE key = $1', [
      `portal:password:address:198.51.100.41`,
    ]);
    expect(rows[0].n).toBe(0);
  });

  it('refuses an address at its limit whatever the account, and forgets failures older than the window', async () => {
    await failures('portal:password:address:198.51.100.42', PORTAL_SIGN_IN_LIMITS.perAddress);
    const res = await signInPassword(portalClient(t, '198.51.100.42'), newEmail('any'), PASSWORD);
    expect(res.statusCode).toBe(429);
    await failures('portal:password:address:198.51.100.43', PORTAL_SIGN_IN_LIMITS.perAddress, '16 minutes');
    const old = await signInPassword(portalClient(t, '198.51.100.43'), newEmail('any'), PASSWORD);
    expect(old.statusCode).toBe(401);
  });

  it('throttles second-factor codes per member too', async () => {
    const tenant = await t.newTenant('Code Limit Co');
    const m = await memberSession(t, tenant.organizationId, 'developer');
    // A pending session, as after the password of a member with a second factor.
    await t.ctx.pool.query(`UPDATE members SET totp_sealed = 'sealed:v1:x', totp_enabled_at = now() WHERE id = $1`, [
      m.memberId,
    ]);
    await t.ctx.pool.query('UPDATE portal_sessions SET second_factor_pending = true WHERE member_id = $1', [
      m.memberId,
    ]);
    await failures(`portal:second-factor:account:${m.memberId.toLowerCase()}`, PORTAL_SIGN_IN_LIMITS.perAccount);
    await m.client.get('/portal/second-factor');
    const res = await m.client.post('/portal/second-factor', { _csrf: m.client.csrf(), code: '123456' });
    expect(res.statusCode).toBe(429);
    expect(res.headers['retry-after']).toBeDefined();
  });
});

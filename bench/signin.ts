/**
 * Bench section `signin`: does a flood of console sign-ins slow down integrators? An integrator's GET
 * /organization arrives at a fixed rate, evenly spaced (runPaced), first alone, then while another process keeps 200
 * concurrent sign-ins with wrong passwords and different e-mails in flight (200 clients, each sending its next
 * attempt when the last is answered). The GETs under attack are timed once the attack is under way (SETTLE_MS after
 * it starts: the first 200 connections arrive together); the figure is their p99 as a ratio of the p99 without, and
 * the target is at most 120 %. Quiet and attacked windows alternate (WINDOWS each, BENCH_SECONDS per side in all),
 * and each side's p99 is taken over all its windows' requests, so a machine whose speed drifts moves both alike.
 *
 * Each attempt comes from another address (X-Forwarded-For, trusted in this run) for another e-mail, and the
 * per-address sign-in limit is lifted, so neither the rate limit nor the failure delays shed anything: what is measured
 * is the bound on password checks (PASSWORD_HASH_CONCURRENCY / _QUEUE / _HOLD_MS / _CPU_PERCENT).
 */
import pg from 'pg';
import { Pool } from 'undici';
import { createOrganization } from '../src/modules/organizations/organizations.service.js';
import type { BenchSection } from './run.js';
import { startChild } from './lib/child.js';
import { alternateWindows, type PooledSide, percentile, runPaced } from './lib/load.js';
import { record } from './lib/report.js';

/** Requests per second of the integrator's GET: steady traffic, well below saturation, so latency is what moves. */
const GET_RATE = 100;
const ATTACKERS = 200;
/** How long the attack runs before the GETs under attack are timed: its first connections all arrive at once. */
const SETTLE_MS = 2000;
/** Quiet and attacked windows, alternating. */
const WINDOWS = 3;

/** The `signin` section: GET /organization p99 at a fixed rate, alone and during waves of concurrent wrong sign-ins. */
export const benchSignin: BenchSection = async (db, settings) => {
  const url = await db.another('signin');
  const server = await startChild('app-server.ts', {
    DATABASE_URL: url,
    DATABASE_POOL_SIZE: String(settings.connections),
    RATE_LIMIT_SIGN_IN_ATTEMPTS: '1000000000',
    TRUST_PROXY: 'loopback',
  });
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  const http = new Pool(server.url, { connections: 32 });
  try {
    const { apiKeys } = await createOrganization(pool, 'Bench Signin Org');
    const get = {
      pool: http,
      next: () => ({ method: 'GET' as const, path: '/v1/organization', headers: { 'x-api-key': apiKeys.live.key } }),
      rate: GET_RATE,
    };
    await runPaced({ ...get, seconds: 2 }); // warm-up: JIT, pool connections
    const window = Math.max(1, Math.round(settings.seconds / WINDOWS));
    let failed = 0;
    const underAttack = async () => {
      const attacker = await startChild('signin-attacker.ts', {
        SIGNIN_TARGET: server.url,
        SIGNIN_CONCURRENCY: String(ATTACKERS),
      });
      try {
        await runPaced({ ...get, seconds: SETTLE_MS / 1000 });
        const run = await runPaced({ ...get, seconds: window });
        failed += run.failed;
        return run.latencies;
      } finally {
        await attacker.stop();
        // Sign-ins the server still holds or hashes end before the next quiet window is timed.
        await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
      }
    };
    const [alone, attackedSide] = (await alternateWindows(WINDOWS, [
      async () => (await runPaced({ ...get, seconds: window })).latencies,
      underAttack,
    ])) as [PooledSide, PooledSide];
    const quiet = { p99: percentile(alone.latencies, 99) };
    const attacked = { p99: percentile(attackedSide.latencies, 99), failed };
    record({
      section: 'signin',
      name: `GET /organization p99 at ${GET_RATE} req/s, no sign-ins`,
      value: quiet.p99,
      unit: 'ms',
    });
    const ratio = attacked.p99 / Math.max(quiet.p99, 0.001);
    record({
      section: 'signin',
      name: `GET /organization p99 during ${ATTACKERS} concurrent wrong sign-ins`,
      value: attacked.p99,
      unit: 'ms',
      baseline: { name: 'p99 without sign-ins', value: quiet.p99 },
      target: '<= 120 %',
      pass: ratio <= 1.2,
    });
    record({
      section: 'signin',
      name: 'GET /organization failed during the attack',
      value: attacked.failed,
      unit: 'requests',
      target: '0',
      pass: attacked.failed === 0,
    });
  } finally {
    await http.close();
    await pool.end();
    await server.stop();
  }
};

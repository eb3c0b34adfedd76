/**
 * Bench section `signin`: does a flood of console sign-ins slow down integrators? An integrator's GET
 * /organization is loaded at a fixed rate, first alone, then while another process keeps 200 concurrent sign-ins
 * with wrong passwords and different e-mails in flight (waves of 200, one after another). The figure is the p99
 * latency of the GET under attack as a ratio of its p99 without; the target is at most 120 %.
 *
 * Each attempt comes from another address (X-Forwarded-For, trusted in this run) and the per-address sign-in limit is
 * lifted, so neither the rate limit nor the per-address failure throttle sheds anything: what is measured is the
 * bound on sign-ins in progress and password checks (PASSWORD_HASH_CONCURRENCY / _QUEUE).
 */
import pg from 'pg';
import { createOrganization } from '../src/modules/organizations/organizations.service.js';
import type { BenchSection } from './run.js';
import { startChild } from './lib/child.js';
import { runLoad } from './lib/load.js';
import { record } from './lib/report.js';

/** Requests per second of the integrator's GET: steady traffic, well below saturation, so latency is what moves. */
const GET_RATE = 100;
const ATTACKERS = 200;

/** The `signin` section: GET /organization p99 at a fixed rate, alone and during waves of concurrent wrong sign-ins. */
export const benchSignin: BenchSection = async (db, settings) => {
  const url = await db.another('signin');
  const server = await startChild('app-server.ts', {
    DATABASE_URL: url,
    DATABASE_POOL_SIZE: String(settings.connections),
    RATE_LIMIT_SIGN_IN_ATTEMPTS: '1000000000',
    TRUST_PROXY: 'true',
  });
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  try {
    const { apiKeys } = await createOrganization(pool, 'Bench Signin Org');
    const get = {
      url: `${server.url}/v1/organization`,
      headers: { 'x-api-key': apiKeys.live.key },
      connections: settings.connections,
      overallRate: GET_RATE,
      seconds: settings.seconds,
    };
    await runLoad({ ...get, seconds: 2 }); // warm-up: JIT, pool connections
    const quiet = await runLoad(get);
    record({
      section: 'signin',
      name: `GET /organization p99 at ${GET_RATE} req/s, no sign-ins`,
      value: quiet.p99,
      unit: 'ms',
    });

    const attacker = await startChild('signin-attacker.ts', {
      SIGNIN_TARGET: server.url,
      SIGNIN_CONCURRENCY: String(ATTACKERS),
    });
    let attacked: Awaited<ReturnType<typeof runLoad>>;
    try {
      attacked = await runLoad(get);
    } finally {
      await attacker.stop();
    }
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
    await pool.end();
    await server.stop();
  }
};

import { randomBytes } from 'node:crypto';
import type { InjectOptions } from 'fastify';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Environment } from '../src/context.js';
import type { TestApp, TestTenant } from './harness.js';

/**
 * The shared security suite (AUTH-1, AUTH-2, TEN-3): every route runs it.
 *
 * Usage, in any `*.test.ts` after `createTestApp()` in beforeAll:
 * ```ts
 * runSecuritySuite({
 *   name: 'companies',
 *   app: () => t,
 *   createResource: async (owner) => (await owner.api('POST', '/companies', body(userId))).json().id,
 *   routes: [
 *     { method: 'GET', path: '/companies/{id}' },
 *     { method: 'PATCH', path: '/companies/{id}', body: { legalName: 'X' } },
 *     { method: 'GET', path: '/companies' },
 *   ],
 * });
 * ```
 * For every route it asserts: no key, a malformed key, an unknown key and a revoked key answer 401; a key
 * of the other environment answers 401 whose message names the right base address. For routes whose path
 * holds `{id}`, the id of a resource created by another organization answers 404, and so does the id of a
 * resource of the same organization's other environment (live and test data never mix).
 */
export interface SecurityRoute {
  method: InjectOptions['method'];
  /** Path relative to the base address; `{id}` is replaced by the id of a resource created in another tenant. */
  path: string;
  /** Request body; it may need to be valid so the route gets as far as looking the id up. */
  body?: unknown;
}

export interface SecuritySuiteOptions {
  /** Label of the describe block. */
  name: string;
  /** The test app (a getter, since the app is created in beforeAll). */
  app: () => TestApp;
  routes: SecurityRoute[];
  /**
   * Creates the resource the `{id}` routes address, as `owner` in `env`, and returns its id.
   * Needed only when a route path holds `{id}`.
   */
  createResource?: (owner: TestTenant, env: Environment) => Promise<string>;
}

const PREFIX: Record<Environment, string> = { live: '/v1', test: '/test/v1' };
const DUMMY_ID = 'id_does_not_matter_for_auth';

export function runSecuritySuite(opts: SecuritySuiteOptions): void {
  describe(`security suite: ${opts.name}`, () => {
    let owner: TestTenant;
    let stranger: TestTenant;
    let revoked: TestTenant;
    const needsId = opts.routes.some((r) => r.path.includes('{id}'));

    beforeAll(async () => {
      const t = opts.app();
      [owner, stranger, revoked] = await Promise.all([t.newTenant('Owner'), t.newTenant('Stranger'), t.newTenant('Revoked')]);
      for (const env of ['live', 'test'] as const) {
        const res = await t.admin('DELETE', `/organizations/${revoked.organizationId}/api-keys/${revoked.keyIds[env]}`);
        expect(res.statusCode, 'revoking a key through the admin API').toBe(200);
      }
      if (needsId && !opts.createResource) throw new Error('security suite: routes with {id} need createResource');
    });

    const call = (route: SecurityRoute, env: Environment, headers: Record<string, string>, id = DUMMY_ID) =>
      opts.app().app.inject({
        method: route.method,
        url: `${PREFIX[env]}${route.path.replace('{id}', encodeURIComponent(id))}`,
        payload: route.body as InjectOptions['payload'],
        headers,
      });

    const expect401 = (res: { statusCode: number; json: () => any }, what: string) => {
      expect(res.statusCode, what).toBe(401);
      expect(res.json(), what).toMatchObject({ message: expect.any(String), code: expect.any(String), requestId: expect.any(String) });
    };

    for (const route of opts.routes) {
      const label = `${route.method} ${route.path}`;

      it(`${label}: no key, a malformed key, an unknown key and a revoked key answer 401`, async () => {
        for (const env of ['live', 'test'] as const) {
          expect401(await call(route, env, {}), `${env}: no key`);
          expect401(await call(route, env, { 'x-api-key': 'not-a-key' }), `${env}: malformed key`);
          expect401(await call(route, env, { 'x-api-key': `sk_${env}_${randomBytes(32).toString('base64url')}` }), `${env}: unknown key`);
          expect401(await call(route, env, { 'x-api-key': revoked.keys[env] }), `${env}: revoked key`);
        }
      });

      it(`${label}: a key of the other environment answers 401 naming the right base address`, async () => {
        const { config } = opts.app().ctx;
        const testAtLive = await call(route, 'live', { 'x-api-key': owner.keys.test });
        expect401(testAtLive, 'test key at the live address');
        expect(testAtLive.json().message).toContain(config.testBaseUrl);
        const liveAtTest = await call(route, 'test', { 'x-api-key': owner.keys.live });
        expect401(liveAtTest, 'live key at the test address');
        expect(liveAtTest.json().message).toContain(config.liveBaseUrl);
      });

      if (route.path.includes('{id}')) {
        it(`${label}: another tenant's id answers 404`, async () => {
          // Fresh resources per route, so a DELETE route cannot hide what the next route would see.
          const foreignIds = { test: await opts.createResource!(owner, 'test'), live: await opts.createResource!(owner, 'live') };
          for (const env of ['live', 'test'] as const) {
            const other = await call(route, env, { 'x-api-key': stranger.keys[env] }, foreignIds[env]);
            expect(other.statusCode, `${env}: another organization's id`).toBe(404);
            expect(other.json().code).toBe('not_found');
          }
          const liveIdWithTestKey = await call(route, 'test', { 'x-api-key': owner.keys.test }, foreignIds.live);
          expect(liveIdWithTestKey.statusCode, 'a live id with the same organization\'s test key').toBe(404);
          const testIdWithLiveKey = await call(route, 'live', { 'x-api-key': owner.keys.live }, foreignIds.test);
          expect(testIdWithLiveKey.statusCode, 'a test id with the same organization\'s live key').toBe(404);
          // Control: the owner reaches its own resource, so the 404s above come from tenancy, not from the request.
          const own = await call(route, 'test', { 'x-api-key': owner.keys.test }, foreignIds.test);
          expect(own.statusCode, `the owner's own id (body: ${own.body.slice(0, 200)})`).toBeLessThan(400);
        });
      }
    }
  });
}

import { afterAll, beforeAll, expect, it } from 'vitest';
import { mintLink, openLink, sessionCookie } from './dashboard-helpers.js';
import { fakeDns, setVerifiedDomain } from './domain-helpers.js';
import { createUser } from './factories.js';
import { createTestApp, type TestApp } from './harness.js';

// ORG-6, AUTH-6: a white-label domain the organization removes or replaces ends the dashboard sessions started on it
// at once: its next owner would receive their cookies, and they would still open the dashboard on our own host.

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

/** A live session started on `domain`, and a request of it on the dashboard's own host. */
async function sessionOn(domain: string) {
  const tenant = await t.newTenant(`Sessions ${domain}`);
  await setVerifiedDomain(t, tenant, domain, fakeDns(t));
  const user = await createUser(tenant, 'live');
  const link = await mintLink(tenant, { userId: user.id }, 'live');
  expect(link.startsWith(`https://${domain}/auth/`)).toBe(true);
  const opened = await openLink(t, link);
  expect(opened.statusCode).toBe(303);
  const { pair } = sessionCookie(opened.headers['set-cookie']);
  const home = () => t.app.inject({ method: 'GET', url: '/dashboard/', headers: { cookie: pair } });
  expect((await home()).statusCode).toBe(200);
  return { tenant, home };
}

it('ends them when the domain is removed', async () => {
  const { tenant, home } = await sessionOn('removed.sessions-co.test');
  const removed = await tenant.api('PATCH', '/organization', { whiteLabelDomain: null }, { env: 'live' });
  expect(removed.statusCode, removed.body).toBe(200);
  expect((await home()).statusCode).toBe(401);
});

it('ends them when the domain is replaced, and keeps them when the same domain is sent again', async () => {
  const { tenant, home } = await sessionOn('kept.sessions-co.test');
  const same = await tenant.api(
    'PATCH',
    '/organization',
    { whiteLabelDomain: 'kept.sessions-co.test' },
    { env: 'live' },
  );
  expect(same.statusCode, same.body).toBe(200);
  expect((await home()).statusCode).toBe(200);
  const replaced = await tenant.api(
    'PATCH',
    '/organization',
    { whiteLabelDomain: 'next.sessions-co.test' },
    { env: 'live' },
  );
  expect(replaced.statusCode, replaced.body).toBe(200);
  expect((await home()).statusCode).toBe(401);
});

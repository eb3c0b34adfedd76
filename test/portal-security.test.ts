import { afterAll, describe, expect, it } from 'vitest';
import { createTestApp } from './harness.js';
import { portalCoverageProblems, runPortalSecuritySuite } from './portal-security-suite.js';
import { routeTable } from './security-suite.js';

// The app is built while the file is collected: its route table decides which tests exist, so every portal route,
// now or added later, runs the portal security suite (test/portal-security-suite.ts).
const t = await createTestApp();
afterAll(() => t.close());

runPortalSecuritySuite({ app: () => t, routes: routeTable(t.app) });

describe('portal security suite: a route added without classification', () => {
  it('makes the suite fail, naming the route', () => {
    const added = [
      ...routeTable(t.app),
      { method: 'GET', path: '/portal/reports' },
      { method: 'POST', path: '/portal/reports/:id/delete' },
    ];
    expect(portalCoverageProblems(added)).toEqual([
      'GET /portal/reports: not classified in test/portal-security-suite.ts',
      'POST /portal/reports/:id/delete: not classified in test/portal-security-suite.ts',
    ]);
  });
});

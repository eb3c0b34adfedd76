import { afterAll, describe, expect, it } from 'vitest';
import { createTestApp } from './harness.js';
import { coverageProblems, routeTable, runSecuritySuite } from './security-suite.js';

// The app is built while the file is collected: its route table decides which tests exist, so every route the app
// serves, now or added later, runs the shared security suite (test/security-suite.ts).
const t = await createTestApp();
afterAll(() => t.close());

runSecuritySuite({ app: () => t, routes: routeTable(t.app) });

describe('security suite: a route added without coverage', () => {
  it('makes the suite fail, naming the route', () => {
    const table = routeTable(t.app);
    const added = [
      ...table,
      { method: 'GET', path: '/reports/export' },
      { method: 'POST', path: '/v1/widgets/:widgetId/archive' },
      { method: 'DELETE', path: '/admin/v1/widgets/:id' },
      { method: 'GET', path: '/test/v1/widgets' },
      { method: 'POST', path: '/v1/widgets' },
    ];
    expect(coverageProblems(added)).toEqual([
      'GET /reports/export: neither covered nor exempted',
      'POST /v1/widgets/:widgetId/archive: a path parameter with no resource factory nor reasoned exemption',
      'GET /test/v1/widgets: a GET route without a path parameter that is neither a checked list nor exempted',
    ]);
  });
});

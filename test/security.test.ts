import { afterAll } from 'vitest';
import { createTestApp } from './harness.js';
import { routeTable, runSecuritySuite } from './security-suite.js';

// The app is built while the file is collected: its route table decides which tests exist, so every route the app
// serves, now or added later, runs the shared security suite (test/security-suite.ts).
const t = await createTestApp();
afterAll(() => t.close());

runSecuritySuite({ app: () => t, routes: routeTable(t.app) });

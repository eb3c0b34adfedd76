import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDemoOrganization } from '../src/modules/organizations/demo.js';
import { createTestApp, OPERATOR_TOKEN, type TestApp } from './harness.js';

// ORG-5: the demo organization exists only on the embedded quick start, and a configured token is never printed.
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const organizations = async () =>
  (await t.ctx.pool.query('SELECT name FROM organizations')).rows.map((r) => r.name as string);

describe('the demo organization', () => {
  it('is never created with DATABASE_URL; the embedded quick start creates it once and prints its test key once', async () => {
    expect(await organizations()).toEqual([]);
    expect(await ensureDemoOrganization(t.ctx)).toBeNull();
    expect(await organizations()).toEqual([]);

    // The same database as the embedded quick start sees it: no DATABASE_URL.
    const embedded = { ...t.ctx, config: { ...t.ctx.config, databaseUrl: null } };
    const printed = (await ensureDemoOrganization(embedded))?.join('\n') ?? '';
    expect(printed).toMatch(/Test API key: +sk_test_[A-Za-z0-9_-]{32,}/);
    // The operator token came from the environment here: it is the deployer's secret and stays unprinted.
    expect(printed).toContain('the OPERATOR_TOKEN you set (not shown)');
    expect(printed).not.toContain(OPERATOR_TOKEN);
    expect(await organizations()).toEqual(['Demo Organization']);

    // Every later start prints nothing and creates nothing.
    expect(await ensureDemoOrganization(embedded)).toBeNull();
    expect(await organizations()).toEqual(['Demo Organization']);
  });
});

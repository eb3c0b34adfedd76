import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDemoOrganization } from '../src/demo-organization.js';
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
    // The shell line the README's quick start uses, and a portal invitation that opens in one click.
    expect(printed).toMatch(new RegExp(`export KEY=sk_test_[A-Za-z0-9_-]{32,} B=${t.ctx.config.testBaseUrl}`));
    const link = /Partner portal: +(\S+)/.exec(printed)?.[1] ?? '';
    expect(link.startsWith(`${t.ctx.config.portalBaseUrl}/invitation?token=`)).toBe(true);
    const page = await t.app.inject({ method: 'GET', url: new URL(link).pathname + new URL(link).search });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('owner@demo.example');

    // The README's quick start shows these lines word for word ("…" for what differs per start).
    for (const line of readmeFirstStartLines()) expect(printed).toMatch(lineAsPattern(line));

    // Every later start prints nothing and creates nothing.
    expect(await ensureDemoOrganization(embedded)).toBeNull();
    expect(await organizations()).toEqual(['Demo Organization']);
  });
});

/**
 * The lines of the README's first-start block (the ```text block after "The first `npm start` prints"), without the
 * operator token's line: this test sets OPERATOR_TOKEN, so its start prints the other form of that line.
 */
function readmeFirstStartLines(): string[] {
  const readme = fs.readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  const block = /The first `npm start` prints[^\n]*\n+```text\n([\s\S]*?)```/.exec(readme)?.[1];
  if (!block) throw new Error('README.md has no first-start block');
  return block
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('Operator token:'));
}

/** A README line as a pattern: "…" stands for any text, the README's localhost:3000 for the test's own address. */
function lineAsPattern(line: string): RegExp {
  const escaped = line.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(escaped.replaceAll('…', '.+?').replaceAll('http://localhost:3000', 'https?://[^/\\s]+'));
}

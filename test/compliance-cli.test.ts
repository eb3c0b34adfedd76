import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { corpFields, createCompany } from './factories.js';
import { runCli } from './cli-runner.js';
import { createTestApp, type TestApp } from './harness.js';

// The real CLI against this file's database: the filing team's deadline list and rule edits (CAL-17, CAL-22).
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const cli = (...args: string[]) => runCli(t, args, { USER: 'night-shift' });
const deadlines2032 = (...args: string[]) =>
  cli('compliance', 'deadlines', '--from', '2032-01-01', '--to', '2032-12-31', ...args);
const setWyomingRules = (...args: string[]) => cli('compliance', 'rules', 'set', '--state', 'WY', ...args);
const wyomingHistory = async () =>
  JSON.parse((await cli('compliance', 'rules', 'history', '--state', 'WY', '--json')).stdout);

describe('compliance CLI', () => {
  it("lists every tenant's deadlines by due date (--json), and edits a rule with who did it", async () => {
    const a = await t.newTenant();
    const b = await t.newTenant();
    const { company: llc } = await createCompany(a, 'live');
    const { company: corp } = await createCompany(b, 'test', {
      ...corpFields(),
      legalName: 'Wyoming Widgets Inc',
      formationState: 'WY',
      formationDate: '2024-05-10',
    });
    const listed = await deadlines2032('--json');
    expect(listed.code, listed.stderr).toBe(0);
    const mine = JSON.parse(listed.stdout).items.filter((d: { companyId: string }) =>
      [llc.id, corp.id].includes(d.companyId),
    );
    expect(mine).toEqual([
      expect.objectContaining({
        companyId: corp.id,
        legalName: 'Wyoming Widgets Inc',
        organizationId: b.organizationId,
        environment: 'test',
        jurisdiction: 'WY',
        dueDate: '2032-05-01',
        status: 'upcoming',
      }),
      expect.objectContaining({
        companyId: llc.id,
        organizationId: a.organizationId,
        environment: 'live',
        jurisdiction: 'DE',
        dueDate: '2032-06-01',
      }),
    ]);
    const text = await deadlines2032('--org', b.organizationId, '--state', 'wy');
    expect(text.stdout).toContain('2032-05-01 upcoming WY annual_report');
    expect(text.stdout).toContain('Wyoming Widgets Inc');
    expect(text.stdout).not.toContain(llc.id);

    const set = await setWyomingRules(
      '--corporation',
      '{"params":{"anchor":"anniversary_month","dueDay":15}}',
      '--note',
      'Test edit',
      '--json',
    );
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout)).toMatchObject({
      state: 'WY',
      updatedBy: 'cli:night-shift',
      corporation: { params: { dueDay: 15 } },
    });
    const after = JSON.parse((await deadlines2032('--org', b.organizationId, '--json')).stdout);
    expect(after.items.map((d: { dueDate: string }) => d.dueDate)).toEqual(['2032-05-15']);
    const history = await wyomingHistory();
    expect(history[0]).toMatchObject({
      state: 'WY',
      changedBy: 'cli:night-shift',
      note: 'Test edit',
      before: { corporation: { params: { dueDay: 1 } } },
    });

    const bad = await setWyomingRules('--llc', '{"frequency":"monthly"}');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('llc.frequency');
    // LIM-2: the admin API's bound on the note holds on the command line too, and nothing changes.
    const long = await setWyomingRules('--name', 'Wyoming', '--note', 'n'.repeat(501));
    expect(long.code).toBe(1);
    expect(long.stderr).toContain('note: must be at most 500 characters');
    expect(await wyomingHistory()).toHaveLength(history.length);
  }, 240_000);
});

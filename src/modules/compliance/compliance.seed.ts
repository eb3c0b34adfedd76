import type pg from 'pg';
import * as repo from './compliance.repo.js';
import { loadDueDateRulesFile, ruleProblems } from './due-date-rules.js';

/**
 * Seeds the compliance calendar's rules from data/annual-report-due-dates.json, one row per jurisdiction
 * (CAL-1). Inserts missing jurisdictions; a row no operator has edited (updated_by 'seed') follows the data file when
 * the file changes, the change logged as made by 'seed' (CAL-34); operator edits survive restarts (src/seeds.ts).
 * @throws Error when a row of the data file is unusable (a broken deployment, caught at boot).
 */
export async function seedComplianceRules(pool: pg.Pool): Promise<void> {
  const { asOf, states } = loadDueDateRulesFile();
  for (const [state, entry] of Object.entries(states)) {
    const problems = ruleProblems(entry);
    if (problems.length)
      throw new Error(
        `annual-report-due-dates.json ${state}: ${problems.map((p) => `${p.field} ${p.message}`).join('; ')}`,
      );
    await repo.insertSeedRule(pool, state, entry, asOf);
    await repo.refreshSeedRule(pool, state, entry, 'data file updated');
  }
}

import type pg from 'pg';
import { loadDueDateRulesFile, ruleProblems } from './due-date-rules.js';

/**
 * Seeds the compliance calendar's rules from data/annual-report-due-dates.json, one row per jurisdiction
 * (CAL-1). Inserts only missing jurisdictions, so operator edits survive restarts (src/seeds.ts contract).
 * @throws Error when a row of the data file is unusable (a broken deployment, caught at boot).
 */
export async function seedComplianceRules(pool: pg.Pool): Promise<void> {
  const { asOf, states } = loadDueDateRulesFile();
  for (const [state, entry] of Object.entries(states)) {
    const problems = ruleProblems(entry);
    if (problems.length) throw new Error(`annual-report-due-dates.json ${state}: ${problems.map((p) => `${p.field} ${p.message}`).join('; ')}`);
    await pool.query(
      `INSERT INTO compliance_rules (state, rule, data_as_of, updated_by) VALUES ($1, $2, $3, 'seed') ON CONFLICT (state) DO NOTHING`,
      [state, entry, asOf],
    );
  }
}

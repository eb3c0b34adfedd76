import type pg from 'pg';
import { seedBilling } from './modules/billing/billing.seed.js';
import { seedComplianceRules } from './modules/compliance/compliance.seed.js';

/**
 * Reference data every database needs (price catalogue, state fee schedule, compliance calendar rules). Each seeder
 * inserts only what is missing, so operator edits survive restarts. Modules add their seeder here.
 */
export const seeders: Array<(pool: pg.Pool) => Promise<void>> = [seedBilling, seedComplianceRules];

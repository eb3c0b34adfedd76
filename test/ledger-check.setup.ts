import { afterAll, expect } from 'vitest';
import { ledgerDifferencesOfThisFile } from './ledger-of-file.js';

// After each test file: every balance in the databases its test apps used equals the sum of its ledger entries
// (BILL-18), so a test that leaves money unexplained fails even when its own assertions pass. Registered for
// every file through setupFiles in vitest.config.ts.
afterAll(async () => {
  const unexplained = await ledgerDifferencesOfThisFile();
  expect(unexplained, 'balances that are not the sum of their ledger entries').toEqual([]);
});

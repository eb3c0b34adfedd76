import type { Command } from 'commander';
import { formatCents } from '../lib/money.js';
import { verifyLedger } from '../modules/ledger-audit/ledger-verify.js';
import { io, withContext } from './cli-context.js';

/**
 * The `ledger` group: `ledger verify`, does every balance equal the sum of its ledger entries? Exits 1 when any
 * does not (BILL-18).
 */
export function registerLedgerCommands(program: Command): void {
  const ledger = program.command('ledger').description('The prepaid balance ledger');
  ledger
    .command('verify')
    .option('--json', 'print JSON')
    .description(
      'Check that every balance equals the sum of its ledger entries; list each difference (exit code 1 when any)',
    )
    .action((opts) =>
      withContext(async ({ ctx }) => {
        const differences = await verifyLedger(ctx);
        io(opts).print({ ok: differences.length === 0, differences }, () =>
          differences.length
            ? differences
                .map(
                  (d) =>
                    `${d.organizationId} ${d.environment}: balance ${formatCents(d.balanceCents)}, entries add up to ${formatCents(d.ledgerSumCents)}${d.lastBalanceAfterCents !== null ? `, newest entry says ${formatCents(d.lastBalanceAfterCents)}` : ''}`,
                )
                .join('\n')
            : 'Every balance equals the sum of its ledger entries.',
        );
        // Thrown, not an exit code: the CLI's error path exits 1 and says so on stderr, after the report above.
        if (differences.length)
          throw new Error(`${differences.length} balance(s) differ from the sum of their ledger entries`);
      }),
    );
}

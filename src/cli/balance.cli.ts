import type { Command } from 'commander';
import { addCredit } from '../modules/billing/balance.service.js';
import { balanceTransactionView } from '../modules/billing/billing.views.js';
import { formatDollars } from '../lib/money.js';
import { dollarsOption, envOption, io, withContext } from './cli-context.js';

/** The `balance` group: `balance credit` (BILL-14). */
export function registerBalanceCommands(program: Command): void {
  program
    .command('balance')
    .description('Prepaid balances')
    .command('credit')
    .requiredOption('--org <organizationId>', 'organization id (org_…)')
    .requiredOption('--environment <env>', 'live or test', envOption)
    .requiredOption('--amount <dollars>', 'dollars to add (> 0, at most two decimals)', dollarsOption)
    .option('--note <text>', 'description of the credit')
    .option('--json', 'print JSON')
    .description("Credit an organization's balance")
    .action((opts) =>
      withContext(async ({ ctx }) => {
        const txn = balanceTransactionView(
          await addCredit(
            ctx.pool,
            { organizationId: opts.org, environment: opts.environment },
            opts.amount,
            opts.note ?? 'Operator credit',
            'cli',
          ),
        );
        io(opts).print(
          txn,
          () =>
            `Credited ${formatDollars(txn.amount)} to ${opts.org} (${opts.environment}); balance is now ${formatDollars(txn.balanceAfter)} (${txn.id})`,
        );
      }),
    );
}

import type { Command } from 'commander';
import { formatCents } from '../lib/money.js';
import { renewDueSubscriptions } from '../modules/subscriptions/subscriptions.service.js';
import { renewalRunView } from '../modules/subscriptions/subscriptions.views.js';
import { envOption, io, withContext } from './cli-context.js';

/** Commander parser of `--as-of`: a real calendar date 'YYYY-MM-DD'. @throws Error naming the option otherwise. */
function dateOption(value: string): string {
  const d = new Date(`${value}T00:00:00Z`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== value) {
    throw new Error(`--as-of must be a date YYYY-MM-DD (got '${value}')`);
  }
  return value;
}

/**
 * `subscriptions renew [--as-of YYYY-MM-DD] [--org org_…] [--environment live|test] [--json]`: the daily renewal
 * run by hand (the worker runs it at 04:17 UTC). Idempotent; exits 1 when a subscription failed.
 */
export function registerSubscriptionsCommands(program: Command): void {
  program
    .command('subscriptions')
    .description('Registered agent and annual report subscriptions')
    .command('renew')
    .option('--as-of <date>', 'renew what is due on this UTC date (default today)', dateOption)
    .option('--org <organizationId>', 'only this organization')
    .option('--environment <env>', 'only live or test', envOption)
    .option('--json', 'print JSON')
    .description('Charge balance-billed subscriptions whose year has ended (past_due when the balance is short)')
    .action((opts) =>
      withContext(async ({ ctx }) => {
        const summary = await renewDueSubscriptions(ctx, {
          asOf: opts.asOf,
          organizationId: opts.org,
          environment: opts.environment,
          actor: 'cli',
        });
        io(opts).print(renewalRunView(summary), () =>
          [
            `Renewal run for ${summary.asOf}: ${
              Object.entries(summary.counts)
                .filter(([, n]) => n > 0)
                .map(([k, n]) => `${n} ${k}`)
                .join(', ') || 'nothing due'
            }`,
            ...summary.outcomes.map(
              (o) =>
                `  ${o.orderId} ${o.orderType ?? ''} ${o.result}${o.amountCents ? ` ${formatCents(o.amountCents)}` : ''}` +
                `${o.currentPeriodEnd ? ` (period ends ${o.currentPeriodEnd})` : ''}${o.error ? `: ${o.error}` : ''}`,
            ),
          ].join('\n'),
        );
        if (summary.counts.failed > 0) process.exitCode = 1;
      }),
    );
}

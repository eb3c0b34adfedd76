import type { Command } from 'commander';
import { addCredit } from '../modules/billing/balance.service.js';
import { balanceTransactionView } from '../modules/billing/billing.views.js';
import { fundingFilterOf, fundingOverview } from '../modules/funding/funding-admin.service.js';
import { centsToDollars, formatCents, formatDollars } from '../lib/money.js';
import { dollarsOption, envOption, io, withContext } from './cli-context.js';

/** The `balance` group: `balance credit` (BILL-14) and `balance top-ups` (FUND-27). */
export function registerBalanceCommands(program: Command): void {
  const balance = program.command('balance').description('Prepaid balances');
  balance
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

  // FUND-27: what the console's Top-ups page shows, with the same filters.
  balance
    .command('top-ups')
    .option('--org <organizationId>', 'one organization (org_…)')
    .option('--environment <env>', 'live or test', envOption)
    .option('--status <status>', 'pending, processing, succeeded, failed or expired')
    .option('--taken-back', 'only top-ups a dispute or refund took money from')
    .option('--show <what>', 'all (default), top-ups or reversals (disputes, refunds, won disputes)')
    .option('--from <day>', 'created on or after this UTC day (YYYY-MM-DD)')
    .option('--to <day>', 'created on or before this UTC day (YYYY-MM-DD)')
    .option('--limit <n>', 'rows per list (1-500, default 50)', (v) => Number(v))
    .option('--json', 'print JSON')
    .description('List top-ups, their failures, and the disputes and refunds that took money back')
    .action((opts) =>
      withContext(async ({ ctx }) => {
        const { filter, problems } = fundingFilterOf({
          organizationId: opts.org,
          environment: opts.environment,
          status: opts.status,
          takenBack: opts.takenBack ? '1' : undefined,
          show: opts.show,
          from: opts.from,
          to: opts.to,
        });
        const [problem] = Object.entries(problems);
        if (problem) throw new Error(`--${problem[0]}: ${problem[1]}`);
        const limit = Number.isInteger(opts.limit) && opts.limit >= 1 && opts.limit <= 500 ? opts.limit : 50;
        const { topUps, reversals } = await fundingOverview(ctx.pool, filter, limit);
        const json = {
          topUps: topUps.map((t) => ({
            id: t.id,
            organizationId: t.organization_id,
            organizationName: t.organization_name,
            environment: t.environment,
            amount: centsToDollars(t.amount_cents),
            status: t.status,
            disputed: centsToDollars(t.disputed_cents),
            refunded: centsToDollars(t.refunded_cents),
            paymentIntent: t.payment_intent,
            failureMessage: t.failure_message,
            createdAt: t.created_at.toISOString(),
          })),
          reversals: reversals.map((r) => ({
            id: r.id,
            organizationId: r.organization_id,
            organizationName: r.organization_name,
            environment: r.environment,
            kind: r.line_type,
            reference: r.reference,
            amount: centsToDollars(r.amount_cents),
            balanceAfter: centsToDollars(r.balance_after_cents),
            createdAt: r.created_at.toISOString(),
          })),
        };
        io(opts).print(json, () => {
          const lines: string[] = [];
          if (filter.show !== 'reversals') {
            lines.push(`Top-ups (${topUps.length}${topUps.length === limit ? ', more may follow' : ''}):`);
            for (const t of topUps) {
              const back = [
                Number(t.disputed_cents) ? `disputed ${formatCents(Number(t.disputed_cents))}` : '',
                Number(t.refunded_cents) ? `refunded ${formatCents(Number(t.refunded_cents))}` : '',
              ].filter(Boolean);
              lines.push(
                `  ${t.created_at.toISOString().slice(0, 16)}  ${t.id}  ${t.organization_id} ${t.environment}  ${formatCents(Number(t.amount_cents))}  ${t.status}${back.length ? `  ${back.join(', ')}` : ''}${t.failure_message ? `  (${t.failure_message})` : ''}`,
              );
            }
          }
          if (filter.show !== 'top-ups') {
            lines.push(`Disputes, refunds and won disputes (${reversals.length}):`);
            for (const r of reversals)
              lines.push(
                `  ${r.created_at.toISOString().slice(0, 16)}  ${r.line_type === 'dispute_won' ? 'dispute won' : r.line_type}  ${r.reference}  ${r.organization_id} ${r.environment}  ${formatCents(Number(r.amount_cents))}  balance after ${formatCents(Number(r.balance_after_cents))}`,
              );
          }
          return lines.join('\n');
        });
      }),
    );
}

import type { Command } from 'commander';
import { addCredit } from '../modules/billing/balance.service.js';
import { balanceTransactionView } from '../modules/billing/billing.views.js';
import { fundingFilterOf, fundingOverview } from '../modules/funding/funding-admin.service.js';
import { centsToDollars, formatCents, formatDollars } from '../lib/money.js';
import { dollarsOption, envOption, io, withContext } from './cli-context.js';

/** The `balance` group: `balance credit` (BILL-14) and `balance top-ups` (FUND-27, FUND-40, FUND-41). */
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

  // FUND-27, FUND-40, FUND-41: what the console's Top-ups page shows, with the same filters.
  balance
    .command('top-ups')
    .option('--org <organizationId>', 'one organization (org_…)')
    .option('--environment <env>', 'live or test', envOption)
    .option('--status <status>', 'pending, queued, processing, succeeded, failed or expired (top-ups and recharges)')
    .option('--taken-back', 'only top-ups (and recharges) a dispute or refund took money from')
    .option('--show <what>', 'all (default), top-ups, recharges or reversals (disputes, refunds, won disputes)')
    .option('--from <day>', 'created on or after this UTC day (YYYY-MM-DD)')
    .option('--to <day>', 'created on or before this UTC day (YYYY-MM-DD)')
    .option('--limit <n>', 'rows per list (1-500, default 50)', (v) => Number(v))
    .option('--json', 'print JSON')
    .description('List top-ups, automatic recharges, their failures, and the disputes and refunds that took money back')
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
        const { topUps, recharges, reversals } = await fundingOverview(ctx.pool, filter, limit);
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
          recharges: recharges.map((r) => ({
            id: r.id,
            organizationId: r.organization_id,
            organizationName: r.organization_name,
            environment: r.environment,
            amount: centsToDollars(r.amount_cents),
            threshold: centsToDollars(r.threshold_cents),
            balanceAtTrigger: r.balance_cents === null ? null : centsToDollars(r.balance_cents),
            status: r.status,
            attempts: r.attempts,
            failureMessage: r.failure_message,
            nextAttemptAt: r.status === 'queued' ? (r.next_attempt_at?.toISOString() ?? null) : null,
            topUpId: r.top_up_id,
            takenBack: centsToDollars(r.taken_back_cents),
            paymentIntent: r.payment_intent,
            createdAt: r.created_at.toISOString(),
            settledAt: r.settled_at?.toISOString() ?? null,
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
          if (filter.show === 'all' || filter.show === 'top-ups') {
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
          if (filter.show === 'all' || filter.show === 'recharges') {
            lines.push(
              `Automatic recharges (${recharges.length}${recharges.length === limit ? ', more may follow' : ''}):`,
            );
            for (const r of recharges) {
              const more = [
                r.attempts ? `${r.attempts} failed attempt${r.attempts === 1 ? '' : 's'}` : '',
                r.top_up_id ? `top-up ${r.top_up_id}` : '',
                Number(r.taken_back_cents) ? `taken back ${formatCents(Number(r.taken_back_cents))}` : '',
                r.status === 'queued' && r.next_attempt_at
                  ? `next attempt ${r.next_attempt_at.toISOString().slice(0, 16)}`
                  : '',
              ].filter(Boolean);
              lines.push(
                `  ${r.created_at.toISOString().slice(0, 16)}  ${r.id}  ${r.organization_id} ${r.environment}  ${formatCents(Number(r.amount_cents))} below ${formatCents(Number(r.threshold_cents))}  ${r.status}${more.length ? `  ${more.join(', ')}` : ''}${r.failure_message ? `  (${r.failure_message})` : ''}`,
              );
            }
          }
          if (filter.show === 'all' || filter.show === 'reversals') {
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

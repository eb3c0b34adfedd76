import type { Command } from 'commander';
import { deliveryBacklog, organizationWebhookHealth, webhookOverview } from '../modules/console/webhook-health.js';
import { io, withContext } from './cli-context.js';

/** The `webhooks` group: `webhooks health`, the delivery backlog and each endpoint's health (WH-19). */
export function registerWebhooksCommands(program: Command): void {
  const webhooks = program.command('webhooks').description('Webhook endpoints and deliveries');
  webhooks
    .command('health')
    .option('--org <organizationId>', 'one organization: endpoints and recent attempts')
    .option(
      '--limit <n>',
      'recent attempts to show (with --org)',
      (v: string) => Math.max(1, Math.min(500, Number.parseInt(v, 10) || 20)),
      20,
    )
    .option('--json', 'print JSON')
    .description(
      'Webhook health: the delivery backlog, failing and disabled endpoints, recent attempts with status codes',
    )
    .action((opts) =>
      withContext(async ({ ctx }) => {
        if (!opts.org) {
          const [backlog, organizations] = await Promise.all([deliveryBacklog(ctx.pool), webhookOverview(ctx.pool)]);
          io(opts).print({ backlog, organizations }, () =>
            [
              `Backlog: ${backlog.dueDeliveries} due deliveries, oldest due ${backlog.oldestDueSeconds.toFixed(1)} s`,
              ...organizations.map(
                (r) =>
                  `${r.organizationId}  ${r.organizationName.padEnd(28)} endpoints ${r.endpoints}  failing ${r.failing}  disabled ${r.disabled}  24h ok ${r.attemptsOk} failed ${r.attemptsFailed}  pending ${r.pendingDeliveries}  due ${r.dueDeliveries}`,
              ),
              ...(organizations.length ? [] : ['No webhook endpoints.']),
            ].join('\n'),
          );
          return;
        }
        const health = await organizationWebhookHealth(ctx.pool, opts.org, opts.limit);
        io(opts).print(health, () =>
          [
            `${health.organization.id}  ${health.organization.name}`,
            'Endpoints:',
            ...health.endpoints.map(
              (e) =>
                `  ${e.state.padEnd(8)} ${e.environment}  ${e.url}  ok ${e.attemptsOk} failed ${e.attemptsFailed} (${health.windowHours}h)${e.disabledReason ? `  ${e.disabledReason}` : ''}${e.failingSince ? `  failing since ${e.failingSince}` : ''}`,
            ),
            'Recent attempts:',
            ...health.recentAttempts.map(
              (a) =>
                `  ${a.at}  ${String(a.statusCode ?? 'ERR').padEnd(4)} ${a.eventType.padEnd(22)} #${a.attemptNumber} ${a.durationMs}ms  ${a.url}${a.error ? `  ${a.error}` : ''}`,
            ),
          ].join('\n'),
        );
      }),
    );
}

import type { Command } from 'commander';
import { formatCents } from '../lib/money.js';
import { listOrganizationSummaries, organizationDetail, setWhiteLabelDomain, verifyDomainForOperator, type OrganizationDetail } from '../modules/console/organizations.console.js';
import { deliveryBacklog, organizationWebhookHealth, webhookOverview } from '../modules/console/webhook-health.js';
import { io, withContext } from './cli-context.js';

/** The command group `name`, created when no other registrar made it yet (so modules can share `org`). */
export function group(program: Command, name: string, description: string): Command {
  return program.commands.find((c) => c.name() === name) ?? program.command(name).description(description);
}

/** `org list`, `org show`, `org set-domain`, `webhooks health` (issue 6 items 4-5). */
export function registerConsoleOrgCommands(program: Command): void {
  const org = group(program, 'org', 'Organizations (tenants)');
  org.command('list')
    .option('--json', 'print JSON')
    .description('List organizations with balances (dollars), active keys and open live orders')
    .action((opts) => withContext(async ({ ctx }) => {
      const rows = await listOrganizationSummaries(ctx.pool);
      const out = rows.map((r) => ({
        id: r.id, name: r.name, whiteLabelDomain: r.whiteLabelDomain, balances: { live: r.liveBalanceCents / 100, test: r.testBalanceCents / 100 },
        activeKeys: r.activeKeys, openLiveOrders: r.openLiveOrders, createdAt: r.createdAt.toISOString(),
      }));
      io(opts).print(out, () => rows.map((r) => `${r.id}  ${r.name.padEnd(28)} live ${formatCents(r.liveBalanceCents).padStart(12)}  test ${formatCents(r.testBalanceCents).padStart(12)}  keys ${r.activeKeys}  open ${r.openLiveOrders}${r.whiteLabelDomain ? `  ${r.whiteLabelDomain}` : ''}`).join('\n') || 'No organizations.');
    }));

  org.command('show')
    .argument('<organizationId>', 'organization id (org_…)')
    .option('--json', 'print JSON')
    .description('Show an organization: balances, keys (redacted), domain')
    .action((id: string, opts) => withContext(async ({ ctx }) => {
      const { balanceCents, ...o } = await organizationDetail(ctx, id);
      io(opts).print(o, () => [
        `${o.id}  ${o.name}`,
        `  white-label domain: ${o.whiteLabelDomain ? `${o.whiteLabelDomain} (${o.whiteLabelDomainVerification?.status})` : '—'}`,
        `  contact email: ${o.contactEmail ?? '—'}`,
        `  balances: live ${formatCents(balanceCents.live)}, test ${formatCents(balanceCents.test)}`,
        '  keys:',
        ...o.apiKeys.map((k) => `    ${k.id}  ${k.environment}  ${k.redactedKey}  ${k.revokedAt ? `revoked ${k.revokedAt}` : 'active'}`),
      ].join('\n'));
    }));

  org.command('set-domain')
    .argument('<organizationId>', 'organization id (org_…)')
    .argument('[domain]', 'host name such as portal.example.com; omit (or use --clear) to remove')
    .option('--clear', 'remove the white-label domain')
    .option('--verified', 'you confirmed the organization controls the domain: put it in effect now, without the DNS TXT check')
    .option('--json', 'print JSON')
    .description('Set or remove an organization\'s white-label domain (pending until its DNS TXT record is verified, unless --verified)')
    .action((id: string, domain: string | undefined, opts) => withContext(async ({ ctx }) => {
      if (!domain && !opts.clear) throw new Error('Give a domain, or --clear to remove it');
      const { balanceCents: _omit, ...o } = await setWhiteLabelDomain(ctx, id, opts.clear ? null : domain ?? null, { verified: opts.verified === true });
      io(opts).print(o, () => describeDomain(o));
    }));

  org.command('verify-domain')
    .argument('<organizationId>', 'organization id (org_…)')
    .option('--json', 'print JSON')
    .description('Check the DNS TXT record of an organization\'s requested white-label domain; when found the domain takes effect')
    .action((id: string, opts) => withContext(async ({ ctx }) => {
      const { balanceCents: _omit, ...o } = await verifyDomainForOperator(ctx, id);
      io(opts).print(o, () => describeDomain(o));
    }));

  const webhooks = group(program, 'webhooks', 'Webhook endpoints and deliveries');
  webhooks.command('health')
    .option('--org <organizationId>', 'one organization: endpoints and recent attempts')
    .option('--limit <n>', 'recent attempts to show (with --org)', (v: string) => Math.max(1, Math.min(500, Number.parseInt(v, 10) || 20)), 20)
    .option('--json', 'print JSON')
    .description('Webhook health: the delivery backlog, failing and disabled endpoints, recent attempts with status codes')
    .action((opts) => withContext(async ({ ctx }) => {
      if (!opts.org) {
        const [backlog, organizations] = await Promise.all([deliveryBacklog(ctx.pool), webhookOverview(ctx.pool)]);
        io(opts).print({ backlog, organizations }, () => [
          `Backlog: ${backlog.dueDeliveries} due deliveries, oldest due ${backlog.oldestDueSeconds.toFixed(1)} s`,
          ...organizations.map((r) => `${r.organizationId}  ${r.organizationName.padEnd(28)} endpoints ${r.endpoints}  failing ${r.failing}  disabled ${r.disabled}  24h ok ${r.attemptsOk} failed ${r.attemptsFailed}  pending ${r.pendingDeliveries}  due ${r.dueDeliveries}`),
          ...(organizations.length ? [] : ['No webhook endpoints.']),
        ].join('\n'));
        return;
      }
      const health = await organizationWebhookHealth(ctx.pool, opts.org, opts.limit);
      io(opts).print(health, () => [
        `${health.organization.id}  ${health.organization.name}`,
        'Endpoints:',
        ...health.endpoints.map((e) => `  ${e.state.padEnd(8)} ${e.environment}  ${e.url}  ok ${e.attemptsOk} failed ${e.attemptsFailed} (${health.windowHours}h)${e.disabledReason ? `  ${e.disabledReason}` : ''}${e.failingSince ? `  failing since ${e.failingSince}` : ''}`),
        'Recent attempts:',
        ...health.recentAttempts.map((a) => `  ${a.at}  ${String(a.statusCode ?? 'ERR').padEnd(4)} ${a.eventType.padEnd(22)} #${a.attemptNumber} ${a.durationMs}ms  ${a.url}${a.error ? `  ${a.error}` : ''}`),
      ].join('\n'));
    }));
}

// One line on the domain's state; a pending domain also says which record the organization must publish.
function describeDomain(o: Omit<OrganizationDetail, 'balanceCents'>): string {
  const v = o.whiteLabelDomainVerification;
  if (!o.whiteLabelDomain || !v) return `${o.id}: white-label domain removed`;
  if (v.status === 'verified') return `${o.id}: white-label domain ${o.whiteLabelDomain} is verified and in effect`;
  return `${o.id}: white-label domain ${o.whiteLabelDomain} is pending; it takes effect once the TXT record ${v.recordName} holds "${v.recordValue}" and `
    + `\`org verify-domain ${o.id}\` finds it (or set it again with --verified)`;
}

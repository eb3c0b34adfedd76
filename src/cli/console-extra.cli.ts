import type { Command } from 'commander';
import { formatCents } from '../lib/money.js';
import { listCatalog, listOrgWholesale, removeOrgWholesale } from '../modules/billing/wholesale.service.js';
import { getOrderDetail } from '../modules/filings/filings.service.js';
import { maskDeep } from '../modules/console/order-view.js';
import * as q from '../modules/console/queue.repo.js';
import { io, withContext } from './cli-context.js';
import { group } from './console-orgs.cli.js';

/**
 * The console's remaining actions as commands (issue 6 item 5): `orders show` (the order page),
 * `prices wholesale list` and `prices wholesale remove` (per-organization override).
 */
export function registerConsoleExtraCommands(program: Command): void {
  const orders = group(program, 'orders', 'Orders and their filings');
  orders.command('show <orderId>')
    .option('--json', 'print JSON')
    .description('Everything about one order: request (SSNs masked), status history, events and webhook deliveries')
    .action((orderId: string, opts) => withContext(async ({ ctx }) => {
      const detail = await getOrderDetail(ctx, orderId);
      const row = await q.findOrderDetail(ctx.pool, orderId);
      const events = await q.findOrderEvents(ctx.pool, row!);
      const deliveries = await q.findDeliveries(ctx.pool, events.map((e) => e.id));
      const out = {
        ...detail,
        request: maskDeep(row!.group_request),
        events: events.map((e) => ({
          id: e.id, type: e.type, createdAt: e.created_at.toISOString(), data: e.data,
          deliveries: deliveries.filter((d) => d.event_id === e.id).map((d) => ({ id: d.id, url: d.url, status: d.status, attempts: d.attempts })),
        })),
      };
      io(opts).print(out, () => [
        `${row!.id}  ${row!.environment}  ${row!.order_type} in ${row!.filing_state}  ${row!.filing_status}${row!.exception_code ? ` ${row!.exception_code}` : ''}`,
        `  ${row!.organization_name} (${row!.organization_id}) · ${String(row!.company.legal_name)}`,
        'History:',
        ...detail.history.map((h) => `  ${JSON.stringify(h)}`),
        'Events:',
        ...out.events.map((e) => `  ${e.createdAt}  ${e.type}  ${e.id}  ${e.deliveries.map((d) => `${d.status}(${d.attempts.map((a) => a.status_code ?? 'ERR').join(',')})`).join(' ') || 'no deliveries'}`),
      ].join('\n'));
    }));

  const wholesale = group(group(program, 'prices', 'Prices'), 'wholesale', 'Wholesale prices');
  wholesale.command('list')
    .option('--org <organizationId>', 'one organization\'s effective wholesale prices')
    .option('--json', 'print JSON')
    .description('List default wholesale and list prices, or one organization\'s effective wholesale prices')
    .action((opts) => withContext(async ({ ctx }) => {
      if (opts.org) {
        const rows = await listOrgWholesale(ctx.pool, opts.org);
        io(opts).print(rows, () => rows.map((r) => `${r.type.padEnd(30)} ${formatCents(Math.round(r.wholesaleAmount * 100)).padStart(10)}${r.overridden ? `  override (default ${formatCents(Math.round(r.defaultWholesaleAmount * 100))})` : ''}`).join('\n'));
        return;
      }
      const rows = await listCatalog(ctx.pool);
      io(opts).print(rows, () => rows.map((r) => `${r.type.padEnd(30)} wholesale ${formatCents(Math.round(r.wholesaleAmount * 100)).padStart(10)}  list ${formatCents(Math.round(r.defaultAmount * 100)).padStart(10)}`).join('\n'));
    }));
  wholesale.command('remove')
    .requiredOption('--org <organizationId>', 'organization id (org_…)')
    .requiredOption('--type <type>', 'product type, e.g. formation_tier_1')
    .option('--json', 'print JSON')
    .description('Remove an organization\'s wholesale override; the default applies again')
    .action((opts) => withContext(async ({ ctx }) => {
      const result = await removeOrgWholesale(ctx.pool, opts.org, opts.type);
      io(opts).print(result, () => `${result.type} for ${result.organizationId}: override removed, wholesale is ${formatCents(Math.round(result.wholesaleAmount * 100))}`);
    }));
}

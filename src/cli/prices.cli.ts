import type { Command } from 'commander';
import { cliActor } from '../modules/audit/audit.service.js';
import { formatDollars } from '../lib/money.js';
import {
  listCatalog,
  listOrgWholesale,
  removeOrgWholesale,
  setCatalogPrice,
  setOrgWholesale,
} from '../modules/billing/wholesale.service.js';
import {
  catalogChangeView,
  catalogView,
  orgWholesaleChangeView,
  orgWholesaleView,
} from '../modules/billing/billing.views.js';
import { dollarsOption, io, withContext } from './cli-context.js';

/** The `prices` group: `prices wholesale set|list|remove`, the catalogue's and each organization's wholesale prices (PRICE-7). */
export function registerPricesCommands(program: Command): void {
  const wholesale = program
    .command('prices')
    .description('Prices')
    .command('wholesale')
    .description('Wholesale prices');
  wholesale
    .command('set')
    .requiredOption('--type <type>', 'product type, e.g. formation_tier_1')
    .requiredOption('--wholesale <dollars>', 'wholesale price, whole dollars', dollarsOption)
    .option('--default <dollars>', 'list price, whole dollars (not with --org)', dollarsOption)
    .option('--org <organizationId>', "set this organization's override instead of the default")
    .option('--json', 'print JSON')
    .description(
      "Set the default wholesale (and list) price, or one organization's override; raises retail prices below the new floor",
    )
    .action((opts) =>
      withContext(async ({ ctx }) => {
        if (opts.org && opts.default !== undefined)
          throw new Error('--default applies to the catalogue only; omit it with --org');
        const result = opts.org
          ? orgWholesaleChangeView(await setOrgWholesale(ctx.pool, opts.org, opts.type, opts.wholesale, cliActor()))
          : catalogChangeView(
              await setCatalogPrice(ctx.pool, opts.type, {
                wholesaleAmount: opts.wholesale,
                defaultAmount: opts.default,
              }),
            );
        io(opts).print(result, () => {
          const head =
            'price' in result
              ? `${result.price.type}: wholesale ${formatDollars(result.price.wholesaleAmount)}, list ${formatDollars(result.price.defaultAmount)}`
              : `${result.type} for ${result.organizationId}: wholesale ${formatDollars(result.wholesaleAmount)} (default ${formatDollars(result.defaultWholesaleAmount)})`;
          const raised = result.retailPricesRaised.map(
            (r) => `  raised ${r.organizationId} (${r.environment}) retail to ${formatDollars(r.retailAmount)}`,
          );
          return [head, ...raised].join('\n');
        });
      }),
    );
  wholesale
    .command('list')
    .option('--org <organizationId>', "one organization's effective wholesale prices")
    .option('--json', 'print JSON')
    .description("List default wholesale and list prices, or one organization's effective wholesale prices")
    .action((opts) =>
      withContext(async ({ ctx }) => {
        if (opts.org) {
          const rows = (await listOrgWholesale(ctx.pool, opts.org)).map(orgWholesaleView);
          io(opts).print(rows, () =>
            rows
              .map(
                (r) =>
                  `${r.type.padEnd(30)} ${formatDollars(r.wholesaleAmount).padStart(10)}${r.overridden ? `  override (default ${formatDollars(r.defaultWholesaleAmount)})` : ''}`,
              )
              .join('\n'),
          );
          return;
        }
        const rows = (await listCatalog(ctx.pool)).map(catalogView);
        io(opts).print(rows, () =>
          rows
            .map(
              (r) =>
                `${r.type.padEnd(30)} wholesale ${formatDollars(r.wholesaleAmount).padStart(10)}  list ${formatDollars(r.defaultAmount).padStart(10)}`,
            )
            .join('\n'),
        );
      }),
    );
  wholesale
    .command('remove')
    .requiredOption('--org <organizationId>', 'organization id (org_…)')
    .requiredOption('--type <type>', 'product type, e.g. formation_tier_1')
    .option('--json', 'print JSON')
    .description("Remove an organization's wholesale override; the default applies again")
    .action((opts) =>
      withContext(async ({ ctx }) => {
        const result = orgWholesaleChangeView(await removeOrgWholesale(ctx.pool, opts.org, opts.type, cliActor()));
        io(opts).print(
          result,
          () =>
            `${result.type} for ${result.organizationId}: override removed, wholesale is ${formatDollars(result.wholesaleAmount)}`,
        );
      }),
    );
}

import type { Command } from 'commander';
import { formatCents, dollarsToCents } from '../lib/money.js';
import { addCredit } from '../modules/billing/balance.service.js';
import { listStateFeeViews, updateStateFee, type StateFeeUpdate } from '../modules/billing/state-fees.service.js';
import { setCatalogPrice, setOrgWholesale } from '../modules/billing/wholesale.service.js';
import { envOption, io, withContext } from './cli-context.js';

const dollars = (value: string): number => {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n)) throw new Error(`'${value}' is not a dollar amount`);
  return n;
};

const money = (d: number | null) => (d === null ? '—' : formatCents(dollarsToCents(d)));

/** `balance credit`, `prices wholesale set`, `fees list`, `fees set` (issue 3 items 3, 4, 8). */
export function registerBillingCommands(program: Command): void {
  program.command('balance').description('Prepaid balances')
    .command('credit')
    .requiredOption('--org <organizationId>', 'organization id (org_…)')
    .requiredOption('--environment <env>', 'live or test', envOption)
    .requiredOption('--amount <dollars>', 'dollars to add (> 0, at most two decimals)', dollars)
    .option('--note <text>', 'description of the credit')
    .option('--json', 'print JSON')
    .description('Credit an organization\'s balance')
    .action((opts) => withContext(async ({ ctx }) => {
      const txn = await addCredit(ctx.pool, { organizationId: opts.org, environment: opts.environment }, opts.amount, opts.note ?? 'Operator credit', 'cli');
      io(opts).print(txn, () => `Credited ${money(txn.amount)} to ${opts.org} (${opts.environment}); balance is now ${money(txn.balanceAfter)} (${txn.id})`);
    }));

  program.command('prices').description('Prices').command('wholesale').description('Wholesale prices')
    .command('set')
    .requiredOption('--type <type>', 'product type, e.g. formation_tier_1')
    .requiredOption('--wholesale <dollars>', 'wholesale price, whole dollars', dollars)
    .option('--default <dollars>', 'list price, whole dollars (not with --org)', dollars)
    .option('--org <organizationId>', 'set this organization\'s override instead of the default')
    .option('--json', 'print JSON')
    .description('Set the default wholesale (and list) price, or one organization\'s override; raises retail prices below the new floor')
    .action((opts) => withContext(async ({ ctx }) => {
      if (opts.org && opts.default !== undefined) throw new Error('--default applies to the catalogue only; omit it with --org');
      const result = opts.org
        ? await setOrgWholesale(ctx.pool, opts.org, opts.type, opts.wholesale)
        : await setCatalogPrice(ctx.pool, opts.type, { wholesaleAmount: opts.wholesale, defaultAmount: opts.default });
      io(opts).print(result, () => {
        const head = 'price' in result
          ? `${result.price.type}: wholesale ${money(result.price.wholesaleAmount)}, list ${money(result.price.defaultAmount)}`
          : `${result.type} for ${result.organizationId}: wholesale ${money(result.wholesaleAmount)} (default ${money(result.defaultWholesaleAmount)})`;
        const raised = result.retailPricesRaised.map((r) => `  raised ${r.organizationId} (${r.environment}) retail to ${money(r.retailAmount)}`);
        return [head, ...raised].join('\n');
      });
    }));

  const fees = program.command('fees').description('State fee schedule');
  fees.command('list')
    .option('--json', 'print JSON')
    .description('List every state\'s fees (dollars)')
    .action((opts) => withContext(async ({ ctx }) => {
      const rows = await listStateFeeViews(ctx.pool);
      io(opts).print(rows, () => [
        'ST  LLC form  CORP form  LLC foreign  CORP foreign  LLC report  CORP report  Expedited',
        ...rows.map((r) => [r.state.padEnd(3), money(r.llcFormation).padStart(9), money(r.corpFormation).padStart(10), money(r.llcForeignQualification).padStart(12),
          money(r.corpForeignQualification).padStart(13), money(r.llcAnnualReport).padStart(11), money(r.corpAnnualReport).padStart(12), money(r.expeditedFormation).padStart(10)].join(' ')),
      ].join('\n'));
    }));

  fees.command('set')
    .requiredOption('--state <code>', 'two-letter state code')
    .option('--llc-formation <dollars>', 'LLC formation fee', dollars)
    .option('--corp-formation <dollars>', 'corporation formation fee', dollars)
    .option('--llc-foreign <dollars>', 'foreign LLC qualification fee', dollars)
    .option('--corp-foreign <dollars>', 'foreign corporation qualification fee', dollars)
    .option('--llc-annual-report <dollars>', 'LLC annual report fee', dollars)
    .option('--corp-annual-report <dollars>', 'corporation annual report fee', dollars)
    .option('--expedited <dollars|none>', 'expedited LLC formation fee, or none', (v: string) => (v === 'none' ? null : dollars(v)))
    .option('--note <text>', 'why (kept in the fee history)')
    .option('--json', 'print JSON')
    .description('Change fees of one state (dollars)')
    .action((opts) => withContext(async ({ ctx }) => {
      const update: StateFeeUpdate = {
        llcFormation: opts.llcFormation, corpFormation: opts.corpFormation,
        llcForeignQualification: opts.llcForeign, corpForeignQualification: opts.corpForeign,
        llcAnnualReport: opts.llcAnnualReport, corpAnnualReport: opts.corpAnnualReport,
        expeditedFormation: opts.expedited, note: opts.note,
      };
      const row = await updateStateFee(ctx.pool, opts.state, update, 'cli');
      io(opts).print(row, () => `${row.state} (${row.name}): LLC ${money(row.llcFormation)}, CORP ${money(row.corpFormation)}, foreign LLC ${money(row.llcForeignQualification)}, foreign CORP ${money(row.corpForeignQualification)}, report LLC ${money(row.llcAnnualReport)}, report CORP ${money(row.corpAnnualReport)}, expedited ${money(row.expeditedFormation)}`);
    }));
}

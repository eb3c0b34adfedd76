import type { Command } from 'commander';
import { listStateFees, updateStateFee, type StateFeeUpdate } from '../modules/billing/state-fees.service.js';
import { stateFeeView } from '../modules/billing/billing.views.js';
import { formatDollars } from '../lib/money.js';
import { dollarsOption, io, withContext } from './cli-context.js';

/** The `fees` group: `fees list`, `fees set` (BILL-16). */
export function registerFeesCommands(program: Command): void {
  const fees = program.command('fees').description('State fee schedule');
  fees
    .command('list')
    .option('--json', 'print JSON')
    .description("List every state's fees (dollars)")
    .action((opts) =>
      withContext(async ({ ctx }) => {
        const rows = (await listStateFees(ctx.pool)).map(stateFeeView);
        io(opts).print(rows, () =>
          [
            'ST  LLC form  CORP form  LLC foreign  CORP foreign  LLC report  CORP report  Expedited',
            ...rows.map((r) =>
              [
                r.state.padEnd(3),
                formatDollars(r.llcFormation).padStart(9),
                formatDollars(r.corpFormation).padStart(10),
                formatDollars(r.llcForeignQualification).padStart(12),
                formatDollars(r.corpForeignQualification).padStart(13),
                formatDollars(r.llcAnnualReport).padStart(11),
                formatDollars(r.corpAnnualReport).padStart(12),
                formatDollars(r.expeditedFormation).padStart(10),
              ].join(' '),
            ),
          ].join('\n'),
        );
      }),
    );

  fees
    .command('set')
    .requiredOption('--state <code>', 'two-letter state code')
    .option('--llc-formation <dollars>', 'LLC formation fee', dollarsOption)
    .option('--corp-formation <dollars>', 'corporation formation fee', dollarsOption)
    .option('--llc-foreign <dollars>', 'foreign LLC qualification fee', dollarsOption)
    .option('--corp-foreign <dollars>', 'foreign corporation qualification fee', dollarsOption)
    .option('--llc-annual-report <dollars>', 'LLC annual report fee', dollarsOption)
    .option('--corp-annual-report <dollars>', 'corporation annual report fee', dollarsOption)
    .option('--expedited <dollars|none>', 'expedited LLC formation fee, or none', (v: string) =>
      v === 'none' ? null : dollarsOption(v),
    )
    .option('--note <text>', 'why (kept in the fee history)')
    .option('--json', 'print JSON')
    .description('Change fees of one state (dollars)')
    .action((opts) =>
      withContext(async ({ ctx }) => {
        const update: StateFeeUpdate = {
          llcFormation: opts.llcFormation,
          corpFormation: opts.corpFormation,
          llcForeignQualification: opts.llcForeign,
          corpForeignQualification: opts.corpForeign,
          llcAnnualReport: opts.llcAnnualReport,
          corpAnnualReport: opts.corpAnnualReport,
          expeditedFormation: opts.expedited,
          note: opts.note,
        };
        const row = stateFeeView(await updateStateFee(ctx.pool, opts.state, update, 'cli'));
        io(opts).print(
          row,
          () =>
            `${row.state} (${row.name}): LLC ${formatDollars(row.llcFormation)}, CORP ${formatDollars(row.corpFormation)}, foreign LLC ${formatDollars(row.llcForeignQualification)}, foreign CORP ${formatDollars(row.corpForeignQualification)}, report LLC ${formatDollars(row.llcAnnualReport)}, report CORP ${formatDollars(row.corpAnnualReport)}, expedited ${formatDollars(row.expeditedFormation)}`,
        );
      }),
    );
}

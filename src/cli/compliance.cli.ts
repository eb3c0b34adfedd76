import os from 'node:os';
import type { Command } from 'commander';
import { todayUtc } from '../modules/compliance/calendar-range.js';
import { ANCHOR_REASONS, setCalendarOverride } from '../modules/compliance/calendar-overrides.service.js';
import { runComplianceReminders } from '../modules/compliance/compliance-reminders.js';
import {
  listRuleChangeViews,
  listRuleViews,
  updateRules,
  type RuleUpdate,
} from '../modules/compliance/compliance-rules.service.js';
import { listTeamDeadlines } from '../modules/compliance/compliance.service.js';
import { deadlineView } from '../modules/compliance/compliance.views.js';
import { envOption, io, withContext } from './cli-context.js';

const jsonObject =
  (flag: string) =>
  (value: string): Record<string, unknown> => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
    } catch {
      throw new Error(`${flag} must be a JSON object, e.g. '{"frequency":"none"}'`);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      throw new Error(`${flag} must be a JSON object`);
    return parsed as Record<string, unknown>;
  };

const STATUSES = ['upcoming', 'open', 'overdue', 'filed'];
const positiveInt = (flag: string) => (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${flag} must be a whole number above 0 (got '${v}')`);
  return n;
};
const statusOption = (v: string) => {
  if (!STATUSES.includes(v)) throw new Error(`--status must be one of ${STATUSES.join(', ')}`);
  return v as 'upcoming';
};

/** Who an edit made from this shell is recorded as (CAL-22): `cli:<login>`. */
const cliActor = () => `cli:${process.env.USER ?? os.userInfo().username}`;

/**
 * `compliance deadlines`, `compliance rules list|set|history`, `compliance reminders run`, `compliance override`
 * (CAL-17, CAL-20, CAL-22, CAL-29, CAL-32).
 */
export function registerComplianceCommands(program: Command): void {
  const compliance = program
    .command('compliance')
    .description('Compliance calendar: state report deadlines and their rules');

  compliance
    .command('deadlines')
    .option('--from <date>', 'first due date (YYYY-MM-DD), default today')
    .option('--to <date>', 'last due date (YYYY-MM-DD), default 18 months after --from')
    .option('--state <code>', 'only this jurisdiction')
    .option('--status <status>', `only this status (${STATUSES.join(', ')})`, statusOption)
    .option('--org <organizationId>', 'only this organization')
    .option('--environment <env>', 'live or test (default both)', envOption)
    .option('--open-only', 'leave out filed reports and those covered by a pending order')
    .option('--limit <n>', 'at most this many (default 500)', positiveInt('--limit'))
    .option('--json', 'print JSON')
    .description("Deadlines of every tenant's companies, by due date")
    .action((opts) =>
      withContext(async ({ ctx }) => {
        const result = await listTeamDeadlines(ctx.pool, {
          from: opts.from,
          to: opts.to,
          jurisdiction: opts.state?.toUpperCase(),
          status: opts.status,
          organizationId: opts.org,
          environment: opts.environment,
          openOnly: Boolean(opts.openOnly),
          limit: opts.limit,
        });
        io(opts).print({ ...result, items: result.items.map(deadlineView) }, () =>
          [
            `Deadlines ${result.from} .. ${result.to}: ${result.items.length}${result.truncated ? ' (more: narrow the range or raise --limit)' : ''}`,
            ...result.items.map((d) =>
              [
                d.dueDate,
                d.status.padEnd(8),
                d.jurisdiction,
                d.kind.padEnd(14),
                d.environment.padEnd(4),
                d.companyId,
                d.legalName,
                `— ${d.reportName}`,
                d.orderId ? `(order ${d.orderId})` : '',
              ]
                .join(' ')
                .trimEnd(),
            ),
          ].join('\n'),
        );
      }),
    );

  const rules = compliance.command('rules').description('The due-date rules per jurisdiction');
  rules
    .command('list')
    .option('--state <code>', 'only this jurisdiction (prints its whole rule)')
    .option('--json', 'print JSON')
    .description('List the rules (frequency and rule kind per entity type)')
    .action((opts) =>
      withContext(async ({ ctx }) => {
        const all = await listRuleViews(ctx.pool);
        const rows = opts.state ? all.filter((r) => r.state === String(opts.state).toUpperCase()) : all;
        io(opts).print(rows, () =>
          opts.state
            ? JSON.stringify(rows[0] ?? null, null, 2)
            : [
                'ST  LLC                                  CORP                                 confidence  updated by',
                ...rows.map((r) =>
                  [
                    r.state.padEnd(3),
                    `${r.llc.frequency} ${r.llc.ruleKind ?? ''}`.padEnd(36),
                    `${r.corporation.frequency} ${r.corporation.ruleKind ?? ''}`.padEnd(36),
                    r.confidence.padEnd(11),
                    r.updatedBy,
                  ].join(' '),
                ),
              ].join('\n'),
        );
      }),
    );

  rules
    .command('set')
    .requiredOption('--state <code>', 'two-letter jurisdiction code')
    .option('--llc <json>', 'fields of the LLC rule to replace, as a JSON object', jsonObject('--llc'))
    .option(
      '--corporation <json>',
      'fields of the corporation rule to replace, as a JSON object',
      jsonObject('--corporation'),
    )
    .option('--name <name>', "the jurisdiction's name")
    .option('--confidence <level>', 'high, medium or low')
    .option('--note <text>', 'why (kept in the change log)')
    .option('--json', 'print JSON')
    .description("Change one jurisdiction's rules; the change is logged with who made it")
    .action((opts) =>
      withContext(async ({ ctx }) => {
        const update: RuleUpdate = {
          llc: opts.llc,
          corporation: opts.corporation,
          name: opts.name,
          confidence: opts.confidence,
          note: opts.note,
        };
        const row = await updateRules(ctx.pool, opts.state, update, cliActor());
        io(opts).print(
          row,
          () =>
            `${row.state} (${row.name}) updated by ${row.updatedBy}: LLC ${row.llc.frequency} ${row.llc.ruleKind ?? ''}, CORP ${row.corporation.frequency} ${row.corporation.ruleKind ?? ''}`,
        );
      }),
    );

  rules
    .command('history')
    .option('--state <code>', 'only this jurisdiction')
    .option('--limit <n>', 'at most this many (default 50)', positiveInt('--limit'))
    .option('--json', 'print JSON')
    .description('Who changed which rules, newest first')
    .action((opts) =>
      withContext(async ({ ctx }) => {
        const changes = await listRuleChangeViews(ctx.pool, opts.state ?? null, opts.limit ?? 50);
        io(opts).print(changes, () =>
          changes.length
            ? changes.map((c) => `${c.changedAt} ${c.state} by ${c.changedBy}${c.note ? `: ${c.note}` : ''}`).join('\n')
            : 'No changes.',
        );
      }),
    );

  compliance
    .command('override')
    .requiredOption('--company <companyId>', 'the company (comp_…)')
    .requiredOption('--state <code>', 'two-letter jurisdiction code')
    .option('--anchor-date <date>', "the date the calendar counts from (YYYY-MM-DD), or 'none' to go back")
    .option('--reason <reason>', `why the anchor changes: ${ANCHOR_REASONS.join(', ')}`)
    .option('--estimated-tax <yes|no>', 'the company pays estimated tax instalments (Delaware corporations)')
    .requiredOption('--note <text>', 'why (kept in the change log)')
    .option('--json', 'print JSON')
    .description(
      "Change a company's calendar in one state: its anchor date or estimated tax flag; logged with who and why",
    )
    .action((opts) =>
      withContext(async ({ ctx }) => {
        const row = await setCalendarOverride(
          ctx.pool,
          opts.company,
          opts.state,
          {
            anchorDate: opts.anchorDate === undefined ? undefined : opts.anchorDate === 'none' ? null : opts.anchorDate,
            anchorReason: opts.reason,
            estimatedTax: opts.estimatedTax === undefined ? undefined : opts.estimatedTax === 'yes',
            note: opts.note,
          },
          cliActor(),
        );
        io(opts).print(
          row,
          () =>
            `${row.companyId} ${row.state}: anchor ${row.anchorDate ?? 'formation/registration date'}${row.anchorReason ? ` (${row.anchorReason})` : ''}, estimated tax ${row.estimatedTax ? 'yes' : 'no'}; by ${row.updatedBy}`,
        );
      }),
    );

  compliance
    .command('reminders')
    .description('Deadline reminders')
    .command('run')
    .option('--as-of <date>', 'run as if today were this date (YYYY-MM-DD), default today (UTC)')
    .option('--json', 'print JSON')
    .description('Send the reminders due (as the worker does daily); each is sent once however often this runs')
    .action((opts) =>
      withContext(async ({ ctx }) => {
        const asOf = opts.asOf ?? todayUtc();
        const emitted = await runComplianceReminders(ctx.pool, asOf);
        io(opts).print({ asOf, emitted }, () =>
          [
            `${emitted.length} reminder(s) sent as of ${asOf}`,
            ...emitted.map(
              (e) =>
                `  ${e.type} ${e.companyId} ${e.jurisdiction} ${e.kind} due ${e.dueDate} (${e.daysUntilDue} days) ${e.eventId}`,
            ),
          ].join('\n'),
        );
      }),
    );
}

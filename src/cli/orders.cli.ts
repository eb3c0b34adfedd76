import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SingleBar, Presets } from 'cli-progress';
import type { Command } from 'commander';
import mime from 'mime-types';
import type { Environment } from '../context.js';
import { AppError } from '../lib/errors.js';
import { maskDeep } from '../modules/console/order-view.js';
import { storeDocument } from '../modules/documents/documents.service.js';
import { getOrderDetail, listOrderQueue, transitionOrder } from '../modules/filings/filings.service.js';
import { adminOrderDetailView } from '../modules/filings/filings.views.js';
import { loadOrderRecord } from '../modules/filings/order-record.js';
import { revealTaxId } from '../modules/filings/tax-id-reveal.js';
import { destroyExpiredTaxIds } from '../modules/orders/ein-tax-ids.js';
import { isFilingStatus } from '../modules/filings/transitions.js';
import { FILING_STATUSES, type FilingStatus } from '../modules/orders/order-statuses.js';
import { envOption, io, withContext } from './cli-context.js';

const ACTOR = 'cli';

const statusOption = (value: string): FilingStatus => {
  if (!isFilingStatus(value)) throw new Error(`status must be one of ${FILING_STATUSES.join(', ')} (got '${value}')`);
  return value;
};
const stateOption = (value: string): string => {
  if (!/^[A-Za-z]{2}$/.test(value)) throw new Error(`--state must be a two-letter code (got '${value}')`);
  return value.toUpperCase();
};

/**
 * The `orders` group: `orders transition|upload|list|advance|show|reveal-tax-id|purge-tax-ids`, the filing team's work
 * from a terminal (FIL-11, CONS-3, CONS-6).
 */
export function registerOrdersCommands(program: Command): void {
  const orders = program.command('orders').description('Orders and their filings');

  orders
    .command('transition <orderId>')
    .requiredOption('--status <status>', `new filing status: ${FILING_STATUSES.join(', ')}`, statusOption)
    .option('--exception-code <code>', 'exception code (460-499), required with --status exception')
    .option('--message <text>', 'exception message shown to the integrator')
    .option('--filing-date <YYYY-MM-DD>', 'with --status filed: the date the state accepted it (default today)')
    .option('--ein <12-3456789>', 'with --status filed on an EIN order: the EIN the IRS assigned')
    .option('--json', 'print JSON')
    .description('Move one order to another filing status (emits filing.status_changed)')
    .action((orderId: string, opts) =>
      withContext(async ({ ctx }) => {
        await transitionOrder(
          ctx,
          null,
          orderId,
          {
            filingStatus: opts.status,
            exceptionCode: opts.exceptionCode,
            exceptionMessage: opts.message,
            filingDate: opts.filingDate,
            ein: opts.ein,
          },
          ACTOR,
        );
        const order = await getOrderDetail(ctx, orderId);
        io(opts).print(order, () => `${order.orderId} is now ${describeStatus(order)}`);
      }),
    );

  orders
    .command('upload <orderId>')
    .requiredOption('--file <path>', 'the document (PDF, PNG, JPEG or TIFF)')
    .requiredOption('--type <documentType>', 'document type, e.g. articles_of_organization')
    .option('--json', 'print JSON')
    .description('Attach a document to an order (emits document.uploaded)')
    .action((orderId: string, opts) =>
      withContext(async ({ ctx }) => {
        // Streamed from the file (DOC-8); a missing file fails here, before anything is stored.
        await fs.promises.access(opts.file, fs.constants.R_OK);
        const { document } = await storeDocument(
          ctx,
          null,
          {
            orderId,
            documentType: opts.type,
            fileName: path.basename(opts.file),
            fileType: mime.lookup(opts.file) || undefined,
            content: fs.createReadStream(opts.file),
          },
          ACTOR,
        );
        io(opts).print(
          document,
          () => `Uploaded ${document.documentId} (${document.documentType}, ${document.fileName}) to ${orderId}`,
        );
      }),
    );

  const list = orders.command('list').option('--status <status>', 'filing status', statusOption);
  withQueueFilters(list)
    .option('--limit <n>', 'at most this many (default 100)', (v) => Number.parseInt(v, 10))
    .option('--json', 'print JSON')
    .description('The filing queue, oldest first')
    .action((opts) =>
      withContext(async ({ ctx }) => {
        const page = await listOrderQueue(ctx.pool, queueFilter(opts, opts.status, opts.limit));
        io(opts).print(page, () =>
          page.data.length
            ? page.data
                .map(
                  (o) =>
                    `${o.orderId}  ${o.environment.padEnd(4)}  ${o.filingState}  ${o.orderType.padEnd(21)}  ${describeStatus(o).padEnd(16)}  ${o.companyLegalName ?? ''}  (${o.createdAt.slice(0, 10)})`,
                )
                .join('\n') + (page.hasMore ? '\n… more; raise --limit' : '')
            : 'No orders match.',
        );
      }),
    );

  const advance = orders
    .command('advance')
    .requiredOption('--from <status>', 'move orders in this status', statusOption)
    .requiredOption('--to <status>', 'to this status', statusOption);
  withQueueFilters(advance)
    .option('--exception-code <code>', 'with --to exception')
    .option('--message <text>', 'with --to exception')
    .option('--limit <n>', 'at most this many orders (default 500)', (v) => Number.parseInt(v, 10))
    .option('--json', 'print JSON')
    .description(
      'Move every matching order (live unless --environment test; each in its own transaction); failures are reported and skipped',
    )
    .action((opts) =>
      withContext(async ({ ctx }) => {
        // Live unless asked: test-mode orders are the integrator's to move (TEN-5: they do not advance on their own).
        const page = await listOrderQueue(
          ctx.pool,
          queueFilter({ ...opts, environment: opts.environment ?? 'live' }, opts.from, opts.limit ?? 500),
        );
        const bar = opts.json
          ? null
          : new SingleBar(
              { format: 'Advancing {bar} {value}/{total} orders | {orderId}', hideCursor: true },
              Presets.shades_classic,
            );
        bar?.start(page.data.length, 0, { orderId: '' });
        const moved: string[] = [];
        const failed: Array<{ orderId: string; code: string; message: string }> = [];
        for (const o of page.data) {
          try {
            await transitionOrder(
              ctx,
              null,
              o.orderId,
              { filingStatus: opts.to, exceptionCode: opts.exceptionCode, exceptionMessage: opts.message },
              ACTOR,
            );
            moved.push(o.orderId);
          } catch (err) {
            if (!(err instanceof AppError)) throw err;
            failed.push({ orderId: o.orderId, code: err.code, message: err.message });
          }
          bar?.increment(1, { orderId: o.orderId });
        }
        bar?.stop();
        const environment = opts.environment ?? 'live';
        const result = { environment, from: opts.from, to: opts.to, moved, failed, hasMore: page.hasMore };
        io(opts).print(result, () =>
          [
            `Moved ${moved.length} ${environment} order(s) from ${opts.from} to ${opts.to}.`,
            ...failed.map((f) => `  failed ${f.orderId}: ${f.message}`),
            ...(page.hasMore ? ['More orders match; run again or raise --limit.'] : []),
          ].join('\n'),
        );
        if (failed.length) process.exitCode = 1;
      }),
    );

  orders
    .command('show <orderId>')
    .option('--json', 'print JSON')
    .description('Everything about one order: request (SSNs masked), status history, events and webhook deliveries')
    .action((orderId: string, opts) =>
      withContext(async ({ ctx }) => {
        const record = await loadOrderRecord(ctx.pool, orderId);
        const detail = adminOrderDetailView(ctx, record);
        const row = record.order;
        const out = {
          ...detail,
          request: maskDeep(row.group_request),
          events: record.events.map((e) => ({
            id: e.id,
            type: e.type,
            createdAt: e.created_at.toISOString(),
            data: e.data,
            deliveries: e.deliveries.map((d) => ({ id: d.id, url: d.url, status: d.status, attempts: d.attempts })),
          })),
          // ORD-EIN-7: who saw the tax id, when and why (never the number).
          taxIdReveals: record.taxIdReveals.map((r) => ({
            id: r.id,
            actor: r.actor,
            reason: r.reason,
            clientAddress: r.client_address,
            createdAt: r.created_at.toISOString(),
          })),
        };
        io(opts).print(out, () =>
          [
            `${row.id}  ${row.environment}  ${row.order_type} in ${row.filing_state}  ${row.filing_status}${row.exception_code ? ` ${row.exception_code}` : ''}`,
            `  ${row.organization_name} (${row.organization_id}) · ${String(row.company.legal_name)}`,
            'History:',
            ...detail.history.map(
              (h) =>
                `  ${h.createdAt}  ${h.fromStatus ?? '(placed)'} -> ${h.toStatus}${h.exceptionCode ? ` ${h.exceptionCode}` : ''}${h.filingDate ? ` filed ${h.filingDate}` : ''}  by ${h.actor}${h.exceptionMessage ? `: ${h.exceptionMessage}` : ''}`,
            ),
            'Request (SSNs masked):',
            ...JSON.stringify(out.request, null, 2)
              .split('\n')
              .map((line) => `  ${line}`),
            ...(out.taxIdReveals.length
              ? [
                  'Tax id reveals:',
                  ...out.taxIdReveals.map((r) => `  ${r.createdAt}  ${r.actor} from ${r.clientAddress}: ${r.reason}`),
                ]
              : []),
            'Events:',
            ...out.events.map(
              (e) =>
                `  ${e.createdAt}  ${e.type}  ${e.id}  ${e.deliveries.map((d) => `${d.status}(${d.attempts.map((a) => a.status_code ?? 'ERR').join(',')})`).join(' ') || 'no deliveries'}`,
            ),
          ].join('\n'),
        );
      }),
    );

  registerTaxIdCommands(orders);
}

/**
 * `orders reveal-tax-id` and `orders purge-tax-ids` (ORD-EIN-7, ORD-EIN-9): the console's "Reveal tax id" from a
 * terminal, recorded as `cli:<os user>` from `cli@<host name>`, and destroying now the sealed tax ids already past
 * TAX_ID_RETENTION_DAYS (what the daily maintenance job does, and nothing else).
 */
function registerTaxIdCommands(orders: Command): void {
  orders
    .command('reveal-tax-id <orderId>')
    .requiredOption('--reason <text>', 'why you need it (recorded with your OS user, the time and this host)')
    .option('--json', 'print JSON')
    .description("Show an EIN order's responsible-party SSN/ITIN and its SS-4 worksheet; the reveal is recorded")
    .action((orderId: string, opts) =>
      withContext(async ({ ctx }) => {
        const revealed = await revealTaxId(ctx, orderId, {
          actor: `cli:${os.userInfo().username}`,
          reason: opts.reason,
          clientAddress: `cli@${os.hostname()}`,
        });
        const { reveal } = revealed;
        const out = {
          orderId,
          environment: revealed.environment,
          taxIdType: revealed.taxIdType,
          taxId: revealed.taxId,
          revealId: reveal.id,
          revealedAt: reveal.created_at.toISOString(),
          worksheet: revealed.worksheet,
        };
        io(opts).print(out, () =>
          [
            `${orderId} (${revealed.environment}) ${revealed.taxIdType ?? 'tax id'}: ${revealed.taxId}`,
            `Recorded as ${reveal.id} (${reveal.actor}, ${out.revealedAt}).`,
            'SS-4 worksheet:',
            ...revealed.worksheet.map((l) => `  ${l.line.padEnd(9)}${l.label}: ${l.value}`),
          ].join('\n'),
        );
      }),
    );

  orders
    .command('purge-tax-ids')
    .option('--json', 'print JSON')
    .description(
      'Destroy now every sealed EIN tax id past TAX_ID_RETENTION_DAYS after its order was filed or cancelled',
    )
    .action((opts) =>
      withContext(async ({ ctx }) => {
        const destroyed = await destroyExpiredTaxIds(ctx.pool, ctx.config.taxIdRetentionDays);
        io(opts).print(
          { destroyed, retentionDays: ctx.config.taxIdRetentionDays },
          () =>
            `Destroyed ${destroyed} tax id(s) kept more than ${ctx.config.taxIdRetentionDays} day(s) after their order was filed or cancelled.`,
        );
      }),
    );
}

/** Adds the queue filters `list` and `advance` share: --state, --type, --environment, --org. */
function withQueueFilters(command: Command): Command {
  return command
    .option('--state <XX>', 'only orders filed in this state', stateOption)
    .option('--type <orderType>', 'only this order type, e.g. formation')
    .option('--environment <env>', 'live or test', envOption)
    .option('--org <organizationId>', 'only this organization');
}

/** The queue filter of listOrderQueue from the options {@link withQueueFilters} added. */
function queueFilter(
  opts: { state?: string; type?: string; environment?: Environment; org?: string },
  filingStatus: FilingStatus | undefined,
  limit: number | undefined,
) {
  return {
    filingStatus,
    filingState: opts.state,
    orderType: opts.type,
    environment: opts.environment,
    organizationId: opts.org,
    limit,
  };
}

function describeStatus(o: { filingStatus: string; exceptionCode: string | null; filingDate: string | null }): string {
  if (o.filingStatus === 'exception') return `exception ${o.exceptionCode}`;
  if (o.filingStatus === 'filed') return `filed ${o.filingDate}`;
  return o.filingStatus;
}

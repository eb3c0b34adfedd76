import type { FastifyInstance } from 'fastify';
import type { AppContext, Environment } from '../../context.js';
import { notFound } from '../../lib/errors.js';
import { isId } from '../../lib/ids.js';
import { DOCUMENT_TYPES } from '../documents/document-types.js';
import { signedFileUrl } from '../documents/file-urls.js';
import { EXCEPTION_REASONS } from '../filings/exception-codes.js';
import { canTransition, isFilingStatus, todayUtc } from '../filings/transitions.js';
import { render } from './console.web.js';
import { operatorNames } from './operators.repo.js';
import { buildCompanyView, buildRequestView, maskDeep } from './order-view.js';
import * as q from './queue.repo.js';
import { findRefundOfOrder, listUnsettledRefunds } from '../payments/card-refunds.js';

/** Queue rows per page. */
export const QUEUE_PAGE_SIZE = 50;

/** The work queue and the order page (issue 6 item 2). */
export async function consoleOrderRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  app.get<{ Querystring: Record<string, string | undefined> }>('/queue', { schema: { hide: true } }, async (request, reply) => {
    const query = request.query;
    const filter = parseQueueFilter(query);
    // Keyset pages (API-8): `after` is the last order id of the previous page; `page` only numbers the rows shown.
    const after = query.after && isId('order', query.after) ? query.after : undefined;
    const page = after && /^\d{1,9}$/.test(query.page ?? '') ? Math.max(1, Number(query.page)) : 1;
    const [rows, counts, facets, refunds] = await Promise.all([
      q.listQueue(ctx.pool, filter, QUEUE_PAGE_SIZE + 1, after),
      q.countQueue(ctx.pool, filter),
      q.queueFacets(ctx.pool, filter.environment),
      listUnsettledRefunds(ctx.pool),
    ]);
    const total = filter.status ? counts[filter.status] : counts.submitted + counts.pending + counts.exception;
    return render(ctx, request, reply, 'queue', {
      title: 'Work queue', section: 'queue', filter, counts, total, facets, page,
      rows: rows.slice(0, QUEUE_PAGE_SIZE), hasMore: rows.length > QUEUE_PAGE_SIZE, pageSize: QUEUE_PAGE_SIZE,
      statuses: q.QUEUE_STATUSES,
      // Card refunds the provider refused so far (PAY-7); the job keeps retrying them.
      failingRefunds: refunds.filter((r) => r.attempts > 0 && r.environment === filter.environment),
    });
  });

  app.get<{ Params: { orderId: string } }>('/orders/:orderId', { schema: { hide: true } }, async (request, reply) => {
    const { orderId } = request.params;
    return render(ctx, request, reply, 'order', await loadOrderPage(ctx, orderId));
  });
}

/** Queue filters from the query string; unknown values are ignored. Live is the default environment. */
export function parseQueueFilter(query: Record<string, string | undefined>): q.QueueFilter {
  const environment: Environment = query.environment === 'test' ? 'test' : 'live';
  const status = (q.QUEUE_STATUSES as readonly string[]).includes(query.status ?? '') ? (query.status as q.QueueStatus) : '';
  const clean = (v: string | undefined, re: RegExp) => (v && re.test(v) ? v : '');
  return {
    environment,
    status,
    state: clean(query.state?.toUpperCase(), /^[A-Z]{2}$/),
    orderType: clean(query.orderType, /^[a-z_]{2,40}$/),
    organizationId: clean(query.organizationId, /^org_[a-z0-9]{10,40}$/),
    q: (query.q ?? '').trim().slice(0, 100),
  };
}

/**
 * Everything the order page shows: the order, what the request carried (masked), the company record,
 * status history with operator names, events with their webhook deliveries and attempts, ledger entries,
 * documents, and which actions the transition table allows now.
 * @throws AppError not_found.
 */
export async function loadOrderPage(ctx: AppContext, orderId: string) {
  const order = await q.findOrderDetail(ctx.pool, orderId);
  if (!order) throw notFound('order', orderId);
  const [siblings, history, events, ledger, documents, refund] = await Promise.all([
    q.findSiblingOrders(ctx.pool, order.group_id, order.id),
    q.findStatusHistory(ctx.pool, order.id),
    q.findOrderEvents(ctx.pool, order),
    q.findOrderLedger(ctx.pool, order.id),
    q.findOrderDocuments(ctx.pool, order.id),
    findRefundOfOrder(ctx.pool, order.id),
  ]);
  const deliveries = await q.findDeliveries(ctx.pool, events.map((e) => e.id));
  const actors = [...history.map((h) => h.actor), ...documents.map((d) => d.uploaded_by), ...ledger.map((l) => l.created_by ?? '')];
  const names = await operatorNames(ctx.pool, actors.filter((a) => a.startsWith('operator:')).map((a) => a.slice('operator:'.length)));
  const status = order.filing_status;
  const can = (to: string) => isFilingStatus(status) && isFilingStatus(to) && canTransition(status, to);
  return {
    title: `Order ${order.id}`,
    section: 'queue',
    order,
    siblings,
    refund,
    requestView: buildRequestView(order.details ?? {}),
    companyView: buildCompanyView(order.company),
    fullRequest: maskDeep(order.group_request),
    history: history.map((h) => ({ ...h, actorLabel: actorLabel(h.actor, names) })),
    events: events.map((e) => ({ ...e, deliveries: deliveries.filter((d) => d.event_id === e.id) })),
    ledger: ledger.map((l) => ({ ...l, actorLabel: l.created_by ? shortActor(l.created_by, names) : '—' })),
    documents: documents.map((d) => ({ ...d, actorLabel: shortActor(d.uploaded_by, names), url: signedFileUrl(ctx, d.id) })),
    documentTypes: DOCUMENT_TYPES,
    exceptionCodes: EXCEPTION_REASONS,
    today: todayUtc(),
    actions: {
      pending: status !== 'exception' && can('pending'),
      filed: can('filed'),
      exception: can('exception'),
      resolve: status === 'exception',
      cancel: can('cancelled'),
      upload: true,
    },
  };
}

/** `operator:op_…` -> the operator's name (for narrow columns); other actors as they are. */
function shortActor(actor: string, names: Map<string, string>): string {
  const name = actor.startsWith('operator:') ? names.get(actor.slice('operator:'.length)) : undefined;
  return name ? name.replace(/ <.*>$/, '') : actor;
}

/** `operator:op_…` -> 'Ada Admin <ada@example.com>'; other actors (api, cli, test_helper) as they are. */
export function actorLabel(actor: string, names: Map<string, string>): string {
  if (!actor.startsWith('operator:')) return actor;
  const name = names.get(actor.slice('operator:'.length));
  return name ? `${name} (${actor})` : actor;
}

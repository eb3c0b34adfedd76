import type { AppContext, Environment } from '../../context.js';
import { isId } from '../../lib/ids.js';
import { listUnsettledRefunds } from '../payments/payments.repo.js';
import * as q from './queue.repo.js';

/** Queue rows per page. */
const QUEUE_PAGE_SIZE = 50;

/**
 * What the work queue page shows for a query string (CONS-2): one keyset page of the filtered queue, the counts per
 * status, the filter menus and the card refunds the provider keeps refusing in the environment.
 */
export async function queuePageView(ctx: AppContext, query: Record<string, string | undefined>) {
  const filter = parseQueueFilter(query);
  const ignored = ignoredFilters(query, filter);
  // Keyset pages (API-8): `after` is the last order id of the previous page; `page` only numbers the rows shown.
  const after = query.after && isId('order', query.after) ? query.after : undefined;
  const page = after && /^\d{1,9}$/.test(query.page ?? '') ? Math.max(1, Number(query.page)) : 1;
  const [rows, counts, facets, refunds] = await Promise.all([
    q.listQueue(ctx.pool, filter, QUEUE_PAGE_SIZE + 1, after),
    q.countQueue(ctx.pool, filter),
    q.queueFacets(ctx.pool),
    listUnsettledRefunds(ctx.pool),
  ]);
  const total = filter.status ? counts[filter.status] : counts.submitted + counts.pending + counts.exception;
  const capped = (filter.status ? [counts[filter.status]] : Object.values(counts)).some((n) => n > q.QUEUE_COUNT_CAP);
  return {
    title: 'Work queue',
    section: 'queue',
    filter,
    ignored,
    counts,
    countLabels: {
      all: countLabel(counts.submitted + counts.pending + counts.exception, Object.values(counts)),
      submitted: countLabel(counts.submitted),
      pending: countLabel(counts.pending),
      exception: countLabel(counts.exception),
    },
    totalLabel: capped ? `more than ${q.QUEUE_COUNT_CAP.toLocaleString('en-US')}` : String(total),
    facets,
    page,
    rows: rows.slice(0, QUEUE_PAGE_SIZE),
    hasMore: rows.length > QUEUE_PAGE_SIZE,
    pageSize: QUEUE_PAGE_SIZE,
    statuses: q.QUEUE_STATUSES,
    // Card refunds the provider refused so far (PAY-7); the job keeps retrying them.
    failingRefunds: refunds.filter((r) => r.attempts > 0 && r.environment === filter.environment),
  };
}

/** Queue filters from the query string; unknown values are ignored. Live is the default environment. */
function parseQueueFilter(query: Record<string, string | undefined>): q.QueueFilter {
  const environment: Environment = query.environment === 'test' ? 'test' : 'live';
  const status = (q.QUEUE_STATUSES as readonly string[]).includes(query.status ?? '')
    ? (query.status as q.QueueStatus)
    : '';
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
 * The filters given in the query string that the queue could not use (CONS-2): each as `name "value"`, so the page
 * says what it left out instead of silently listing more than was asked for.
 */
function ignoredFilters(query: Record<string, string | undefined>, filter: q.QueueFilter): string[] {
  const given: Array<[string, string | undefined, string]> = [
    ['status', query.status, filter.status],
    ['state', query.state, filter.state],
    ['product', query.orderType, filter.orderType],
    ['organization', query.organizationId, filter.organizationId],
  ];
  return given
    .filter(([, sent, used]) => typeof sent === 'string' && sent.trim() !== '' && !used)
    .map(([name, sent]) => `${name} "${sent!.slice(0, 60)}"`);
}

/** A tab's count as shown: "1,000+" once any of the counts it sums went past the cap (they stop counting there). */
function countLabel(n: number, parts: number[] = [n]): string {
  return parts.some((p) => p > q.QUEUE_COUNT_CAP) ? `${q.QUEUE_COUNT_CAP.toLocaleString('en-US')}+` : String(n);
}

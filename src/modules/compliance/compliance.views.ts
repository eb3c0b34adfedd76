import type { Tenant } from '../../context.js';
import type { Db } from '../../lib/db.js';
import { centsToDollars, formatCents } from '../../lib/money.js';
import { formatDate } from '../branding/wording.js';
import { resolveRange, todayUtc } from './calendar-range.js';
import { deadlinesOf, type DeadlineItem } from './company-deadlines.js';
import * as repo from './compliance.repo.js';

/**
 * A deadline (cents in, `estimatedStateFeeCents`) as the API, the console and the CLI show it (API-5): the same
 * fields in the same order with `estimatedStateFee` in dollars.
 */
export function deadlineView<T extends { estimatedStateFeeCents: number | null }>(
  d: T,
): Omit<T, 'estimatedStateFeeCents'> & { estimatedStateFee: number | null } {
  return Object.fromEntries(
    Object.entries(d).map(([key, value]) =>
      key === 'estimatedStateFeeCents'
        ? ['estimatedStateFee', value === null ? null : centsToDollars(value as number)]
        : [key, value],
    ),
  ) as Omit<T, 'estimatedStateFeeCents'> & { estimatedStateFee: number | null };
}

/** Calendar statuses in words, with the tone of their badge (CAL-16). */
const STATUS_LABELS: Record<DeadlineItem['status'], { label: string; tone: string }> = {
  upcoming: { label: 'Upcoming', tone: 'muted' },
  open: { label: 'Open for filing', tone: 'info' },
  overdue: { label: 'Overdue', tone: 'warning' },
  filed: { label: 'Filed', tone: 'success' },
};

/**
 * A deadline as a web page shows it: dates in words, the status label and tone, and the checkout link.
 * @param today 'YYYY-MM-DD' (UTC): which report years the checkout offers.
 */
export function presentDeadline(d: DeadlineItem, checkoutBase: string | null, today = todayUtc()) {
  const status = STATUS_LABELS[d.status];
  // The checkout offers this year and next only (ORD-AR-1, CAL-23): it would turn any other year into this year's
  // report, so a report further out, or one still overdue from last year, gets no button rather than a wrong order.
  const thisYear = Number(today.slice(0, 4));
  const canOrder =
    d.orderable &&
    d.status !== 'filed' &&
    !d.orderId &&
    d.filingYear >= thisYear &&
    d.filingYear <= thisYear + 1 &&
    checkoutBase !== null;
  const shown = deadlineView(d);
  return {
    ...shown,
    due: formatDate(d.dueDate),
    // CAL-28: the statutory date in words where the weekend rule moved it, else null.
    statutoryDue: d.statutoryDueDate !== d.dueDate ? formatDate(d.statutoryDueDate) : null,
    opens: formatDate(d.windowOpensOn),
    statusLabel: status.label,
    tone: status.tone,
    fee: d.estimatedStateFeeCents === null ? null : formatCents(d.estimatedStateFeeCents),
    kindLabel: d.kind === 'initial_report' ? 'Initial report' : d.kind === 'estimated_tax' ? 'Estimated tax' : 'Report',
    orderUrl: canOrder
      ? `${checkoutBase}/annual-report?filingState=${encodeURIComponent(d.jurisdiction)}&filingYear=${d.filingYear}`
      : null,
  };
}

/**
 * The dashboard company page's deadlines: today to 18 months ahead plus anything overdue in the last year, with
 * a link to the annual report checkout for the state (`checkoutBase` = the company's checkout path). Empty for a
 * company without a formation date (its page says so).
 */
export async function dashboardDeadlines(
  db: Db,
  tenant: Tenant,
  companyId: string,
  checkoutBase: string,
  today = todayUtc(),
) {
  const companies = await repo.listCalendarCompanies(db, tenant, companyId);
  if (!companies.length) return [];
  const upcoming = resolveRange({}, today);
  const range = {
    from: `${Number(today.slice(0, 4)) - 1}${today.slice(4)}`.replace(/-02-29$/, '-02-28'),
    to: upcoming.to,
  };
  const items = await deadlinesOf(db, companies, range, today);
  return items
    .filter((d) => d.dueDate >= today || d.status === 'overdue')
    .map((d) => presentDeadline(d, checkoutBase, today));
}

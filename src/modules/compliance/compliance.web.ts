import type { Tenant } from '../../context.js';
import type { Db } from '../../lib/db.js';
import * as repo from './compliance.repo.js';
import { deadlinesOf, resolveRange, todayUtc, type DeadlineItem } from './compliance.service.js';

/** Calendar statuses in words, with the tone of their badge (CAL-16). */
export const STATUS_LABELS: Record<DeadlineItem['status'], { label: string; tone: string }> = {
  upcoming: { label: 'Upcoming', tone: 'muted' },
  open: { label: 'Open for filing', tone: 'info' },
  overdue: { label: 'Overdue', tone: 'warning' },
  filed: { label: 'Filed', tone: 'success' },
};

const dateFormat = new Intl.DateTimeFormat('en-US', { year: 'numeric', month: 'short', day: 'numeric', timeZone: 'UTC' });
/** 'Mar 4, 2025' for 'YYYY-MM-DD'; '' for null. */
const formatDay = (iso: string | null) => (iso ? dateFormat.format(new Date(`${iso}T00:00:00Z`)) : '');

/** A deadline as a web page shows it: dates in words, the status label and tone, and the checkout link. */
export function presentDeadline(d: DeadlineItem, checkoutBase: string | null) {
  const status = STATUS_LABELS[d.status];
  // The checkout offers this year and next (ORD-AR-1); a report further out is ordered from its own year's page later.
  const thisYear = new Date().getUTCFullYear();
  const canOrder = d.orderable && d.status !== 'filed' && !d.orderId && d.filingYear <= thisYear + 1 && checkoutBase !== null;
  return {
    ...d,
    due: formatDay(d.dueDate),
    opens: formatDay(d.windowOpensOn),
    statusLabel: status.label,
    tone: status.tone,
    fee: d.estimatedStateFee === null ? null : `$${d.estimatedStateFee.toFixed(2)}`,
    kindLabel: d.kind === 'initial_report' ? 'Initial report' : 'Report',
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
export async function dashboardDeadlines(db: Db, tenant: Tenant, companyId: string, checkoutBase: string, today = todayUtc()) {
  const companies = await repo.listCalendarCompanies(db, tenant, companyId);
  if (!companies.length) return [];
  const upcoming = resolveRange({}, today);
  const range = { from: `${Number(today.slice(0, 4)) - 1}${today.slice(4)}`.replace(/-02-29$/, '-02-28'), to: upcoming.to };
  const items = await deadlinesOf(db, companies, range, today);
  return items.filter((d) => d.dueDate >= today || d.status === 'overdue').map((d) => presentDeadline(d, checkoutBase));
}

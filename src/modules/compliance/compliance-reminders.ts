import type pg from 'pg';
import type { Tenant } from '../../context.js';
import { withTransaction } from '../../lib/db.js';
import { emitEvents, type NewEvent } from '../events/events.service.js';
import { addDaysIso, daysBetween } from './calendar-dates.js';
import { deadlinesOf, type DeadlineItem } from './company-deadlines.js';
import * as repo from './compliance.repo.js';

/** Days before a due date at which `compliance.deadline_approaching` is sent, largest first (CAL-20). */
const REMINDER_DAYS = [60, 30, 7] as const;
/** How many days after a due date a missed report is still told (a worker down for days catches up: CAL-20). */
const MISSED_LOOKBACK_DAYS = 7;
/** Companies whose calendars one batch computes (bounds memory and the size of each query). */
const BATCH = 500;

/** One reminder a run emitted. */
export interface EmittedReminder {
  eventId: string;
  type: 'compliance.deadline_approaching' | 'compliance.deadline_missed';
  companyId: string;
  jurisdiction: string;
  kind: string;
  dueDate: string;
  daysUntilDue: number;
}

/**
 * CAL-20: the reminder an obligation is owed on `asOf`, or null: the tightest threshold of REMINDER_DAYS it has
 * reached (a report first seen 20 days before its due date gets the 30-day reminder only), `missed` from the day
 * after the due date; none for a report that is filed or covered by a submitted or pending annual report order, and no
 * approaching reminder before the report's filing window opens (CAL-27).
 */
function reminderFor(item: DeadlineItem, asOf: string): { threshold: string; daysUntilDue: number } | null {
  if (item.status === 'filed' || item.coveredByPendingOrder) return null;
  const daysUntilDue = daysBetween(asOf, item.dueDate);
  if (daysUntilDue < 0) return daysUntilDue >= -MISSED_LOOKBACK_DAYS ? { threshold: 'missed', daysUntilDue } : null;
  // CAL-27: no reminder before the filing window opens (then the tightest threshold reached is sent).
  if (item.windowOpensOn !== null && asOf < item.windowOpensOn) return null;
  const reached = [...REMINDER_DAYS].reverse().find((d) => daysUntilDue <= d);
  return reached === undefined ? null : { threshold: `${reached}_days`, daysUntilDue };
}

/**
 * Runs the daily reminder job as of `asOf` ('YYYY-MM-DD') for every company with a formation date, or only the
 * companies of `tenant` (the test helper). Each company's reminders are claimed and emitted in one transaction,
 * so each obligation and threshold is sent exactly once however often (and wherever) the job runs (CAL-20).
 * @returns the reminders emitted by this run.
 */
export async function runComplianceReminders(pool: pg.Pool, asOf: string, tenant?: Tenant): Promise<EmittedReminder[]> {
  const companies = tenant ? await repo.listCalendarCompanies(pool, tenant) : await repo.listAllCalendarCompanies(pool);
  const range = { from: addDaysIso(asOf, -MISSED_LOOKBACK_DAYS), to: addDaysIso(asOf, REMINDER_DAYS[0]) };
  const emitted: EmittedReminder[] = [];
  for (let i = 0; i < companies.length; i += BATCH) {
    const batch = companies.slice(i, i + BATCH);
    const items = await deadlinesOf(pool, batch, range, asOf);
    for (const company of batch) {
      const due = items.flatMap((item) => {
        if (item.companyId !== company.id) return [];
        const r = reminderFor(item, asOf);
        return r ? [{ item, ...r }] : [];
      });
      if (due.length)
        emitted.push(
          ...(await remindCompany(
            pool,
            { organizationId: company.organization_id, environment: company.environment },
            due,
          )),
        );
    }
  }
  return emitted;
}

async function remindCompany(
  pool: pg.Pool,
  tenant: Tenant,
  due: Array<{ item: DeadlineItem; threshold: string; daysUntilDue: number }>,
): Promise<EmittedReminder[]> {
  return withTransaction(pool, async (tx) => {
    const keys = due.map(({ item, threshold }) => ({
      companyId: item.companyId,
      jurisdiction: item.jurisdiction,
      kind: item.kind,
      dueDate: item.dueDate,
      threshold,
    }));
    const claimed = await repo.claimReminders(tx, tenant, keys);
    if (!claimed.length) return [];
    const events: NewEvent[] = claimed.map((i) => {
      const { item, threshold, daysUntilDue } = due[i]!;
      return {
        type: threshold === 'missed' ? 'compliance.deadline_missed' : 'compliance.deadline_approaching',
        data: {
          companyId: item.companyId,
          jurisdiction: item.jurisdiction,
          kind: item.kind,
          dueDate: item.dueDate,
          daysUntilDue,
          reportName: item.reportName,
          orderable: item.orderable,
        },
      };
    });
    const envelopes = await emitEvents(tx, tenant, events);
    await repo.setReminderEvents(
      tx,
      claimed.map((i) => keys[i]!),
      envelopes.map((e) => e.id),
    );
    return envelopes.map((e, n) => {
      const { item, daysUntilDue } = due[claimed[n]!]!;
      return {
        eventId: e.id,
        type: e.type as EmittedReminder['type'],
        companyId: item.companyId,
        jurisdiction: item.jurisdiction,
        kind: item.kind,
        dueDate: item.dueDate,
        daysUntilDue,
      };
    });
  });
}

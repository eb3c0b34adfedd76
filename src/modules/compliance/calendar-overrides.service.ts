import type pg from 'pg';
import { withTransaction } from '../../lib/db.js';
import { AppError, ValidationError } from '../../lib/errors.js';
import { FORMATION_STATES } from '../companies/company-rules.js';
import { isIsoDate } from './calendar-dates.js';
import { todayUtc } from './calendar-range.js';
import { estimatedTaxApplies } from './due-date-rules.js';
import * as repo from './compliance.repo.js';

/*
 * An operator's changes to one company's calendar in one state (CAL-29, CAL-30, CAL-32): the anchor date the calendar
 * counts from, and the estimated tax flag. Each change is one transaction that saves the override and appends who made
 * it and why to company_calendar_override_changes.
 */

/** The earliest anchor date accepted (CAL-29): older dates are typing mistakes, not companies' histories. */
const EARLIEST_ANCHOR = '1800-01-01';

/** Why an anchor date is changed (CAL-29). */
export const ANCHOR_REASONS = ['reinstatement', 'conversion', 'first_day_of_business', 'correction'] as const;

/** A change to a company's calendar in one state; fields left out keep their value. */
export interface CalendarOverrideUpdate {
  /** 'YYYY-MM-DD', or null to count from the formation or registration date again. */
  anchorDate?: string | null;
  /** Required with an anchorDate. */
  anchorReason?: (typeof ANCHOR_REASONS)[number];
  /** CAL-32: the company pays the state's estimated tax instalments. */
  estimatedTax?: boolean;
  /** Why (kept in the change log); required. */
  note: string;
}

/** The override as the admin API and the CLI show it. */
function overrideView(r: repo.CalendarOverrideRow) {
  return {
    companyId: r.company_id,
    state: r.state,
    anchorDate: r.anchor_date,
    anchorReason: r.anchor_reason,
    estimatedTax: r.estimated_tax,
    updatedAt: r.updated_at.toISOString(),
    updatedBy: r.updated_by,
  };
}

/**
 * CAL-29, CAL-30, CAL-32: changes a company's anchor date or estimated tax flag in `state`, recorded with `actor` and
 * the note; calendars computed afterwards count from the new anchor.
 * @throws ValidationError (400) naming `anchorDate`, `anchorReason`, `estimatedTax` or `note`; AppError not_found
 * (404) for an unknown company.
 */
export async function setCalendarOverride(
  pool: pg.Pool,
  companyId: string,
  rawState: string,
  update: CalendarOverrideUpdate,
  actor: string,
) {
  const state = rawState.toUpperCase();
  const errors: Array<{ field: string; message: string }> = [];
  if (!(FORMATION_STATES as readonly string[]).includes(state))
    errors.push({ field: 'state', message: 'must be the two-letter code of a US state or DC' });
  if (typeof update.note !== 'string' || !update.note.trim() || update.note.length > 500)
    errors.push({ field: 'note', message: 'is required: why the calendar changes (at most 500 characters)' });
  if (update.anchorDate !== undefined && update.anchorDate !== null && !isIsoDate(update.anchorDate))
    errors.push({ field: 'anchorDate', message: 'must be a real date YYYY-MM-DD, or null' });
  else if (typeof update.anchorDate === 'string' && !anchorDateInRange(update.anchorDate))
    errors.push({ field: 'anchorDate', message: `must be from ${EARLIEST_ANCHOR} to a year from today` });
  if (typeof update.anchorDate === 'string' && !ANCHOR_REASONS.includes(update.anchorReason as never))
    errors.push({ field: 'anchorReason', message: `is required with anchorDate: one of ${ANCHOR_REASONS.join(', ')}` });
  if (update.anchorDate === undefined && update.estimatedTax === undefined)
    errors.push({ field: 'anchorDate', message: 'give anchorDate or estimatedTax' });
  if (errors.length) throw new ValidationError(errors);
  return withTransaction(pool, async (tx) => {
    const company = await repo.findOverrideCompany(tx, companyId);
    if (!company) throw new AppError('not_found', `No company '${companyId}'`);
    if (update.estimatedTax === true) {
      const rule = await repo.findRule(tx, state);
      const entityRule = rule && (company.entity_type === 'LLC' ? rule.rule.llc : rule.rule.corporation);
      const presence = company.formation_state === state ? 'domestic' : 'foreign';
      if (!entityRule?.estimatedTax || !estimatedTaxApplies(entityRule.estimatedTax, presence))
        throw new ValidationError([
          {
            field: 'estimatedTax',
            message: `${state} has no estimated tax instalments for a ${presence} ${company.entity_type}`,
          },
        ]);
    }
    const before = await repo.findCalendarOverride(tx, companyId, state, true);
    const anchorDate = update.anchorDate !== undefined ? update.anchorDate : (before?.anchor_date ?? null);
    const anchorReason =
      update.anchorDate !== undefined
        ? update.anchorDate
          ? update.anchorReason!
          : null
        : (before?.anchor_reason ?? null);
    const row = await repo.saveCalendarOverride(
      tx,
      {
        companyId,
        state,
        anchorDate,
        anchorReason,
        estimatedTax: update.estimatedTax ?? before?.estimated_tax ?? false,
      },
      before,
      actor,
      update.note.trim(),
    );
    return overrideView(row);
  });
}

/**
 * CAL-29: an anchor date from EARLIEST_ANCHOR to the same day a year from today (UTC): a first day of business can be
 * planned, not decades out. From February 29 a year on is March 1.
 */
function anchorDateInRange(date: string, now = new Date()): boolean {
  const latest = todayUtc(new Date(Date.UTC(now.getUTCFullYear() + 1, now.getUTCMonth(), now.getUTCDate())));
  return date >= EARLIEST_ANCHOR && date <= latest;
}

import type { Confidence } from './due-date-rules.js';

/*
 * What the compliance calendar computes (CAL-2 .. CAL-16): the question asked about one entity in one state, the
 * reports it owes there, and each report's status.
 */

/** Domestic = formed in the state; foreign = registered (qualified) there. */
export type Presence = 'domestic' | 'foreign';
/**
 * `annual_report` = a regular (annual or biennial) report; `initial_report` = the one-time report after formation;
 * `estimated_tax` = an estimated tax instalment (CAL-32).
 */
export type ObligationKind = 'annual_report' | 'initial_report' | 'estimated_tax';

/** What the calendar needs to know about one entity in one state. */
export interface CalendarQuery {
  /** Two-letter code of the state (jurisdiction). */
  state: string;
  /** Our entity types: LLC or CORP (a CORP uses the data's `corporation` rule). */
  entityType: 'LLC' | 'CORP';
  presence: Presence;
  /** Formation date (domestic) or registration/qualification date (foreign), 'YYYY-MM-DD' (CAL-3). */
  anchorDate: string;
  /** Fiscal-year-end month 1-12 (12 = December); read by fiscal_year_based rules only. */
  fiscalYearEndMonth: number;
  /** True for an S corporation: fiscal rules with an sCorporation variant use it (CAL-9). */
  sCorporation?: boolean;
  /** CAL-32: the entity is flagged as paying estimated tax, so the rule's instalments are shown. */
  estimatedTax?: boolean;
  /** Inclusive range of (effective) due dates, 'YYYY-MM-DD'. */
  from: string;
  to: string;
}

/** One report the entity owes in the state, due on `dueDate`. */
export interface Obligation {
  jurisdiction: string;
  presence: Presence;
  kind: ObligationKind;
  reportName: string;
  /** 'YYYY-MM-DD', the last day to file on time: the statutory date moved by the state's weekend rule (CAL-24). */
  dueDate: string;
  /** 'YYYY-MM-DD', the date the rule gives before any weekend or holiday adjustment (CAL-24). */
  statutoryDueDate: string;
  /** Why `dueDate` differs from `statutoryDueDate`; null when they are the same day. */
  dueDateMovedBecause: string | null;
  /** 'YYYY-MM-DD', the first day the state accepts the filing; null when the data gives none. */
  windowOpensOn: string | null;
  /** The calendar year of the due date: the `filingYear` an annual report order for it carries (CAL-16). */
  filingYear: number;
  confidence: Confidence;
  /** The best source of the rule (official, statute or regulation first), or null. */
  sourceUrl: string | null;
  /** The rule id of docs/rules.md that computed the date (CAL-4 .. CAL-13). */
  ruleId: string;
  /** Caveats the date carries (a state-assigned date or year, an available election); null when none. */
  note: string | null;
}

/** Calendar item statuses (CAL-16). */
export type ObligationStatus = 'upcoming' | 'open' | 'overdue' | 'filed';

/**
 * CAL-16, CAL-26: `filed` when an annual report order for the jurisdiction and filing year is filed; else `overdue`
 * after the (effective) due date, `open` inside the filing window (from the day it opens to the due date), `upcoming`
 * before it opens or when there is no window.
 * @param today 'YYYY-MM-DD' (UTC).
 */
export function obligationStatus(
  o: Pick<Obligation, 'dueDate' | 'windowOpensOn'>,
  today: string,
  filed: boolean,
): ObligationStatus {
  if (filed) return 'filed';
  if (today > o.dueDate) return 'overdue';
  if (o.windowOpensOn !== null && today >= o.windowOpensOn) return 'open';
  return 'upcoming';
}

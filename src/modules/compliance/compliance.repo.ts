import type { Tenant } from '../../context.js';
import { many, one, type Db } from '../../lib/db.js';
import type { OrderRow } from '../orders/orders.repo.js';
import type { StateRule } from './due-date-rules.js';

/** What the calendar reads of a company (dates as 'YYYY-MM-DD'). */
export interface CalendarCompanyRow {
  id: string;
  organization_id: string;
  environment: 'live' | 'test';
  legal_name: string;
  entity_type: 'LLC' | 'CORP';
  tax_election: string | null;
  fiscal_end_month: string;
  formation_date: string | null;
  formation_state: string | null;
}

const COMPANY_COLUMNS =
  'id, organization_id, environment, legal_name, entity_type, tax_election, fiscal_end_month, formation_date, formation_state';

/** Companies of the tenant with a formation date (the ones that have a calendar), optionally only `companyId`. */
export function listCalendarCompanies(db: Db, tenant: Tenant, companyId?: string): Promise<CalendarCompanyRow[]> {
  return many<CalendarCompanyRow>(
    db,
    `SELECT ${COMPANY_COLUMNS} FROM companies
      WHERE organization_id = $1 AND environment = $2 AND formation_date IS NOT NULL AND ($3::text IS NULL OR id = $3)
      ORDER BY id`,
    [tenant.organizationId, tenant.environment, companyId ?? null],
  );
}

/**
 * Companies of every tenant with a formation date (the console, the CLI and the reminder job), id order;
 * optionally of one environment and/or one organization.
 */
export function listAllCalendarCompanies(
  db: Db,
  f: { environment?: 'live' | 'test'; organizationId?: string } = {},
): Promise<CalendarCompanyRow[]> {
  return many<CalendarCompanyRow>(
    db,
    `SELECT ${COMPANY_COLUMNS} FROM companies
      WHERE formation_date IS NOT NULL AND ($1::text IS NULL OR environment = $1) AND ($2::text IS NULL OR organization_id = $2)
      ORDER BY id`,
    [f.environment ?? null, f.organizationId ?? null],
  );
}

/** One company of any tenant as the calendar reads it (the console's company page: CAL-36), or null when unknown. */
export function findCalendarCompany(db: Db, companyId: string): Promise<CalendarCompanyRow | null> {
  return one<CalendarCompanyRow>(db, `SELECT ${COMPANY_COLUMNS} FROM companies WHERE id = $1`, [companyId]);
}

/** A state a company is qualified in: the filed foreign qualification and its registration date. */
export interface QualificationRow {
  company_id: string;
  state: string;
  registered_on: string;
}

/**
 * Filed foreign qualifications of the given companies, the earliest per company and state (CAL-3, CAL-17). The
 * registration date is the order's filing date, else the day it was placed.
 */
export function listFiledQualifications(db: Db, companyIds: string[]): Promise<QualificationRow[]> {
  if (!companyIds.length) return Promise.resolve([]);
  return many<QualificationRow>(
    db,
    `SELECT company_id, filing_state AS state, MIN(COALESCE(filing_date, (created_at AT TIME ZONE 'UTC')::date))::text AS registered_on
       FROM orders
      WHERE company_id = ANY($1::text[]) AND order_type = 'foreign_qualification' AND filing_status = 'filed'
      GROUP BY company_id, filing_state`,
    [companyIds],
  );
}

/** An annual report order that covers a jurisdiction and filing year (CAL-16, CAL-20). */
export interface ReportOrderRow extends Pick<OrderRow, 'id' | 'company_id'> {
  /** The order's filing_state. */
  state: string;
  filing_year: number;
  /** Consecutive filing years the order covers from filing_year (CAL-35). */
  years: number;
  filing_status: Extract<OrderRow['filing_status'], 'submitted' | 'pending' | 'filed'>;
}

/**
 * Annual report orders of the given companies that are filed or still on their way (submitted, pending); an
 * order without filingYear counts for the year it was placed (ORD-AR-1's default); it covers `years` consecutive filing
 * years from filingYear (CAL-35, default 1).
 */
export function listReportOrders(db: Db, companyIds: string[]): Promise<ReportOrderRow[]> {
  if (!companyIds.length) return Promise.resolve([]);
  return many<ReportOrderRow>(
    db,
    `SELECT id, company_id, filing_state AS state, filing_status,
            COALESCE((details->>'filingYear')::int, EXTRACT(YEAR FROM created_at AT TIME ZONE 'UTC')::int) AS filing_year,
            COALESCE((details->>'years')::int, 1) AS years
       FROM orders
      WHERE company_id = ANY($1::text[]) AND order_type = 'annual_report' AND filing_status IN ('submitted', 'pending', 'filed')
      ORDER BY id`,
    [companyIds],
  );
}

/** Annual report state fees (cents) per state and entity type. */
export interface ReportFeeRow {
  state: string;
  llc_annual_report_cents: number;
  corp_annual_report_cents: number;
}

/** Every state's annual report fees from the state fee schedule (BILL-8's source). */
export function listReportFees(db: Db): Promise<ReportFeeRow[]> {
  return many<ReportFeeRow>(db, 'SELECT state, llc_annual_report_cents, corp_annual_report_cents FROM state_fees');
}

/** A stored jurisdiction's rules. */
export interface RuleRow {
  state: string;
  rule: StateRule;
  data_as_of: string;
  updated_at: Date;
  updated_by: string;
}

/** Every jurisdiction's rules, by state code. */
export function listRules(db: Db): Promise<RuleRow[]> {
  return many<RuleRow>(
    db,
    'SELECT state, rule, data_as_of, updated_at, updated_by FROM compliance_rules ORDER BY state',
  );
}

/** One jurisdiction's rules, locked for an edit when `forUpdate`. */
export function findRule(db: Db, state: string, forUpdate = false): Promise<RuleRow | null> {
  return one<RuleRow>(
    db,
    `SELECT state, rule, data_as_of, updated_at, updated_by FROM compliance_rules WHERE state = $1${forUpdate ? ' FOR UPDATE' : ''}`,
    [state],
  );
}

/** Replaces a jurisdiction's rules and appends the change, with who made it, to compliance_rule_changes (CAL-22). */
export async function updateRule(
  tx: Db,
  state: string,
  before: StateRule,
  after: StateRule,
  changedBy: string,
  note: string | null,
): Promise<RuleRow> {
  await tx.query(
    'INSERT INTO compliance_rule_changes (state, changed_by, note, before, after) VALUES ($1, $2, $3, $4, $5)',
    [state, changedBy, note, before, after],
  );
  return (await one<RuleRow>(
    tx,
    `UPDATE compliance_rules SET rule = $2, updated_at = now(), updated_by = $3 WHERE state = $1
     RETURNING state, rule, data_as_of, updated_at, updated_by`,
    [state, after, changedBy],
  ))!;
}

/** A recorded rule change. */
export interface RuleChangeRow {
  id: string;
  state: string;
  changed_at: Date;
  changed_by: string;
  note: string | null;
  before: StateRule;
  after: StateRule;
}

/** The change log of one jurisdiction (or all), newest first, at most `limit` entries. */
export function listRuleChanges(db: Db, state: string | null, limit: number): Promise<RuleChangeRow[]> {
  return many<RuleChangeRow>(
    db,
    `SELECT id::text, state, changed_at, changed_by, note, before, after FROM compliance_rule_changes
      WHERE ($1::text IS NULL OR state = $1) ORDER BY id DESC LIMIT $2`,
    [state, limit],
  );
}

/** The identity of one reminder: an obligation and a threshold (CAL-20). */
export interface ReminderKey {
  companyId: string;
  jurisdiction: string;
  kind: string;
  dueDate: string;
  threshold: string;
}

/**
 * Claims reminders for sending and returns the indexes (into `keys`) of those not sent before: the primary key
 * makes each reminder once per obligation and threshold, also across concurrent runs (a second run waits for
 * the first's commit, then skips). Call in the transaction that emits the events, then {@link setReminderEvents}.
 */
export async function claimReminders(tx: Db, tenant: Tenant, keys: ReminderKey[]): Promise<number[]> {
  if (!keys.length) return [];
  const { rows } = await tx.query<{
    company_id: string;
    jurisdiction: string;
    kind: string;
    due_date: string;
    threshold: string;
  }>(
    `INSERT INTO compliance_reminders (organization_id, environment, company_id, jurisdiction, kind, due_date, threshold)
     SELECT $1, $2, k.company_id, k.jurisdiction, k.kind, k.due_date, k.threshold
       FROM jsonb_to_recordset($3::jsonb) AS k(company_id text, jurisdiction text, kind text, due_date date, threshold text)
     ON CONFLICT DO NOTHING
     RETURNING company_id, jurisdiction, kind, due_date::text AS due_date, threshold`,
    [
      tenant.organizationId,
      tenant.environment,
      JSON.stringify(
        keys.map((k) => ({
          company_id: k.companyId,
          jurisdiction: k.jurisdiction,
          kind: k.kind,
          due_date: k.dueDate,
          threshold: k.threshold,
        })),
      ),
    ],
  );
  const claimed = new Set(rows.map((x) => `${x.company_id}|${x.jurisdiction}|${x.kind}|${x.due_date}|${x.threshold}`));
  return keys.flatMap((k, i) =>
    claimed.has(`${k.companyId}|${k.jurisdiction}|${k.kind}|${k.dueDate}|${k.threshold}`) ? [i] : [],
  );
}

/** Records the event each claimed reminder emitted. */
export async function setReminderEvents(tx: Db, keys: ReminderKey[], eventIds: string[]): Promise<void> {
  if (!keys.length) return;
  await tx.query(
    `UPDATE compliance_reminders r SET event_id = k.event_id
       FROM jsonb_to_recordset($1::jsonb) AS k(company_id text, jurisdiction text, kind text, due_date date, threshold text, event_id text)
      WHERE r.company_id = k.company_id AND r.jurisdiction = k.jurisdiction AND r.kind = k.kind AND r.due_date = k.due_date AND r.threshold = k.threshold`,
    [
      JSON.stringify(
        keys.map((k, i) => ({
          company_id: k.companyId,
          jurisdiction: k.jurisdiction,
          kind: k.kind,
          due_date: k.dueDate,
          threshold: k.threshold,
          event_id: eventIds[i],
        })),
      ),
    ],
  );
}

/** Inserts a jurisdiction's due-date rule as seeded (updated_by 'seed') unless the jurisdiction has one (CAL-1). */
export async function insertSeedRule(db: Db, state: string, rule: unknown, asOf: string): Promise<void> {
  await db.query(
    `INSERT INTO compliance_rules (state, rule, data_as_of, updated_by) VALUES ($1, $2, $3, 'seed') ON CONFLICT (state) DO NOTHING`,
    [state, rule, asOf],
  );
}

/** An operator's override of one company's calendar in one state (CAL-29, CAL-32). */
export interface CalendarOverrideRow {
  company_id: string;
  state: string;
  /** 'YYYY-MM-DD' or null (the formation or registration date is used). */
  anchor_date: string | null;
  anchor_reason: string | null;
  estimated_tax: boolean;
  updated_at: Date;
  updated_by: string;
}

const OVERRIDE_COLUMNS = `company_id, state, anchor_date::text AS anchor_date, anchor_reason, estimated_tax, updated_at, updated_by`;

/** The overrides of the given companies (CAL-29). */
export function listCalendarOverrides(db: Db, companyIds: string[]): Promise<CalendarOverrideRow[]> {
  if (!companyIds.length) return Promise.resolve([]);
  return many<CalendarOverrideRow>(
    db,
    `SELECT ${OVERRIDE_COLUMNS} FROM company_calendar_overrides WHERE company_id = ANY($1::text[])`,
    [companyIds],
  );
}

/** One company's override in `state`, locked for a change when `forUpdate`; null when none. */
export function findCalendarOverride(
  db: Db,
  companyId: string,
  state: string,
  forUpdate = false,
): Promise<CalendarOverrideRow | null> {
  return one<CalendarOverrideRow>(
    db,
    `SELECT ${OVERRIDE_COLUMNS} FROM company_calendar_overrides WHERE company_id = $1 AND state = $2${forUpdate ? ' FOR UPDATE' : ''}`,
    [companyId, state],
  );
}

/**
 * CAL-29, CAL-30: saves a company's override in `state` and appends the change (before, after, who, why) to
 * company_calendar_override_changes. Run inside the caller's transaction.
 */
export async function saveCalendarOverride(
  tx: Db,
  o: {
    companyId: string;
    state: string;
    anchorDate: string | null;
    anchorReason: string | null;
    estimatedTax: boolean;
  },
  before: CalendarOverrideRow | null,
  changedBy: string,
  note: string,
): Promise<CalendarOverrideRow> {
  const row = (await one<CalendarOverrideRow>(
    tx,
    `INSERT INTO company_calendar_overrides (company_id, state, anchor_date, anchor_reason, estimated_tax, updated_by)
     VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (company_id, state) DO UPDATE SET anchor_date = $3, anchor_reason = $4, estimated_tax = $5,
       updated_at = now(), updated_by = $6
     RETURNING ${OVERRIDE_COLUMNS}`,
    [o.companyId, o.state, o.anchorDate, o.anchorReason, o.estimatedTax, changedBy],
  ))!;
  const snapshot = (r: CalendarOverrideRow | null) =>
    r && { anchorDate: r.anchor_date, anchorReason: r.anchor_reason, estimatedTax: r.estimated_tax };
  await tx.query(
    'INSERT INTO company_calendar_override_changes (company_id, state, changed_by, note, before, after) VALUES ($1, $2, $3, $4, $5, $6)',
    [o.companyId, o.state, changedBy, note, snapshot(before), snapshot(row)],
  );
  return row;
}

/** The company a calendar override is for: its id and formation state, or null when unknown. */
export function findOverrideCompany(
  db: Db,
  companyId: string,
): Promise<{ id: string; formation_state: string | null; entity_type: 'LLC' | 'CORP' } | null> {
  return one(db, 'SELECT id, formation_state, entity_type FROM companies WHERE id = $1', [companyId]);
}

/**
 * CAL-34: replaces a jurisdiction's rule by the data file's when no operator has edited it (updated_by 'seed') and it
 * differs, appending the change to compliance_rule_changes as made by 'seed'. One statement, so it is atomic.
 */
export async function refreshSeedRule(db: Db, state: string, rule: unknown, note: string): Promise<void> {
  await db.query(
    `WITH old AS (
       SELECT state, rule FROM compliance_rules WHERE state = $1 AND updated_by = 'seed' AND rule <> $2::jsonb FOR UPDATE
     ), upd AS (
       UPDATE compliance_rules c SET rule = $2::jsonb, updated_at = now() FROM old WHERE c.state = old.state RETURNING c.state
     )
     INSERT INTO compliance_rule_changes (state, changed_by, note, before, after)
     SELECT old.state, 'seed', $3, old.rule, $2::jsonb FROM old`,
    [state, JSON.stringify(rule), note],
  );
}

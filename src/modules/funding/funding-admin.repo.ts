import type { Environment } from '../../context.js';
import { many, type Db } from '../../lib/db.js';
import type { TopUpRow, TopUpStatus } from './top-ups.repo.js';

/*
 * What operators read of funding across every organization (FUND-27, FUND-40): top-ups with their failures and what
 * disputes and refunds took back, the ledger entries of those disputes and refunds, and automatic recharges with their
 * attempts and failures. Keyset pages, newest first.
 */

/** Filters of the operators' lists; a day is 'YYYY-MM-DD' (UTC), `to` included. */
export interface FundingFilter {
  organizationId?: string;
  environment?: Environment;
  from?: string;
  to?: string;
  /** The last id of the previous page. */
  afterId?: string;
  limit: number;
}

/** A top-up with its organization's name (cents). */
export interface AdminTopUpRow extends TopUpRow {
  organization_name: string;
}

const tenantAndDays = `($1::text IS NULL OR x.organization_id = $1) AND ($2::text IS NULL OR x.environment = $2)
   AND ($3::date IS NULL OR x.created_at >= $3::date) AND ($4::date IS NULL OR x.created_at < $4::date + 1)
   AND ($5::text IS NULL OR x.id < $5)`;

const filterParams = (f: FundingFilter) => [
  f.organizationId ?? null,
  f.environment ?? null,
  f.from ?? null,
  f.to ?? null,
  f.afterId ?? null,
];

/**
 * Every organization's top-ups matching the filter, newest first; `status` narrows to one status, `takenBack` to the
 * ones a dispute or refund took money from (a recharge's status, FUND-41, matches none). `limit + 1` rows, so the caller can tell whether a page follows.
 */
export function listAllTopUps(
  db: Db,
  f: FundingFilter & { status?: TopUpStatus | RechargeStatus; takenBack?: boolean },
): Promise<AdminTopUpRow[]> {
  return many<AdminTopUpRow>(
    db,
    `SELECT x.*, o.name AS organization_name FROM top_ups x JOIN organizations o ON o.id = x.organization_id
      WHERE ${tenantAndDays} AND ($6::text IS NULL OR x.status = $6)
        AND (NOT $7::boolean OR x.disputed_cents + x.refunded_cents > 0)
      ORDER BY x.id DESC LIMIT $8`,
    [...filterParams(f), f.status ?? null, f.takenBack ?? false, f.limit + 1],
  );
}

/** A ledger entry of a dispute, a refund or a won dispute, with its organization's name (cents). */
export interface ReversalRow {
  id: string;
  organization_id: string;
  organization_name: string;
  environment: Environment;
  type: 'clawback' | 'credit';
  line_type: 'dispute' | 'refund' | 'dispute_won';
  amount_cents: number;
  balance_after_cents: number;
  reference: string;
  description: string;
  created_at: Date;
}

/** The ledger entries of disputes, refunds and won disputes matching the filter, newest first (`limit + 1` rows). */
export function listReversals(db: Db, f: FundingFilter): Promise<ReversalRow[]> {
  return many<ReversalRow>(
    db,
    `SELECT x.id, x.organization_id, o.name AS organization_name, x.environment, x.type, x.line_type,
            x.amount_cents, x.balance_after_cents, x.reference, x.description, x.created_at
       FROM ledger_entries x JOIN organizations o ON o.id = x.organization_id
      WHERE (x.type = 'clawback' OR (x.type = 'credit' AND x.line_type = 'dispute_won')) AND ${tenantAndDays}
      ORDER BY x.id DESC LIMIT $6`,
    [...filterParams(f), f.limit + 1],
  );
}

/** Where an automatic recharge stands (FUND-33): queued, processing (a bank debit), succeeded or failed. */
export type RechargeStatus = 'queued' | 'processing' | 'succeeded' | 'failed';

/** An automatic recharge as operators see it (FUND-40), with its organization's name and its top-up (cents). */
export interface AdminRechargeRow {
  id: string;
  organization_id: string;
  organization_name: string;
  environment: 'live';
  amount_cents: number | string;
  threshold_cents: number | string;
  /** The balance right after the debit that queued it, cents; null for a recharge queued before it was recorded. */
  balance_cents: number | string | null;
  status: RechargeStatus;
  /** Failed attempts so far (0..3). */
  attempts: number;
  failure_message: string | null;
  payment_intent: string | null;
  /** The top-up that credited it (succeeded only). */
  top_up_id: string | null;
  /** What disputes and refunds took back of its top-up, cents (0 without one). */
  taken_back_cents: number | string;
  next_attempt_at: Date | null;
  settled_at: Date | null;
  created_at: Date;
}

/**
 * Every organization's automatic recharges matching the filter, newest first (FUND-40): `status` narrows to one status,
 * `takenBack` to the ones whose top-up a dispute or refund took money from. `limit + 1` rows.
 */
export function listAllRecharges(
  db: Db,
  f: FundingFilter & { status?: TopUpStatus | RechargeStatus; takenBack?: boolean },
): Promise<AdminRechargeRow[]> {
  return many<AdminRechargeRow>(
    db,
    `SELECT x.id, x.organization_id, o.name AS organization_name, x.environment, x.amount_cents, x.threshold_cents,
            x.balance_cents, x.status, x.attempts, x.failure_message, x.payment_intent, x.top_up_id,
            COALESCE(t.disputed_cents + t.refunded_cents, 0) AS taken_back_cents, x.next_attempt_at, x.settled_at,
            x.created_at
       FROM auto_recharges x JOIN organizations o ON o.id = x.organization_id
       LEFT JOIN top_ups t ON t.id = x.top_up_id
      WHERE ${tenantAndDays} AND ($6::text IS NULL OR x.status = $6)
        AND (NOT $7::boolean OR t.disputed_cents + t.refunded_cents > 0)
      ORDER BY x.id DESC LIMIT $8`,
    [...filterParams(f), f.status ?? null, f.takenBack ?? false, f.limit + 1],
  );
}

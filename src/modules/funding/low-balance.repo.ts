import type { Environment } from '../../context.js';
import { one, type Db } from '../../lib/db.js';

/*
 * SQL of the low-balance email (FUND-28): the balance.low event a crossing wrote, with its organization's name and
 * technical contact, and the recharge the crossing debit started, if any. Money in cents; bigint may come back as a
 * string.
 */

/** A balance.low event as the email reads it: what crossed, to whom it belongs, and any recharge it started. */
export interface LowBalanceAlertRow {
  event_id: string;
  organization_id: string;
  organization_name: string;
  contact_email: string | null;
  environment: Environment;
  /** The balance right after the crossing debit, cents (may be below zero after a clawback). */
  balance_cents: number | string;
  /** The threshold crossed, cents. */
  threshold_cents: number | string;
  /** The ledger entry that crossed (txn_…). */
  balance_transaction_id: string | null;
  created_at: Date;
  /** The amount (cents) of the automatic recharge the crossing debit queued (FUND-33), or null when none. */
  recharge_cents: number | string | null;
}

/** The balance.low event `eventId` with its organization, or null when there is no such event of that type. */
export function findLowBalanceAlert(db: Db, eventId: string): Promise<LowBalanceAlertRow | null> {
  return one<LowBalanceAlertRow>(
    db,
    `SELECT e.id AS event_id, e.organization_id, o.name AS organization_name, o.contact_email, e.environment,
            round((e.data->>'balance')::numeric * 100)::bigint AS balance_cents,
            round((e.data->>'threshold')::numeric * 100)::bigint AS threshold_cents,
            e.data->>'balanceTransactionId' AS balance_transaction_id, e.created_at,
            (SELECT r.amount_cents FROM auto_recharges r
              WHERE r.organization_id = e.organization_id AND r.triggered_by = e.data->>'balanceTransactionId'
              ORDER BY r.id LIMIT 1) AS recharge_cents
       FROM events e JOIN organizations o ON o.id = e.organization_id
      WHERE e.id = $1 AND e.type = 'balance.low'`,
    [eventId],
  );
}

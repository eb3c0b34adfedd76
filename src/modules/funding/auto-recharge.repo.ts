import { many, one, type Db } from '../../lib/db.js';

/*
 * SQL of auto-recharge (FUND-30..FUND-39): the organization's settings (auto_recharge_settings) and its recharges
 * (auto_recharges, queued by the trigger queue_auto_recharge). Money in cents; bigint may come back as a string.
 */

/** An auto_recharge_settings row (FUND-30). Stripe ids only: the Customer and the saved PaymentMethod. */
export interface AutoRechargeSettingsRow {
  organization_id: string;
  enabled: boolean;
  threshold_cents: number | string | null;
  amount_cents: number | string | null;
  stripe_customer: string | null;
  payment_method: string | null;
  setup_session_id: string | null;
  disabled_reason: string | null;
  method_saved_at: Date | null;
  updated_at: Date;
}

/** Where a recharge stands (FUND-33): queued (waiting for an attempt), processing (bank debit), then settled. */
type AutoRechargeStatus = 'queued' | 'processing' | 'succeeded' | 'failed';

/** An auto_recharges row (FUND-33). */
export interface AutoRechargeRow {
  id: string;
  organization_id: string;
  environment: 'live';
  amount_cents: number | string;
  threshold_cents: number | string;
  stripe_customer: string;
  payment_method: string;
  status: AutoRechargeStatus;
  attempts: number;
  payment_intent: string | null;
  top_up_id: string | null;
  failure_message: string | null;
  triggered_by: string | null;
  balance_cents: number | string | null;
  next_attempt_at: Date | null;
  settled_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** An organization's auto-recharge as GET /balance/auto-recharge shows it: its settings and its newest recharge. */
export interface AutoRechargeState {
  settings: AutoRechargeSettingsRow | null;
  last: AutoRechargeRow | null;
}

/** The organization's settings, or null when it never set any. */
export function findSettings(db: Db, organizationId: string): Promise<AutoRechargeSettingsRow | null> {
  return one<AutoRechargeSettingsRow>(db, 'SELECT * FROM auto_recharge_settings WHERE organization_id = $1', [
    organizationId,
  ]);
}

/**
 * The organization's settings locked until the transaction ends (created empty when missing), so settings changes
 * and a method saved by Stripe's event run one at a time.
 */
export async function lockSettings(tx: Db, organizationId: string): Promise<AutoRechargeSettingsRow> {
  await tx.query('INSERT INTO auto_recharge_settings (organization_id) VALUES ($1) ON CONFLICT DO NOTHING', [
    organizationId,
  ]);
  return (await one<AutoRechargeSettingsRow>(
    tx,
    'SELECT * FROM auto_recharge_settings WHERE organization_id = $1 FOR NO KEY UPDATE',
    [organizationId],
  ))!;
}

/** Saves "below `thresholdCents`, add `amountCents`" and on/off; turning it on clears the reason it was turned off. */
export async function saveSettings(
  tx: Db,
  organizationId: string,
  s: { enabled: boolean; thresholdCents: number; amountCents: number },
): Promise<AutoRechargeSettingsRow> {
  return (await one<AutoRechargeSettingsRow>(
    tx,
    `UPDATE auto_recharge_settings SET enabled = $2, threshold_cents = $3, amount_cents = $4,
            disabled_reason = CASE WHEN $2 THEN NULL ELSE disabled_reason END, updated_at = now()
      WHERE organization_id = $1 RETURNING *`,
    [organizationId, s.enabled, s.thresholdCents, s.amountCents],
  ))!;
}

/** Records the Stripe Customer and the setup-mode Checkout Session just opened for the organization (FUND-31). */
export async function setSetupSession(tx: Db, organizationId: string, customer: string, sessionId: string) {
  await tx.query(
    `UPDATE auto_recharge_settings SET stripe_customer = $2, setup_session_id = $3, updated_at = now()
      WHERE organization_id = $1`,
    [organizationId, customer, sessionId],
  );
}

/** The settings whose newest setup session is `sessionId`, locked like {@link lockSettings}; null when none. */
export function lockBySetupSession(tx: Db, sessionId: string): Promise<AutoRechargeSettingsRow | null> {
  return one<AutoRechargeSettingsRow>(
    tx,
    'SELECT * FROM auto_recharge_settings WHERE setup_session_id = $1 FOR NO KEY UPDATE',
    [sessionId],
  );
}

/**
 * Stores the method a completed setup session saved (FUND-31) and turns auto-recharge on when a threshold and an
 * amount are set (saving a method again is how an owner resumes after failures, FUND-36).
 */
export async function saveMethod(
  tx: Db,
  organizationId: string,
  customer: string,
  paymentMethod: string,
): Promise<AutoRechargeSettingsRow> {
  return (await one<AutoRechargeSettingsRow>(
    tx,
    `UPDATE auto_recharge_settings SET stripe_customer = $2, payment_method = $3, method_saved_at = now(),
            enabled = threshold_cents IS NOT NULL AND amount_cents IS NOT NULL, disabled_reason = NULL,
            setup_session_id = NULL, updated_at = now()
      WHERE organization_id = $1 RETURNING *`,
    [organizationId, customer, paymentMethod],
  ))!;
}

/** Turns auto-recharge off with the reason shown to the owners (FUND-36). */
export async function disable(tx: Db, organizationId: string, reason: string): Promise<void> {
  await tx.query(
    `UPDATE auto_recharge_settings SET enabled = false, disabled_reason = $2, updated_at = now()
      WHERE organization_id = $1`,
    [organizationId, reason],
  );
}

/** One recharge by id, or null. */
export function findRecharge(db: Db, id: string): Promise<AutoRechargeRow | null> {
  return one<AutoRechargeRow>(db, 'SELECT * FROM auto_recharges WHERE id = $1', [id]);
}

/** One recharge locked until the transaction ends (its attempts and events run one at a time: FUND-35). */
export function lockRecharge(tx: Db, id: string): Promise<AutoRechargeRow | null> {
  return one<AutoRechargeRow>(tx, 'SELECT * FROM auto_recharges WHERE id = $1 FOR NO KEY UPDATE', [id]);
}

/** The organization's newest recharges, newest first. */
export function listRecharges(db: Db, organizationId: string, limit: number): Promise<AutoRechargeRow[]> {
  return many<AutoRechargeRow>(
    db,
    'SELECT * FROM auto_recharges WHERE organization_id = $1 ORDER BY id DESC LIMIT $2',
    [organizationId, limit],
  );
}

/** A bank debit is under way for the recharge (Stripe answered `processing`): it waits for Stripe's event. */
export async function markProcessing(tx: Db, id: string, paymentIntent: string): Promise<void> {
  await tx.query(
    `UPDATE auto_recharges SET status = 'processing', payment_intent = $2, updated_at = now() WHERE id = $1`,
    [id, paymentIntent],
  );
}

/** The recharge succeeded: its money is the top-up `topUpId`, paid by `paymentIntent` (FUND-35). */
export async function markSucceeded(tx: Db, id: string, paymentIntent: string, topUpId: string): Promise<void> {
  await tx.query(
    `UPDATE auto_recharges SET status = 'succeeded', payment_intent = $2, top_up_id = $3, settled_at = now(),
            next_attempt_at = NULL, updated_at = now()
      WHERE id = $1`,
    [id, paymentIntent, topUpId],
  );
}

/**
 * Records failed attempt number `attempts` (FUND-36): queued again for `nextAttemptAt`, or, with null, failed for good.
 */
export async function recordFailure(
  tx: Db,
  id: string,
  f: { attempts: number; message: string; paymentIntent: string | null; nextAttemptAt: Date | null },
): Promise<AutoRechargeRow> {
  return (await one<AutoRechargeRow>(
    tx,
    `UPDATE auto_recharges SET attempts = $2, failure_message = $3, payment_intent = coalesce($4, payment_intent),
            status = CASE WHEN $5::timestamptz IS NULL THEN 'failed' ELSE 'queued' END, next_attempt_at = $5,
            settled_at = CASE WHEN $5::timestamptz IS NULL THEN now() END, updated_at = now()
      WHERE id = $1 RETURNING *`,
    [id, f.attempts, f.message.slice(0, 500), f.paymentIntent, f.nextAttemptAt],
  ))!;
}

/** The e-mail addresses of the organization's owners (members not disabled), oldest membership first (FUND-28, FUND-36). */
export async function ownerEmails(db: Db, organizationId: string): Promise<string[]> {
  const rows = await many<{ email: string }>(
    db,
    `SELECT m.email FROM organization_memberships om JOIN members m ON m.id = om.member_id
      WHERE om.organization_id = $1 AND om.role = 'owner' AND m.disabled_at IS NULL
      ORDER BY om.created_at, m.id`,
    [organizationId],
  );
  return rows.map((r) => r.email);
}

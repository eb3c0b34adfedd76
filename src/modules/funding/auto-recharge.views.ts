import { centsToDollars } from '../../lib/money.js';
import type { AutoRechargeRow, AutoRechargeSettingsRow, AutoRechargeState } from './auto-recharge.repo.js';

const dollarsOrNull = (cents: number | string | null) => (cents === null ? null : centsToDollars(cents));

/** A recharge as the API and the portal show it (FUND-37); amounts in dollars. */
function autoRechargeView(r: AutoRechargeRow) {
  return {
    id: r.id,
    object: 'auto_recharge' as const,
    amount: centsToDollars(r.amount_cents),
    threshold: centsToDollars(r.threshold_cents),
    status: r.status,
    attempts: r.attempts,
    topUpId: r.top_up_id,
    failureMessage: r.failure_message,
    nextAttemptAt: r.status === 'queued' && r.next_attempt_at ? r.next_attempt_at.toISOString() : null,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  };
}

/** GET /balance/auto-recharge (FUND-30, FUND-37): the settings in dollars, whether a method is saved, the last recharge. */
export function autoRechargeSettingsView({ settings: s, last }: AutoRechargeState) {
  return {
    object: 'auto_recharge_settings' as const,
    enabled: s?.enabled ?? false,
    threshold: dollarsOrNull(s?.threshold_cents ?? null),
    amount: dollarsOrNull(s?.amount_cents ?? null),
    paymentMethodSaved: Boolean(s?.payment_method),
    disabledReason: s?.disabled_reason ?? null,
    lastRecharge: last ? autoRechargeView(last) : null,
  };
}

/** The payload of `balance.auto_recharge_failed` (FUND-36): the recharge, its amount in dollars, attempts, why. */
export function autoRechargeFailedEvent(r: AutoRechargeRow) {
  return {
    autoRechargeId: r.id,
    amount: centsToDollars(r.amount_cents),
    attempts: r.attempts,
    failureMessage: r.failure_message ?? '',
  };
}

/** The settings as the audit log keeps them (AUDIT-3, FUND-32): cents, and whether a method is saved (never its id). */
export function autoRechargeSnapshot(s: AutoRechargeSettingsRow): Record<string, unknown> {
  return {
    enabled: s.enabled,
    thresholdCents: s.threshold_cents === null ? null : Number(s.threshold_cents),
    amountCents: s.amount_cents === null ? null : Number(s.amount_cents),
    paymentMethodSaved: s.payment_method !== null,
  };
}

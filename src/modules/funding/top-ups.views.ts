import { centsToDollars } from '../../lib/money.js';
import type { LedgerEntryRow } from '../billing/ledger.js';
import type { TopUpRow } from './top-ups.repo.js';

/** A top-up as the API shows it (FUND-1); amounts in dollars. */
export function topUpView(t: TopUpRow) {
  return {
    id: t.id,
    object: 'top_up' as const,
    amount: centsToDollars(t.amount_cents),
    status: t.status,
    checkoutUrl: t.status === 'pending' ? t.checkout_url : null,
    failureMessage: t.failure_message,
    createdAt: t.created_at.toISOString(),
    updatedAt: t.updated_at.toISOString(),
  };
}

/**
 * The money part of a top-up's event (FUND-5, FUND-10): the top-up, the amount credited or taken back (`amountCents`,
 * shown in dollars, always positive) and the balance after the ledger entry that moved it.
 */
export function topUpMoneyEvent(topUpId: string, amountCents: number, entry: LedgerEntryRow) {
  return {
    topUpId,
    amount: centsToDollars(amountCents),
    balance: centsToDollars(entry.balance_after_cents),
    balanceTransactionId: entry.id,
  };
}

/** The payload of `balance.top_up_failed` (FUND-4): the top-up, its amount in dollars and why it failed. */
export function topUpFailedEvent(topUp: TopUpRow, failureMessage: string) {
  return { topUpId: topUp.id, amount: centsToDollars(topUp.amount_cents), failureMessage };
}

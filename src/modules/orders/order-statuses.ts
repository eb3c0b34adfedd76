/*
 * The statuses an order row holds (ORD-4), the same lists as the CHECK constraints of `orders.filing_status` and
 * `orders.subscription_status` (migrations/001). The orders module owns the row, so it owns these; the filing state
 * machine (filings/transitions.ts) and the renewals (subscriptions/) read them from here.
 */

/** Every filingStatus (FIL-1); every order starts submitted (ORD-8). */
export const FILING_STATUSES = ['submitted', 'pending', 'filed', 'exception', 'cancelled'] as const;

/** One of FILING_STATUSES. */
export type FilingStatus = (typeof FILING_STATUSES)[number];

/** Subscription statuses of an order item (ORD-4, SUB-1); null on one-time filings. */
export type SubscriptionStatus = 'active' | 'canceled' | 'past_due';

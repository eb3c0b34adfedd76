import { centsToDollars } from '../../lib/money.js';
import { withFields } from '../../lib/objects.js';

/*
 * The subscriptions module's presenters: where renewal amounts in cents become the public dollar shapes (API-5),
 * for the CLI/JSON run summary and the detail of status-change events.
 */

/**
 * The CLI/JSON view of a run (a RenewalRunSummary): outcome amounts cents in, `amount` dollars out. Typed by shape,
 * so this file does not import the service that calls it.
 */
export function renewalRunView<C, O extends { amountCents: number }>(summary: {
  asOf: string;
  counts: C;
  outcomes: O[];
}) {
  return {
    asOf: summary.asOf,
    counts: summary.counts,
    subscriptions: summary.outcomes.map(({ amountCents, ...o }) =>
      withFields(o, { amount: centsToDollars(amountCents) }),
    ),
  };
}

/** The detail of a change to past_due for lack of balance: amount due and balance cents in, dollars out. */
export function pastDueDetail(amountDueCents: number, balanceCents: number, periodStart: string) {
  return { amountDue: centsToDollars(amountDueCents), balance: centsToDollars(balanceCents), periodStart };
}

/** The detail of a reactivation once paid: the amount paid cents in, dollars out. */
export function reactivatedDetail(amountPaidCents: number) {
  return { amountPaid: centsToDollars(amountPaidCents) };
}

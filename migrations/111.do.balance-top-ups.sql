-- Funding the prepaid balance (rules FUND-1..FUND-19 in docs/rules.md): top-ups paid through Stripe Checkout (card or
-- US bank account debit), the balance taken back when a top-up's charge is disputed or refunded, and the low-balance
-- threshold.
--
-- top_ups: one row per POST /balance/top-ups. Live: a Checkout Session is opened and the row waits (pending, then
-- processing for a bank debit) until Stripe's signed event says the money is there (succeeded) or not (failed,
-- expired). Test: credited at once (provider 'test', succeeded). `payment_intent` is Stripe's PaymentIntent of the
-- paid session: disputes and refunds name it. `disputed_cents`, `refunded_cents`: how much of it has been taken back
-- because its charge was disputed or refunded (Stripe reports refunds as the charge's running total).
CREATE TABLE top_ups (
  id                  text PRIMARY KEY,
  organization_id     text NOT NULL REFERENCES organizations(id),
  environment         text NOT NULL CHECK (environment IN ('live', 'test')),
  amount_cents        bigint NOT NULL CHECK (amount_cents > 0),
  provider            text NOT NULL CHECK (provider IN ('stripe', 'test')),
  status              text NOT NULL DEFAULT 'pending'
                        CHECK (status IN ('pending', 'processing', 'succeeded', 'failed', 'expired')),
  provider_session_id text UNIQUE,
  checkout_url        text,
  payment_intent      text,
  idempotency_key     text,
  failure_message     text,
  disputed_cents      bigint NOT NULL DEFAULT 0 CHECK (disputed_cents >= 0),
  refunded_cents      bigint NOT NULL DEFAULT 0 CHECK (refunded_cents >= 0),
  succeeded_at        timestamptz,
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now(),
  CHECK ((status = 'succeeded') = (succeeded_at IS NOT NULL)),
  CHECK (disputed_cents + refunded_cents <= amount_cents),
  UNIQUE (organization_id, environment, idempotency_key)
);
CREATE INDEX top_ups_tenant ON top_ups (organization_id, environment, id DESC);
-- Not unique on purpose: a column of a unique index is a key column, and setting it would take the row's strongest lock,
-- which waits for the key-share lock each event record holds on its top-up, so racing events would deadlock (FUND-5).
CREATE INDEX top_ups_payment_intent ON top_ups (payment_intent) WHERE payment_intent IS NOT NULL;

-- A Stripe event about a top-up is recorded with it, as checkout events are with their checkout (FUND-6).
ALTER TABLE payment_provider_events ADD COLUMN top_up_id text REFERENCES top_ups(id);

-- A ledger entry may name the payment it comes from: the top-up credited, or the dispute or refund taken back. One
-- entry per (type, reference): a top-up is credited once and a dispute or refund debited once, whatever Stripe
-- redelivers (FUND-5, FUND-10).
ALTER TABLE ledger_entries ADD COLUMN reference text;
CREATE UNIQUE INDEX ledger_entries_one_per_reference ON ledger_entries (type, reference) WHERE reference IS NOT NULL;

-- `clawback`: money of a top-up taken back because its charge was disputed or refunded (FUND-10). It is the only kind
-- of entry that may take a balance below zero; every other entry that takes money leaves the balance at 0 or more
-- (FUND-11). That row check replaces the balances row's CHECK (balance_cents >= 0): balances move only through the
-- ledger's functions, which write each entry with the balance right after it.
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_type_check;
ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_type_check
  CHECK (type IN ('credit', 'debit', 'reversal', 'clawback'));
ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_no_overdraft
  CHECK (amount_cents >= 0 OR balance_after_cents >= 0 OR type = 'clawback');
ALTER TABLE balances DROP CONSTRAINT balances_balance_cents_check;

-- The low-balance threshold (FUND-15), in cents; null: no alert. One per organization, applied to each environment's
-- balance on its own.
ALTER TABLE organizations ADD COLUMN low_balance_threshold_cents bigint CHECK (low_balance_threshold_cents >= 0);

-- Auto-recharge of the live balance (rules FUND-30..FUND-39 in docs/rules.md): an owner saves a card or US bank
-- account through Stripe Checkout in setup mode and sets "when the live balance falls below X, add Y"; a debit that
-- takes the live balance below X queues one recharge (trigger queue_auto_recharge, in the debit's transaction), which a
-- background job charges off-session with the saved method.
--
-- auto_recharge_settings: one row per organization. Stripe's ids only (the Customer and the PaymentMethod; never card
-- or account details). `setup_session_id`: the newest setup-mode Checkout Session opened, whose completion saves the
-- method (FUND-31). `disabled_reason`: why the service turned auto-recharge off (three failed attempts, FUND-36);
-- cleared when the owner turns it on again or saves a method again.
CREATE TABLE auto_recharge_settings (
  organization_id  text PRIMARY KEY REFERENCES organizations(id),
  enabled          boolean NOT NULL DEFAULT false,
  threshold_cents  bigint CHECK (threshold_cents >= 0),
  amount_cents     bigint CHECK (amount_cents > 0),
  stripe_customer  text,
  payment_method   text,
  setup_session_id text,
  disabled_reason  text,
  method_saved_at  timestamptz,
  updated_at       timestamptz NOT NULL DEFAULT now(),
  -- FUND-32: on only with a threshold, an amount and a saved method.
  CHECK (NOT enabled OR (threshold_cents IS NOT NULL AND amount_cents IS NOT NULL AND payment_method IS NOT NULL
                         AND stripe_customer IS NOT NULL))
);
-- Not unique on purpose (as top_ups.payment_intent, FUND-5): setting it must not take the row's key lock.
CREATE INDEX auto_recharge_settings_setup_session ON auto_recharge_settings (setup_session_id)
  WHERE setup_session_id IS NOT NULL;

-- auto_recharges: one row per recharge queued (FUND-33). queued: waiting for its next attempt (`attempts` failed so
-- far); processing: a bank debit is under way (Stripe answered `processing`); succeeded: credited (`top_up_id`, the
-- top-up that carries its money, FUND-35); failed: three attempts failed (FUND-36). The customer, method, amount and
-- threshold are copied when it is queued, so a change of settings never changes a recharge under way.
CREATE TABLE auto_recharges (
  id               text PRIMARY KEY,
  organization_id  text NOT NULL REFERENCES organizations(id),
  environment      text NOT NULL DEFAULT 'live' CHECK (environment = 'live'),
  amount_cents     bigint NOT NULL CHECK (amount_cents > 0),
  threshold_cents  bigint NOT NULL CHECK (threshold_cents >= 0),
  stripe_customer  text NOT NULL,
  payment_method   text NOT NULL,
  status           text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'processing', 'succeeded', 'failed')),
  attempts         int NOT NULL DEFAULT 0 CHECK (attempts BETWEEN 0 AND 3),
  payment_intent   text,
  top_up_id        text REFERENCES top_ups(id),
  failure_message  text,
  -- The ledger entry whose posting took the balance below the threshold, and the balance right after it.
  triggered_by     text,
  balance_cents    bigint,
  next_attempt_at  timestamptz,
  settled_at       timestamptz,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  CHECK ((status IN ('succeeded', 'failed')) = (settled_at IS NOT NULL))
);
-- FUND-34: at most one recharge in flight per organization, whatever races. A partial index is no key of the row, so
-- moving a recharge's status takes no key lock.
CREATE UNIQUE INDEX auto_recharges_one_in_flight ON auto_recharges (organization_id)
  WHERE status IN ('queued', 'processing');
CREATE INDEX auto_recharges_organization ON auto_recharges (organization_id, id DESC);
CREATE INDEX auto_recharges_payment_intent ON auto_recharges (payment_intent) WHERE payment_intent IS NOT NULL;

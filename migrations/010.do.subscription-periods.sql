-- Yearly renewal of subscription orders (registered_agent, annual_report; spec "Order item" subscriptionStatus,
-- billing rule 5). See src/modules/subscriptions/.

-- The end of the period paid for (exclusive, UTC date): placement date + 1 year, advanced a year per renewal.
-- NULL for one-time filings.
ALTER TABLE orders ADD COLUMN current_period_end date;
UPDATE orders SET current_period_end = ((created_at AT TIME ZONE 'UTC')::date + interval '1 year')::date
 WHERE order_type IN ('registered_agent', 'annual_report') AND subscription_status IS NOT NULL;

-- The daily renewal run scans only live subscriptions whose period may have ended.
CREATE INDEX orders_subscription_due ON orders (current_period_end)
  WHERE subscription_status IN ('active', 'past_due') AND current_period_end IS NOT NULL;

-- One row per period paid by a renewal. The unique key makes renewal idempotent: a period is charged once,
-- whatever runs (cron, CLI, a retried job) race for it.
CREATE TABLE subscription_renewals (
  id              text PRIMARY KEY,
  order_id        text NOT NULL REFERENCES orders(id),
  organization_id text NOT NULL REFERENCES organizations(id),
  environment     text NOT NULL CHECK (environment IN ('live', 'test')),
  period_start    date NOT NULL,
  period_end      date NOT NULL CHECK (period_end > period_start),
  amount_cents    bigint NOT NULL CHECK (amount_cents >= 0),
  ledger_entry_ids text[] NOT NULL,
  created_by      text NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT subscription_renewals_period_unique UNIQUE (order_id, period_start)
);
CREATE INDEX subscription_renewals_tenant ON subscription_renewals (organization_id, environment, created_at DESC);

-- Every subscriptionStatus change made by the renewal run (active -> past_due, past_due -> active, -> canceled
-- when superseded), with why, who, and the filing.status_changed event that reported it.
CREATE TABLE subscription_status_changes (
  id              text PRIMARY KEY,
  order_id        text NOT NULL REFERENCES orders(id),
  organization_id text NOT NULL REFERENCES organizations(id),
  environment     text NOT NULL CHECK (environment IN ('live', 'test')),
  from_status     text,
  to_status       text NOT NULL CHECK (to_status IN ('active', 'canceled', 'past_due')),
  reason          text NOT NULL,
  detail          jsonb NOT NULL DEFAULT '{}',
  event_id        text REFERENCES events(id),
  actor           text NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX subscription_status_changes_order ON subscription_status_changes (order_id, created_at);

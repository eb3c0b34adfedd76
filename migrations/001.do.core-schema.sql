-- Core schema. A tenant is (organization_id, environment); every tenant-owned row carries both and
-- every query filters on both (ARCHITECTURE.md "Tenancy and environments"). Money is integer cents.

CREATE TABLE organizations (
  id                  text PRIMARY KEY,
  name                text NOT NULL CHECK (length(name) > 0),
  white_label_domain  text UNIQUE,
  branding            jsonb NOT NULL DEFAULT '{}',
  email_notifications boolean NOT NULL DEFAULT true,
  dashboard_billing   text NOT NULL DEFAULT 'organization' CHECK (dashboard_billing IN ('organization', 'customer')),
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_keys (
  id              text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id),
  environment     text NOT NULL CHECK (environment IN ('live', 'test')),
  key_hash        text NOT NULL UNIQUE,           -- sha256 of the whole key; the key itself is never stored
  redacted        text NOT NULL,                  -- e.g. sk_test_abc…wxyz, for lists
  created_at      timestamptz NOT NULL DEFAULT now(),
  revoked_at      timestamptz
);
CREATE INDEX api_keys_org ON api_keys (organization_id);

CREATE TABLE users (
  id               text PRIMARY KEY,
  organization_id  text NOT NULL REFERENCES organizations(id),
  environment      text NOT NULL CHECK (environment IN ('live', 'test')),
  full_name        text NOT NULL,
  email            text NOT NULL,
  email_normalized text NOT NULL,
  phone_number     text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT users_email_unique UNIQUE (organization_id, environment, email_normalized)
);

CREATE TABLE companies (
  id                text PRIMARY KEY,
  organization_id   text NOT NULL REFERENCES organizations(id),
  environment       text NOT NULL CHECK (environment IN ('live', 'test')),
  slug              text NOT NULL,
  legal_name        text NOT NULL,
  trade_name        text,
  ein               text,
  entity_type       text NOT NULL CHECK (entity_type IN ('LLC', 'CORP')),
  structure_type    text,
  tax_election      text,
  fiscal_end_month  text NOT NULL DEFAULT 'December',
  formation_date    date,
  formation_state   text,
  principal_address jsonb NOT NULL,
  mailing_address   jsonb NOT NULL,
  officers          jsonb NOT NULL DEFAULT '[]',
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT companies_slug_unique UNIQUE (organization_id, environment, slug)
);

CREATE TABLE company_admins (
  company_id      text NOT NULL REFERENCES companies(id),
  user_id         text NOT NULL REFERENCES users(id),
  organization_id text NOT NULL,
  environment     text NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (company_id, user_id)
);
CREATE INDEX company_admins_user ON company_admins (user_id);

-- Prices. Catalogue rows are the operator's defaults; retail prices are per tenant; wholesale
-- overrides are per organization (spec "Price row", "PUT /organization/prices/{type}", billing rule 11).
CREATE TABLE price_catalog (
  type                   text PRIMARY KEY,
  name                   text NOT NULL,
  description            text NOT NULL,
  default_amount_cents   bigint NOT NULL CHECK (default_amount_cents >= 0),
  wholesale_amount_cents bigint NOT NULL CHECK (wholesale_amount_cents >= 0),
  sort_order             int NOT NULL,
  updated_at             timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE organization_wholesale_prices (
  organization_id        text NOT NULL REFERENCES organizations(id),
  type                   text NOT NULL REFERENCES price_catalog(type),
  wholesale_amount_cents bigint NOT NULL CHECK (wholesale_amount_cents >= 0),
  updated_at             timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, type)
);

CREATE TABLE organization_prices (
  organization_id     text NOT NULL REFERENCES organizations(id),
  environment         text NOT NULL CHECK (environment IN ('live', 'test')),
  type                text NOT NULL REFERENCES price_catalog(type),
  retail_amount_cents bigint CHECK (retail_amount_cents >= 0),
  enabled             boolean NOT NULL DEFAULT true,
  updated_at          timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, environment, type)
);

-- State fee schedule, seeded from data/state-fees.json and editable by the operator.
CREATE TABLE state_fees (
  state                      text PRIMARY KEY,
  name                       text NOT NULL,
  llc_formation_cents        bigint NOT NULL,
  corp_formation_cents       bigint NOT NULL,
  llc_foreign_cents          bigint NOT NULL,
  corp_foreign_cents         bigint NOT NULL,
  llc_annual_report_cents    bigint NOT NULL,
  corp_annual_report_cents   bigint NOT NULL,
  expedited_formation_cents  bigint,             -- spec formation rule 5; null where expedite is unavailable
  source                     jsonb NOT NULL DEFAULT '{}',   -- notes, sources, confidence, unverifiedFields
  updated_at                 timestamptz NOT NULL DEFAULT now(),
  updated_by                 text
);

-- Prepaid balance: the cached sum of the tenant's ledger entries, locked while an order is placed.
CREATE TABLE balances (
  organization_id text NOT NULL REFERENCES organizations(id),
  environment     text NOT NULL CHECK (environment IN ('live', 'test')),
  balance_cents   bigint NOT NULL DEFAULT 0 CHECK (balance_cents >= 0),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, environment)
);

-- A POST /orders request (or a dashboard checkout): one per request, one or more orders under it.
CREATE TABLE order_groups (
  id              text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id),
  environment     text NOT NULL CHECK (environment IN ('live', 'test')),
  user_id         text NOT NULL REFERENCES users(id),
  company_id      text NOT NULL REFERENCES companies(id),
  filing_state    text NOT NULL,
  source          text NOT NULL CHECK (source IN ('api', 'dashboard')),
  billing         text NOT NULL CHECK (billing IN ('balance', 'checkout')),
  request         jsonb NOT NULL,
  total_cents     bigint NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE orders (
  id                  text PRIMARY KEY,
  organization_id     text NOT NULL REFERENCES organizations(id),
  environment         text NOT NULL CHECK (environment IN ('live', 'test')),
  group_id            text NOT NULL REFERENCES order_groups(id),
  company_id          text NOT NULL REFERENCES companies(id),
  user_id             text NOT NULL REFERENCES users(id),
  order_type          text NOT NULL,     -- formation, ein, annual_report, registered_agent, foreign_qualification, certificate_of_good_standing, dba
  filing_state        text NOT NULL,
  filing_status       text NOT NULL DEFAULT 'submitted' CHECK (filing_status IN ('submitted', 'pending', 'filed', 'exception', 'cancelled')),
  filing_type         text,              -- e.g. change_of_agent
  filing_date         date,
  subscription_status text CHECK (subscription_status IN ('active', 'canceled', 'past_due')),
  exception_code      text,
  exception_message   text,
  details             jsonb NOT NULL DEFAULT '{}',  -- the product object of the request
  billing             text NOT NULL CHECK (billing IN ('balance', 'checkout')),
  amount_cents        bigint NOT NULL DEFAULT 0,    -- what was charged for this order (service + state fee)
  retail_cents        bigint,                        -- in-app checkout only
  margin_cents        bigint,                        -- in-app checkout only: retail - wholesale (billing rule 10)
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX orders_tenant_created ON orders (organization_id, environment, created_at DESC);
CREATE INDEX orders_company ON orders (company_id);
CREATE INDEX orders_queue ON orders (environment, filing_status, created_at) WHERE filing_status IN ('submitted', 'pending', 'exception');

-- Append-only ledger: amount_cents > 0 credits, < 0 debits; a reversal is a new entry (ARCHITECTURE.md "Money").
CREATE TABLE ledger_entries (
  id                  text PRIMARY KEY,
  organization_id     text NOT NULL REFERENCES organizations(id),
  environment         text NOT NULL CHECK (environment IN ('live', 'test')),
  type                text NOT NULL CHECK (type IN ('credit', 'debit', 'reversal')),
  amount_cents        bigint NOT NULL,
  balance_after_cents bigint NOT NULL,
  line_type           text,              -- price type (formation_tier_1 ...) or state_fee
  description         text NOT NULL,
  order_id            text REFERENCES orders(id),
  reverses_entry_id   text REFERENCES ledger_entries(id),
  created_by          text,
  created_at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ledger_entries_tenant ON ledger_entries (organization_id, environment, id DESC);
CREATE INDEX ledger_entries_order ON ledger_entries (order_id);
CREATE UNIQUE INDEX ledger_entries_one_reversal ON ledger_entries (reverses_entry_id) WHERE reverses_entry_id IS NOT NULL;

CREATE TABLE order_status_history (
  id                text PRIMARY KEY,
  order_id          text NOT NULL REFERENCES orders(id),
  organization_id   text NOT NULL,
  environment       text NOT NULL,
  from_status       text,
  to_status         text NOT NULL,
  exception_code    text,
  exception_message text,
  filing_date       date,
  actor             text NOT NULL,     -- api, dashboard, test_helper, operator:<op id>, cli
  created_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX order_status_history_order ON order_status_history (order_id, created_at);

CREATE TABLE documents (
  id              text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id),
  environment     text NOT NULL CHECK (environment IN ('live', 'test')),
  order_id        text REFERENCES orders(id),
  company_id      text NOT NULL REFERENCES companies(id),
  document_type   text NOT NULL,
  file_name       text NOT NULL,
  file_type       text NOT NULL,
  storage_key     text NOT NULL,
  size_bytes      bigint NOT NULL,
  uploaded_by     text NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX documents_company ON documents (company_id);

-- Events and webhooks, after Svix: endpoint -> event -> delivery -> attempt.
CREATE TABLE events (
  id              text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id),
  environment     text NOT NULL CHECK (environment IN ('live', 'test')),
  type            text NOT NULL,
  data            jsonb NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX events_tenant ON events (organization_id, environment, id DESC);

CREATE TABLE webhook_endpoints (
  id                          text PRIMARY KEY,
  organization_id             text NOT NULL REFERENCES organizations(id),
  environment                 text NOT NULL CHECK (environment IN ('live', 'test')),
  url                         text NOT NULL,
  event_types                 text[] NOT NULL,
  secret                      text NOT NULL,
  previous_secret             text,
  previous_secret_expires_at  timestamptz,
  disabled                    boolean NOT NULL DEFAULT false,
  disabled_reason             text,
  failing_since               timestamptz,
  created_at                  timestamptz NOT NULL DEFAULT now(),
  updated_at                  timestamptz NOT NULL DEFAULT now(),
  deleted_at                  timestamptz
);
CREATE INDEX webhook_endpoints_tenant ON webhook_endpoints (organization_id, environment) WHERE deleted_at IS NULL;

CREATE TABLE webhook_deliveries (
  id              text PRIMARY KEY,
  organization_id text NOT NULL,
  environment     text NOT NULL,
  endpoint_id     text NOT NULL REFERENCES webhook_endpoints(id),
  event_id        text NOT NULL REFERENCES events(id),
  status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
  attempt_count   int NOT NULL DEFAULT 0,
  next_attempt_at timestamptz,
  last_attempt_at timestamptz,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_deliveries_tenant ON webhook_deliveries (organization_id, environment, id DESC);
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, id DESC);
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id);

CREATE TABLE webhook_attempts (
  id              text PRIMARY KEY,
  delivery_id     text NOT NULL REFERENCES webhook_deliveries(id),
  organization_id text NOT NULL,
  environment     text NOT NULL,
  attempt_number  int NOT NULL,
  url             text NOT NULL,
  status_code     int,
  duration_ms     int NOT NULL,
  response_body   text,       -- first 4 KB
  error           text,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id, attempt_number);

-- Idempotency-Key support for POST requests (issue 3, item 9).
CREATE TABLE idempotency_keys (
  organization_id text NOT NULL,
  environment     text NOT NULL,
  key             text NOT NULL,
  request_hash    text NOT NULL,
  status          text NOT NULL CHECK (status IN ('running', 'done')),
  response_status int,
  response_body   jsonb,
  created_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, environment, key)
);

-- Dashboard: magic links and customer sessions (tokens stored only as sha256).
CREATE TABLE magic_links (
  id              text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id),
  environment     text NOT NULL,
  user_id         text NOT NULL REFERENCES users(id),
  company_id      text REFERENCES companies(id),
  token_hash      text NOT NULL UNIQUE,
  expires_at      timestamptz NOT NULL,
  used_at         timestamptz,
  created_at      timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE dashboard_sessions (
  id_hash         text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id),
  environment     text NOT NULL,
  user_id         text NOT NULL REFERENCES users(id),
  magic_link_id   text REFERENCES magic_links(id),
  csrf_token      text NOT NULL,
  expires_at      timestamptz NOT NULL,
  revoked_at      timestamptz,
  created_at      timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE payments (
  id              text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id),
  environment     text NOT NULL,
  group_id        text REFERENCES order_groups(id),
  provider        text NOT NULL,
  amount_cents    bigint NOT NULL,
  status          text NOT NULL CHECK (status IN ('succeeded', 'declined')),
  card_last4      text,
  failure_message text,
  created_at      timestamptz NOT NULL DEFAULT now()
);

-- Console: operator accounts, sessions, login throttling.
CREATE TABLE operators (
  id            text PRIMARY KEY,
  email         text NOT NULL UNIQUE,
  name          text NOT NULL,
  password_hash text NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  disabled_at   timestamptz
);

CREATE TABLE operator_sessions (
  id_hash     text PRIMARY KEY,
  operator_id text NOT NULL REFERENCES operators(id),
  csrf_token  text NOT NULL,
  expires_at  timestamptz NOT NULL,
  revoked_at  timestamptz,
  created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE login_attempts (
  key          text NOT NULL,     -- e.g. email:<address> or ip:<address>
  succeeded    boolean NOT NULL,
  attempted_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX login_attempts_key ON login_attempts (key, attempted_at DESC);

-- Instance-wide facts such as "demo organization created".
CREATE TABLE instance_settings (
  key        text PRIMARY KEY,
  value      jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

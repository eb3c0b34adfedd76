-- Issue 5 (review fix): every dashboard checkout form carries a one-time token; only its sha256 is kept here,
-- tied to the session that was shown the form. Submitting locks the row (concurrent submits of one form queue
-- behind each other) and the order group placed stores `dashboard-checkout:<token_hash>` as its idempotency_key,
-- so a resubmitted form finds its earlier orders instead of placing or charging again. `attempts` counts
-- committed failed payment attempts: the provider idempotency key is `<key>:<attempts>`, so a retry after a
-- decline is a new charge while a retry after a crash mid-charge is the same one.
CREATE TABLE checkout_forms (
  token_hash      text PRIMARY KEY,
  session_id_hash text NOT NULL REFERENCES dashboard_sessions(id_hash) ON DELETE CASCADE,
  organization_id text NOT NULL REFERENCES organizations(id),
  environment     text NOT NULL,
  attempts        integer NOT NULL DEFAULT 0,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX checkout_forms_created ON checkout_forms (created_at);

-- Issue 5: dashboard sessions expire after 12 h idle (last_seen_at) or at expires_at (7 days absolute),
-- magic links are looked up per user, and payments of in-app checkout keep the provider's reference,
-- who paid, and whether the charge was refunded (an order that could not be placed after a charge).
ALTER TABLE dashboard_sessions ADD COLUMN last_seen_at timestamptz NOT NULL DEFAULT now();
CREATE INDEX dashboard_sessions_user ON dashboard_sessions (user_id);
CREATE INDEX magic_links_user ON magic_links (user_id);

ALTER TABLE payments
  ADD COLUMN user_id            text REFERENCES users(id),
  ADD COLUMN company_id         text REFERENCES companies(id),
  ADD COLUMN provider_reference text,
  ADD COLUMN refunded_at        timestamptz;
ALTER TABLE payments DROP CONSTRAINT payments_status_check;
ALTER TABLE payments ADD CONSTRAINT payments_status_check CHECK (status IN ('succeeded', 'declined', 'refunded'));
CREATE INDEX payments_tenant ON payments (organization_id, environment, created_at DESC);
CREATE INDEX payments_group ON payments (group_id);

-- One-time views of a secret the partner portal has just made (PORTAL-46): a new or rolled API key, a webhook
-- endpoint's signing secret, two-factor recovery codes. The form's POST keeps the secret here, sealed under the data
-- key (SEC-2's scheme) and bound to the session that made it, and redirects (303) to its page, which takes it: the
-- row is deleted as it is read, so a reload, Back or another session finds nothing and shows that it was shown
-- already. A view not taken within minutes expires (the daily purge deletes it, OPS-3).
CREATE TABLE portal_secret_views (
  id           text PRIMARY KEY,
  session_hash text NOT NULL REFERENCES portal_sessions(id_hash),
  kind         text NOT NULL CHECK (kind IN ('api_key', 'webhook_secret', 'recovery_codes')),
  sealed       text NOT NULL,
  expires_at   timestamptz NOT NULL
);
CREATE INDEX portal_secret_views_expiry ON portal_secret_views (expires_at);

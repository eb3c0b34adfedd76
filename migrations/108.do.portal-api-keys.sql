-- API keys managed by members in the partner portal (PORTAL-11, PORTAL-12): a key's name, the expiry a roll gives
-- the key it replaces (0 to 7 days later), and when a key last authenticated a request. Last use is kept apart from
-- api_keys so that noting it changes no key row: it announces nothing on api_key_changed (AUTH-12).
ALTER TABLE api_keys ADD COLUMN name text NOT NULL DEFAULT '' CHECK (length(name) <= 100);
ALTER TABLE api_keys ADD COLUMN expires_at timestamptz;

CREATE TABLE api_key_uses (
  api_key_id   text PRIMARY KEY REFERENCES api_keys(id),
  last_used_at timestamptz NOT NULL
);

-- API keys carry a checksum (AUTH-3, AUTH-14): a key is `sk_live_`/`sk_test_`, 32 random bytes in base64url and the
-- CRC32 of those in base62, so a process refuses a made-up key without reading the database. Keys issued before have
-- no checksum and keep working: every process keeps the hashes of the active ones in memory (read through the
-- partial index below) and looks up a key without a checksum only when its hash is among them.
--
-- `checksummed` is false for every existing row, and stays false by default, so a key inserted by a process of the
-- previous version during a rolling deploy counts as one without a checksum too; such an insert tells every process
-- to read those hashes again (NOTIFY api_key_changed '*', as migration 021's trigger does for a TRUNCATE).
ALTER TABLE api_keys ADD COLUMN checksummed boolean NOT NULL DEFAULT false;

CREATE INDEX api_keys_unchecked ON api_keys (key_hash) WHERE NOT checksummed AND revoked_at IS NULL;

CREATE FUNCTION notify_unchecked_api_key() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('api_key_changed', '*');
  RETURN NULL;
END
$$;

CREATE TRIGGER api_keys_notify_unchecked_insert AFTER INSERT ON api_keys
  FOR EACH ROW WHEN (NOT NEW.checksummed) EXECUTE FUNCTION notify_unchecked_api_key();

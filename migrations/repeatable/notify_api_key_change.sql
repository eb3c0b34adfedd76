-- Every process keeps the API keys it has seen in memory (AUTH-12). A change to a key row (revocation, or anything
-- else) is told to every process at commit through NOTIFY api_key_changed with the key's hash as the payload, so a
-- revoked key is refused everywhere at once; a TRUNCATE tells them to forget every key ('*').
CREATE OR REPLACE FUNCTION notify_api_key_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_LEVEL = 'STATEMENT' THEN
    PERFORM pg_notify('api_key_changed', '*');
  ELSE
    PERFORM pg_notify('api_key_changed', OLD.key_hash);
  END IF;
  RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER api_keys_notify_change AFTER UPDATE OR DELETE ON api_keys
  FOR EACH ROW EXECUTE FUNCTION notify_api_key_change();
CREATE OR REPLACE TRIGGER api_keys_notify_truncate AFTER TRUNCATE ON api_keys
  FOR EACH STATEMENT EXECUTE FUNCTION notify_api_key_change();

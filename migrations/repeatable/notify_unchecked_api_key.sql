-- A key without a checksum inserted (by a process of a version before keys carried one) tells every process to read
-- the hashes of the active unchecksummed keys again (AUTH-3, AUTH-14): NOTIFY api_key_changed '*'. Keys inserted with
-- a checksum notify nothing.
CREATE OR REPLACE FUNCTION notify_unchecked_api_key() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('api_key_changed', '*');
  RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER api_keys_notify_unchecked_insert AFTER INSERT ON api_keys
  FOR EACH ROW WHEN (NOT NEW.checksummed) EXECUTE FUNCTION notify_unchecked_api_key();

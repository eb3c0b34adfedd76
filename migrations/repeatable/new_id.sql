-- new_id(prefix): an id generated inside a statement, for rows whose number only the database knows (one webhook
-- delivery per subscribed endpoint of each event, written by the INSERT ... SELECT that finds the endpoints). Same
-- shape as the application's ids (src/lib/ids.ts): prefix, '_', a lower-case Crockford ULID (48 bits of milliseconds,
-- then 80 random bits), so they sort by time with every other id of the kind.
CREATE OR REPLACE FUNCTION new_id(prefix text) RETURNS text
LANGUAGE plpgsql VOLATILE PARALLEL SAFE AS $$
DECLARE
  alphabet constant text := '0123456789abcdefghjkmnpqrstvwxyz';
  ms bigint := floor(extract(epoch FROM clock_timestamp()) * 1000);
  -- Bytes 0-5 and 12-15 of a version-4 UUID carry no fixed version or variant bits: 80 random bits.
  u bytea := uuid_send(gen_random_uuid());
  bits bit(80) := ('x' || encode(substring(u FROM 1 FOR 6) || substring(u FROM 13 FOR 4), 'hex'))::bit(80);
  out text := prefix || '_';
  i int;
BEGIN
  FOR i IN REVERSE 9..0 LOOP
    out := out || substr(alphabet, ((ms >> (5 * i)) & 31)::int + 1, 1);
  END LOOP;
  FOR i IN 0..15 LOOP
    out := out || substr(alphabet, substring(bits FROM 5 * i + 1 FOR 5)::int + 1, 1);
  END LOOP;
  RETURN out;
END
$$;

-- ids_after(prefix, after, n): n new ids of `prefix` in ascending order, all sorting after `after` (NULL: no lower
-- bound), so the ledger entries one posting writes sort after every earlier entry of the tenant (BILL-17; the
-- balance row keeps the newest entry's id). The first is a fresh new_id unless that would not sort after `after`,
-- in which case it is `after` plus one in its last base-32 digit; each next id is the previous plus one. Byte order
-- ("C" collation) and the column's order agree for these ids.
CREATE OR REPLACE FUNCTION ids_after(prefix text, after text, n int) RETURNS text[]
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  alphabet constant text := '0123456789abcdefghjkmnpqrstvwxyz';
  cur text := new_id(prefix);
  out text[] := '{}';
  i int;
  pos int;
  digit int;
BEGIN
  IF after IS NOT NULL AND cur COLLATE "C" <= after COLLATE "C" THEN
    cur := after;
    i := 0;
  ELSE
    out := array_append(out, cur);
    i := 1;
  END IF;
  WHILE i < n LOOP
    pos := length(cur);
    LOOP
      digit := strpos(alphabet, substr(cur, pos, 1)) - 1;
      IF digit < 31 THEN
        cur := overlay(cur PLACING substr(alphabet, digit + 2, 1) FROM pos FOR 1);
        EXIT;
      END IF;
      cur := overlay(cur PLACING '0' FROM pos FOR 1);
      pos := pos - 1;
      IF pos <= length(prefix) + 1 THEN
        RAISE EXCEPTION 'ids_after: no id of % sorts after %', prefix, after;
      END IF;
    END LOOP;
    out := array_append(out, cur);
    i := i + 1;
  END LOOP;
  RETURN out;
END
$$;
